"""Posts: a question delivered somewhere, its public view, and its reveal (results + streaks)."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Kind, Library, Question
from bot.core.domain.clock import Clock, as_utc
from bot.core.domain.kinds import CHANNEL_KINDS, PostKind
from bot.core.domain.messages import Message
from bot.core.domain.scoring import StreakState, monday_of, settle_streak, settle_week
from bot.core.drill.selection import shuffled_order
from bot.core.render.questions import question_message
from bot.core.render.reveals import RevealFacts, reveal_message
from bot.storage.db import core_connection
from bot.storage.estimates import apply_revealed
from bot.storage.models import Answer, Channel, Member, Post, Streak
from bot.storage.scores import credit_post


@dataclass(frozen=True)
class PostSnapshot:
    """A post plus its channel's settings, read in one Core query on the hot answer path."""

    id: int
    kind: str
    question_id: str
    choice_order: str
    channel_id: int | None
    member_id: int | None
    quiz_id: int | None
    opened_at: datetime
    closes_at: datetime | None
    closed_at: datetime | None
    platform_ref: str | None
    channel_tz: str | None
    speed_bonus: bool
    streak_per_week: int | None = None  # the channel's weekly-streak mode (None: daily)


# What the rules read from a post: the ORM row, or the snapshot of the hot answer path.
PostLike = Post | PostSnapshot


_SNAPSHOT_QUERY = (
    select(
        *(Post.__table__.c[f] for f in (
            "id", "kind", "question_id", "choice_order", "channel_id", "member_id", "quiz_id",
            "opened_at", "closes_at", "closed_at", "platform_ref",
        )),
        Channel.__table__.c.timezone.label("channel_tz"),
        Channel.__table__.c.speed_bonus,
        Channel.__table__.c.streak_per_week,
    )
    .select_from(Post.__table__.outerjoin(Channel.__table__, Channel.id == Post.channel_id))
    .where(Post.__table__.c.id == bindparam("post_id"))
)


async def load_snapshot(session: AsyncSession, post_id: int) -> PostSnapshot | None:
    conn = await core_connection(session)
    row = (await conn.execute(_SNAPSHOT_QUERY, {"post_id": post_id})).first()
    if row is None:
        return None
    data = dict(row._mapping)
    data["speed_bonus"] = bool(data["speed_bonus"])
    return PostSnapshot(**data)


class QuestionGoneError(LookupError):
    """A post refers to a question that was removed from the banks."""


def order_of(post: PostLike) -> list[int]:
    return [int(x) for x in post.choice_order.split(",")] if post.choice_order else []


def is_closed(post: PostLike, now: datetime) -> bool:
    if post.closed_at is not None:
        return True
    return post.closes_at is not None and as_utc(post.closes_at) <= now


def question_of(library: Library, post: PostLike) -> Question:
    question = library.get(post.question_id)
    if question is None:
        raise QuestionGoneError(
            f"question {post.question_id!r} is no longer in the question banks"
        )
    return question


async def create_post(
    session: AsyncSession,
    question: Question,
    *,
    kind: str,
    now: datetime,
    channel_id: int | None = None,
    member_id: int | None = None,
    closes_at: datetime | None = None,
    round_id: int | None = None,
    quiz_id: int | None = None,
    local_date: object = None,
    rng: random.Random | None = None,
) -> Post:
    order = shuffled_order(question, rng) if question.kind is Kind.MCQ else []
    post = Post(
        kind=kind,
        question_id=question.id,
        choice_order=",".join(map(str, order)),
        channel_id=channel_id,
        member_id=member_id,
        round_id=round_id,
        quiz_id=quiz_id,
        local_date=local_date,
        opened_at=now,
        closes_at=closes_at,
        settled=False,
    )
    session.add(post)
    await session.flush()
    return post


async def answer_count(session: AsyncSession, post_id: int) -> int:
    conn = await core_connection(session)
    return (await conn.execute(_COUNT_QUERY, {"post_id": post_id})).scalar() or 0


_COUNT_QUERY = (
    select(func.count()).select_from(Answer.__table__).where(Answer.__table__.c.post_id == bindparam("post_id"))
)


def closes_text(post: PostLike, channel_tz: str | None = None) -> str | None:
    return None if post.closes_at is None else _closes_at_text(post.closes_at, channel_tz)


@functools.lru_cache(maxsize=4096)
def _closes_at_text(closes_at: datetime, channel_tz: str | None) -> str:
    """Kept: every click on a post names the same closing time twice (reply and public view)."""
    when = as_utc(closes_at)
    if channel_tz:
        local = when.astimezone(ZoneInfo(channel_tz))
        return f"at {local:%H:%M} {local.tzname()}"
    return f"at {when:%H:%M} UTC"


async def snapshot_view(
    session: AsyncSession, library: Library, snap: PostSnapshot, *, answered: int | None = None
) -> Message:
    """The message everyone sees before the reveal: the question and how many answered."""
    return question_message(
        snap.id,
        question_of(library, snap),
        order_of(snap),
        kind=snap.kind,
        answered=await answer_count(session, snap.id) if answered is None else answered,
        closes=closes_text(snap, snap.channel_tz),
    )


async def public_view(session: AsyncSession, library: Library, post: PostLike, *,
                      answered: int | None = None) -> Message:
    """``answered``: the count when the caller knows it (a post created just now has none)."""
    snap = await load_snapshot(session, post.id)
    if snap is None:
        raise LookupError(f"post {post.id} does not exist")
    return await snapshot_view(session, library, snap, answered=answered)


async def reveal_facts(session: AsyncSession, post: Post, question: Question) -> RevealFacts:
    order = order_of(post)
    by_choice: dict[int, int] = {
        choice: count for choice, count in
        (
            await session.execute(
                select(Answer.choice, func.count()).where(Answer.post_id == post.id).group_by(Answer.choice)
            )
        ).all()
    }
    counts = [by_choice.get(orig, 0) for orig in order]
    fastest_row = (
        await session.execute(
            select(Member.display_name, Answer.response_ms)
            .join(Member, Member.id == Answer.member_id)
            .where(Answer.post_id == post.id, Answer.correct.is_(True))
            .order_by(Answer.response_ms, Answer.id)
            .limit(1)
        )
    ).first()
    total = sum(by_choice.values())
    correct = by_choice.get(question.answer_index, 0) if question.kind is Kind.MCQ else 0
    return RevealFacts(counts, total, correct, tuple(fastest_row) if fastest_row else None)


async def settle_streaks(session: AsyncSession, post: Post) -> None:
    """Update every affected member's streak in the channel, once per post (``reveal`` marks
    the post settled in the same transaction): daily, or weekly where the channel asks for it."""
    if post.settled or post.kind != PostKind.DAILY or post.channel_id is None:
        return
    per_week = await session.scalar(select(Channel.streak_per_week).where(Channel.id == post.channel_id))
    rows = {
        row.member_id: row
        for row in await session.scalars(
            select(Streak).where(Streak.channel_id == post.channel_id)
        )
    }
    if per_week:
        news = await _settled_weeks(session, post, rows, per_week)
    else:
        news = await _settled_days(session, post, rows)
    for member_id, new in news.items():
        row = rows.get(member_id)
        if row is None:
            row = Streak(member_id=member_id, channel_id=post.channel_id)
            session.add(row)
        row.current, row.best, row.last_post_id = new.current, new.best, new.last_post_id
        row.freezes, row.freezes_used = new.freezes, new.freezes_used
        row.week_of, row.week_answers, row.week_done = new.week_of, new.week_answers, new.week_done


def _state(row: Streak | None) -> StreakState:
    if row is None:
        return StreakState()
    return StreakState(row.current, row.best, row.last_post_id, row.freezes or 0, row.freezes_used or 0,
                       row.week_of, row.week_answers or 0, bool(row.week_done))


async def _settled_days(session: AsyncSession, post: Post, rows: dict[int, Streak]) -> dict[int, StreakState]:
    previous_id = await session.scalar(
        select(func.max(Post.id)).where(
            Post.channel_id == post.channel_id, Post.kind == PostKind.DAILY, Post.id < post.id
        )
    )
    answers: dict[int, bool] = {
        member: correct for member, correct in
        (await session.execute(select(Answer.member_id, Answer.correct).where(Answer.post_id == post.id))).all()
    }
    return {
        member_id: settle_streak(
            _state(rows.get(member_id)), post_id=post.id, previous_post_id=previous_id,
            correct=bool(answers.get(member_id)), missed=member_id not in answers,
        )
        for member_id in set(answers) | {m for m, r in rows.items() if r.current > 0}
    }


async def _settled_weeks(session: AsyncSession, post: Post, rows: dict[int, Streak],
                         per_week: int) -> dict[int, StreakState]:
    """Weekly mode: the members who answered this post or hold a streak, each settled on their
    answers to this week's daily questions (``scoring.settle_week``)."""
    day = post.local_date or as_utc(post.opened_at).date()
    week = monday_of(day)
    answered_now = set(await session.scalars(select(Answer.member_id).where(Answer.post_id == post.id)))
    members = answered_now | {m for m, r in rows.items() if r.current > 0}
    seen = [w for m in members if m in rows and (w := rows[m].week_of) is not None]
    since = min([week, *seen])
    posts: dict[date, int] = {}
    for local_date in await session.scalars(select(Post.local_date).where(
            Post.channel_id == post.channel_id, Post.kind == PostKind.DAILY,
            Post.local_date >= since, Post.local_date < week + timedelta(days=7))):
        if local_date is not None:
            posts[monday_of(local_date)] = posts.get(monday_of(local_date), 0) + 1
    counts = dict((await session.execute(
        select(Answer.member_id, func.count()).join(Post, Post.id == Answer.post_id)
        .where(Post.channel_id == post.channel_id, Post.kind == PostKind.DAILY,
               Post.local_date >= week, Post.local_date < week + timedelta(days=7))
        .group_by(Answer.member_id))).tuples().all())
    return {
        member_id: settle_week(_state(rows.get(member_id)), post_id=post.id, week=week,
                               per_week=per_week, answered=counts.get(member_id, 0), posts=posts)
        for member_id in members
    }


@dataclass
class Revealed:
    message: Message
    platform_ref: str | None
    first_time: bool


async def reveal(session: AsyncSession, library: Library, clock: Clock, post_id: int) -> Revealed:
    """Close a post and publish its results; safe to call again (same results, no re-settling)."""
    post = await session.get(Post, post_id, with_for_update=True)
    if post is None:
        raise LookupError(f"post {post_id} does not exist")
    first_time = post.closed_at is None or not post.settled
    if post.closed_at is None:
        post.closed_at = clock.now()
        await credit_post(session, post.id)  # its points reach the boards now
    question = question_of(library, post)
    if not post.settled and post.kind in CHANNEL_KINDS:  # once: the settling write holds the row lock
        await apply_revealed(session, post.id, question, clock.now())
    await settle_streaks(session, post)
    post.settled = True
    facts = await reveal_facts(session, post, question)
    message = reveal_message(post.id, question, order_of(post), facts, kind=post.kind)
    return Revealed(message, post.platform_ref, first_time)


async def due_reveals(session: AsyncSession, now: datetime) -> list[int]:
    """Channel posts whose reveal time has passed but that are not revealed yet."""
    rows = await session.scalars(
        select(Post.id).where(
            Post.kind.in_(CHANNEL_KINDS),
            Post.settled.is_(False),
            Post.closes_at.is_not(None),
            Post.closes_at <= now,
        )
    )
    return list(rows)


def window(post: PostLike, default: timedelta = timedelta(hours=12)) -> timedelta:
    if post.closes_at is None:
        return default
    return as_utc(post.closes_at) - as_utc(post.opened_at)
