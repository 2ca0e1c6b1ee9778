"""Posts: a question delivered somewhere, its public view, and its reveal (results + streaks).

The rules live here; every read and write goes through the ports of ``bot.core.reveal.ports``
(``PostStore``, ``RevealStore``), inside the caller's transaction.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.content.bank import Kind, Library, Question
from bot.core.domain.clock import Clock, as_utc
from bot.core.domain.kinds import CHANNEL_KINDS, PostKind
from bot.core.domain.messages import Message
from bot.core.domain.scoring import StreakState, monday_of, settle_streak, settle_week
from bot.core.drill.selection import shuffled_order
from bot.core.render.questions import question_message
from bot.core.render.reveals import RevealFacts, reveal_message
from bot.core.reveal.ports import (
    PostLike,
    PostSnapshot,
    PostStore,
    RevealedPost,
    RevealStore,
    StreakFields,
)
from bot.core.stores import Tx

__all__ = [
    "CHANNEL_KINDS", "PostLike", "PostSnapshot", "QuestionGoneError", "Revealed", "closes_text",
    "create_post", "is_closed", "order_of", "public_view", "question_of", "reveal",
    "snapshot_view", "window",
]


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
    store: PostStore,
    tx: Tx,
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
) -> PostLike:
    """A new post of ``question``, its choices shuffled once for every view."""
    order = shuffled_order(question, rng) if question.kind is Kind.MCQ else []
    return await store.add(
        tx, kind=kind, question_id=question.id, choice_order=",".join(map(str, order)),
        opened_at=now, channel_id=channel_id, member_id=member_id, closes_at=closes_at,
        round_id=round_id, quiz_id=quiz_id, local_date=local_date,
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


def snapshot_view(library: Library, snap: PostSnapshot, *, answered: int) -> Message:
    """The message everyone sees before the reveal: the question and how many answered."""
    return question_message(
        snap.id,
        question_of(library, snap),
        order_of(snap),
        kind=snap.kind,
        answered=answered,
        closes=closes_text(snap, snap.channel_tz),
    )


async def public_view(store: PostStore, tx: Tx, library: Library, post: PostLike, *,
                      answered: int | None = None) -> Message:
    """``answered``: the count when the caller knows it (a post created just now has none)."""
    snap = await store.snapshot(tx, post.id)
    if snap is None:
        raise LookupError(f"post {post.id} does not exist")
    if answered is None:
        answered = await store.answer_count(tx, snap.id)
    return snapshot_view(library, snap, answered=answered)


async def reveal_facts(store: RevealStore, tx: Tx, post: PostLike, question: Question) -> RevealFacts:
    order = order_of(post)
    by_choice = await store.choice_counts(tx, post.id)
    counts = [by_choice.get(orig, 0) for orig in order]
    fastest = await store.fastest_correct(tx, post.id)
    total = sum(by_choice.values())
    correct = by_choice.get(question.answer_index, 0) if question.kind is Kind.MCQ else 0
    return RevealFacts(counts, total, correct, fastest)


async def settle_streaks(store: RevealStore, tx: Tx, post: RevealedPost) -> None:
    """Update every affected member's streak in the channel, once per post (``reveal`` marks
    the post settled in the same transaction): daily, or weekly where the channel asks for it."""
    if post.settled or post.kind != PostKind.DAILY or post.channel_id is None:
        return
    per_week = await store.streak_per_week(tx, post.channel_id)
    rows = await store.streaks(tx, post.channel_id)
    if per_week:
        news = await _settled_weeks(store, tx, post, post.channel_id, rows, per_week)
    else:
        news = await _settled_days(store, tx, post, post.channel_id, rows)
    await store.save_streaks(tx, post.channel_id, rows, news)


def _state(row: StreakFields | None) -> StreakState:
    if row is None:
        return StreakState()
    return StreakState(row.current, row.best, row.last_post_id, row.freezes or 0, row.freezes_used or 0,
                       row.week_of, row.week_answers or 0, bool(row.week_done))


async def _settled_days(store: RevealStore, tx: Tx, post: RevealedPost, channel_id: int,
                        rows: dict[int, StreakFields]) -> dict[int, StreakState]:
    previous_id = await store.previous_daily(tx, channel_id, post.id)
    answers = await store.answers(tx, post.id)
    return {
        member_id: settle_streak(
            _state(rows.get(member_id)), post_id=post.id, previous_post_id=previous_id,
            correct=bool(answers.get(member_id)), missed=member_id not in answers,
        )
        for member_id in set(answers) | {m for m, r in rows.items() if r.current > 0}
    }


async def _settled_weeks(store: RevealStore, tx: Tx, post: RevealedPost, channel_id: int,
                         rows: dict[int, StreakFields], per_week: int) -> dict[int, StreakState]:
    """Weekly mode: the members who answered this post or hold a streak, each settled on their
    answers to this week's daily questions (``scoring.settle_week``)."""
    day = post.local_date or as_utc(post.opened_at).date()
    week = monday_of(day)
    answered_now = set(await store.answers(tx, post.id))
    members = answered_now | {m for m, r in rows.items() if r.current > 0}
    seen = [w for m in members if m in rows and (w := rows[m].week_of) is not None]
    since = min([week, *seen])
    posts: dict[date, int] = {}
    for local_date in await store.daily_dates(tx, channel_id, since, week + timedelta(days=7)):
        if local_date is not None:
            posts[monday_of(local_date)] = posts.get(monday_of(local_date), 0) + 1
    counts = await store.daily_answer_counts(tx, channel_id, week, week + timedelta(days=7))
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


async def reveal(store: RevealStore, tx: Tx, library: Library, clock: Clock, post_id: int) -> Revealed:
    """Close a post and publish its results; safe to call again (same results, no re-settling)."""
    post = await store.claim(tx, post_id)
    if post is None:
        raise LookupError(f"post {post_id} does not exist")
    first_time = post.closed_at is None or not post.settled
    if post.closed_at is None:
        await store.close(tx, post, clock.now())  # its points reach the boards now
    question = question_of(library, post)
    if not post.settled and post.kind in CHANNEL_KINDS:  # once: the settling write holds the row lock
        await store.apply_estimates(tx, post.id, question, clock.now())
    await settle_streaks(store, tx, post)
    await store.mark_settled(tx, post)
    facts = await reveal_facts(store, tx, post, question)
    message = reveal_message(post.id, question, order_of(post), facts, kind=post.kind)
    return Revealed(message, post.platform_ref, first_time)


def window(post: PostLike, default: timedelta = timedelta(hours=12)) -> timedelta:
    if post.closes_at is None:
        return default
    return as_utc(post.closes_at) - as_utc(post.opened_at)
