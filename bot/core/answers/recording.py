"""Recording answers: the first answer per member per post counts, exactly once.

The unique (post, member) constraint plus insert-on-conflict-do-nothing makes double clicks,
retries and races between replicas record one answer; the loser is told what they chose.
Everything else an answer changes (its card, the post's kept count) is written in the same
transaction (SQLite) or the same statement (PostgreSQL) and only when the answer was recorded,
so it too happens exactly once. The ability and difficulty estimates move when the answer is
revealed: a private post's at once, in this transaction; a channel post's at its reveal.

Storage comes in through ``AnswerStores`` (``bot.core.answers.ports``), built once by the
wiring; the transaction is opaque here (an ORM session, or a raw click's: ``ClickStore``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from fsrs import Rating

from bot.core.answers.ports import AnswerStores, ClickState, ClickStore, Snapshots
from bot.core.content.bank import Kind, Library, Question
from bot.core.content.community import is_community_id
from bot.core.domain.clock import Clock, as_utc
from bot.core.domain.identity import Who
from bot.core.domain.kinds import PostKind
from bot.core.domain.messages import Message
from bot.core.domain.scoring import StreakLine, points_for
from bot.core.progress import srs
from bot.core.progress.ports import StreakRow
from bot.core.progress.stats import weekly_line
from bot.core.render.answers import already_answered, answer_feedback, flashcard_answer
from bot.core.render.notices import closed_message, notice
from bot.core.render.questions import GRADE_LABELS
from bot.core.reveal.posts import (
    CHANNEL_KINDS,
    PostLike,
    PostSnapshot,
    QuestionGoneError,
    closes_text,
    is_closed,
    order_of,
    question_of,
    snapshot_view,
    window,
)
from bot.core.stores import MemberRef, Tx


@dataclass
class Outcome:
    """What an adapter does after an interaction: reply privately, maybe refresh the public post."""

    reply: Message
    post_id: int | None = None
    public: Message | None = None  # new public view (answer count) for channel posts
    platform_ref: str | None = None
    recorded: bool = False
    moved: bool = False  # the member's stored estimates moved (a private answer, revealed at once)


@dataclass
class _Loaded:
    post: PostSnapshot
    question: Question
    member: MemberRef
    before: ClickState | None  # None: the post came from this process's cache, the rest is unread


# PostgreSQL raw clicks (``ClickStore.snapshots``) keep the snapshots of open channel posts for a
# short while: a second member's click then needs one round trip. Only fields that never change
# on an open post are relied on; a post closed meanwhile is refused by the write itself.
SNAPSHOT_TTL_S = 60.0
SNAPSHOTS_KEPT = 10_000


def _cached(cache: Snapshots | None, post_id: int) -> PostSnapshot | None:
    hit = cache.get(post_id) if cache is not None else None
    return hit[1] if hit is not None and hit[0] > time.monotonic() else None


def _remember(cache: Snapshots | None, post: PostSnapshot) -> None:
    open_channel_post = post.kind in CHANNEL_KINDS and post.quiz_id is None and post.member_id is None
    if cache is None or not open_channel_post or post.closed_at is not None or post.platform_ref is None:
        return
    if len(cache) >= SNAPSHOTS_KEPT:
        cache.clear()
    cache[post.id] = (time.monotonic() + SNAPSHOT_TTL_S, post)


def forget_channel(cache: dict[int, Any], channel_id: int) -> None:
    """A channel's setting in the snapshots changed (its timezone): its posts are read again."""
    for post_id in [pid for pid, (_, snap) in cache.items() if snap.channel_id == channel_id]:
        cache.pop(post_id, None)


async def _load(
    clicks: ClickStore, session: Tx, library: Library, clock: Clock, who: Who, post_id: int
) -> _Loaded | Outcome:
    member = await clicks.member(session, who, clock)
    cache = clicks.snapshots(session)
    post = _cached(cache, post_id)
    before: ClickState | None = None  # the member's card and streak, the answer count: not read for a cached post
    if post is None:
        before = await clicks.click_state(session, post_id, member.id)
        if before is None:
            return Outcome(notice("This question no longer exists."))
        post = before.post
    try:
        question = question_of(library, post)
    except QuestionGoneError:
        if is_community_id(post.question_id):
            raise  # perhaps uploaded through another replica: the drill reloads and retries
        return Outcome(notice("This question was removed from the question banks."), post_id)
    if post.member_id is not None and post.member_id != member.id:
        return Outcome(
            notice("This question belongs to someone else's quiz. Start your own with /quiz."),
            post_id,
        )
    if before is not None:
        _remember(cache, post)
    return _Loaded(post, question, member, before)


def _elapsed_ms(post: PostLike, now: datetime) -> int:
    return max(0, int((now - as_utc(post.opened_at)).total_seconds() * 1000))


def _answer_row(
    post: PostLike, question: Question, member: MemberRef, now: datetime,
    *, choice: int, correct: bool, points: int,
) -> dict[str, Any]:
    return dict(
        post_id=post.id,
        member_id=member.id,
        workspace_id=member.workspace_id,
        channel_id=post.channel_id,
        question_id=question.id,
        topic=question.topic,
        choice=choice,
        correct=correct,
        points=points,
        response_ms=_elapsed_ms(post, now),
        answered_at=now,
    )


async def _refused(
    clicks: ClickStore, session: Tx, values: dict[str, Any], question: Question, order: list[int]
) -> Outcome:
    """The insert recorded nothing: the member got there first (double click, race), or the
    post was revealed in the meantime."""
    existing = await clicks.choice_of(session, values["post_id"], values["member_id"])
    if existing is None:
        return Outcome(closed_message(), values["post_id"])
    return Outcome(already_answered(question, order, existing, question.kind), values["post_id"])


async def _record_once(
    clicks: ClickStore, session: Tx, values: dict[str, Any], question: Question, order: list[int]
) -> Outcome | None:
    """Insert the answer; if it did not count, say why."""
    if await clicks.record_answer(session, values) is not None:
        return None
    return await _refused(clicks, session, values, question, order)


async def record_pick(
    stores: AnswerStores, session: Tx, library: Library, clock: Clock, who: Who, post_id: int,
    position: int,
) -> Outcome:
    clicks = stores.clicks
    loaded = await _load(clicks, session, library, clock, who, post_id)
    if isinstance(loaded, Outcome):
        return loaded
    post, question, member = loaded.post, loaded.question, loaded.member
    order = order_of(post)
    if question.kind is not Kind.MCQ or not 0 <= position < len(order):
        return Outcome(notice("That button does not match this question."), post_id)

    now = clock.now()
    if is_closed(post, now):
        existing = await clicks.choice_of(session, post.id, member.id)
        if existing is not None:
            return Outcome(already_answered(question, order, existing, question.kind), post_id)
        return Outcome(closed_message(), post_id)

    channel_post = post.kind in CHANNEL_KINDS
    original = order[position]
    correct = original == question.answer_index
    bonus = post.kind == PostKind.ROUND or post.speed_bonus
    points = points_for(
        kind=post.kind,
        correct=correct,
        difficulty=question.difficulty,
        response_ms=_elapsed_ms(post, now),
        window_ms=int(window(post).total_seconds() * 1000),
        bonus=bonus,
    )
    values = _answer_row(post, question, member, now, choice=original, correct=correct, points=points)
    next_card = partial(srs.next_card, member.id, question.id, rating=srs.rating_for(correct), when=now)
    # a private post, a quiz, or a weekly-mode daily post (it reads the member's week after the
    # write) needs more of the transaction than the write
    simple = channel_post and post.quiz_id is None and not post.streak_per_week
    recorded = await clicks.record_pick(session, values, next_card, loaded.before, simple=simple)
    if recorded.answer_id is None:
        return await _refused(clicks, session, values, question, order)

    if not channel_post:
        await clicks.close(session, post.id, now)
        await clicks.apply_revealed(session, post.id, question, now)  # the member sees the result now
        post = replace(post, closed_at=now)
    streak = None
    if post.kind == PostKind.DAILY and post.channel_id is not None:
        if post.streak_per_week:  # weekly mode: any answer counts towards the week
            streak = await _weekly_line(stores, session, member.id, post)
        elif correct:
            streak = StreakLine((recorded.streak or 0) + 1, 0)
    from bot.core.quizzes.sequence import after_answer  # local: quizzes imports this module

    reply = answer_feedback(
        question,
        order,
        original,
        correct=correct,
        points=points,
        reveal_now=not channel_post,
        hide_result=post.kind == PostKind.ROUND,
        closes=closes_text(post, post.channel_tz),
        streak=streak,
    )
    if post.quiz_id is not None:
        await after_answer(stores.quizzes, session, post, reply)
    public = snapshot_view(library, post, answered=recorded.answered) if channel_post else None
    return Outcome(reply, post.id, public, post.platform_ref, recorded=True, moved=not channel_post)


async def _weekly_line(stores: AnswerStores, session: Tx, member_id: int, post: PostSnapshot) -> StreakLine:
    """The weekly streak this answer makes (its post's week, in the channel's timezone)."""
    assert post.channel_id is not None and post.streak_per_week is not None
    row = await stores.clicks.streak(session, member_id, post.channel_id) or StreakRow(member_id, post.channel_id)
    return await weekly_line(stores.progress, session, row, post.streak_per_week, post.channel_tz,
                             as_utc(post.opened_at))


async def show_answer(
    stores: AnswerStores, session: Tx, library: Library, clock: Clock, who: Who, post_id: int
) -> Outcome:
    loaded = await _load(stores.clicks, session, library, clock, who, post_id)
    if isinstance(loaded, Outcome):
        return loaded
    if loaded.question.kind is Kind.MCQ:
        return Outcome(notice("Pick one of the choices to answer this question."), post_id)
    return Outcome(flashcard_answer(post_id, loaded.question), post_id)


async def record_grade(
    stores: AnswerStores, session: Tx, library: Library, clock: Clock, who: Who, post_id: int, grade: int
) -> Outcome:
    """A self-graded flashcard: the member's rating drives FSRS directly."""
    clicks = stores.clicks
    loaded = await _load(clicks, session, library, clock, who, post_id)
    if isinstance(loaded, Outcome):
        return loaded
    post, question, member = loaded.post, loaded.question, loaded.member
    if question.kind is Kind.MCQ or grade not in {r.value for r in Rating}:
        return Outcome(notice("That button does not match this question."), post_id)
    now = clock.now()
    values = _answer_row(post, question, member, now, choice=grade, correct=grade >= Rating.Good, points=0)
    refused = await _record_once(clicks, session, values, question, [])
    if refused is not None:
        return refused
    due = await srs.review(stores.cards, session, member.id, question.id, Rating(grade), now)
    await clicks.close(session, post.id, now)
    post = replace(post, closed_at=now)
    label = GRADE_LABELS[grade]
    reply = notice(f"Saved: **{label}**. You will see this card again {_in_words(due - now)}.")
    if post.quiz_id is not None:
        from bot.core.quizzes.sequence import after_answer

        await after_answer(stores.quizzes, session, post, reply)
    return Outcome(reply, post.id, recorded=True)


def _in_words(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 3600:
        return f"in {max(1, seconds // 60)} min"
    if seconds < 86400 * 2:
        return f"in {seconds // 3600} h"
    return f"in {seconds // 86400} days"
