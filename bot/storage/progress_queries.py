"""Reads behind the progress charts and a member's own numbers (``ProgressReads``): answer
times, settled points, cards, group members, answers, streaks, abilities."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.progress.ports import StreakRow
from bot.storage import estimates, scores
from bot.storage.models import (
    Answer,
    ChallengeProgress,
    Channel,
    GroupMember,
    Member,
    Post,
    SrsCard,
    Streak,
)
from bot.storage.visibility import on_open_question

__all__ = ["StoredProgressReads", "on_open_question"]  # on_open_question: for its older importers


async def answer_times(session: AsyncSession, member_ids: list[int], since: datetime) -> list[tuple[int, datetime]]:
    rows = await session.execute(
        select(Answer.member_id, Answer.answered_at)
        .where(Answer.member_id.in_(member_ids), Answer.answered_at >= since)
    )
    return [(m, t) for m, t in rows]


async def settled_points(
    session: AsyncSession, member_ids: list[int], since: datetime | None, *,
    channel_id: int | None = None, workspace_id: int | None = None,
) -> list[tuple[int, datetime, int]]:
    """Points of answers whose post is revealed (an open question shows nothing on a board),
    and beyond a channel the first challenge solves, as the boards count them."""
    query = (
        select(Answer.member_id, Answer.answered_at, Answer.points)
        .where(Answer.member_id.in_(member_ids), Answer.points > 0, ~on_open_question())
    )
    if since is not None:
        query = query.where(Answer.answered_at >= since)
    if channel_id is not None:
        query = query.where(Answer.channel_id == channel_id)
    if workspace_id is not None:
        query = query.where(Answer.workspace_id == workspace_id)
    events = [(m, t, p) for m, t, p in await session.execute(query)]
    if workspace_id is not None and channel_id is None:  # boards beyond a channel: solves too
        solves = select(ChallengeProgress.member_id, ChallengeProgress.solved_at, ChallengeProgress.points).where(
            ChallengeProgress.member_id.in_(member_ids), ChallengeProgress.workspace_id == workspace_id,
            ChallengeProgress.solved_at.is_not(None), ChallengeProgress.points > 0)
        if since is not None:
            solves = solves.where(ChallengeProgress.solved_at >= since)
        events += [(m, t, p) for m, t, p in await session.execute(solves)]
    return events


async def cards_of(session: AsyncSession, member_id: int) -> list[tuple[str, str]]:
    rows = await session.execute(select(SrsCard.question_id, SrsCard.state).where(SrsCard.member_id == member_id))
    return [(q, s) for q, s in rows]


async def topic_accuracy(
    session: AsyncSession, *, member_ids: list[int] | None = None, channel_id: int | None = None
) -> dict[str, float]:
    query = (
        select(Answer.topic, func.sum(case((Answer.correct, 1), else_=0)), func.count())
        .where(~on_open_question())  # an open question's picks are nobody's business yet
        .group_by(Answer.topic)
    )
    if member_ids is not None:
        query = query.where(Answer.member_id.in_(member_ids))
    if channel_id is not None:
        query = query.where(Answer.channel_id == channel_id)
    return {topic: int(c or 0) / n for topic, c, n in await session.execute(query) if n}


async def group_members(session: AsyncSession, group_id: int) -> list[tuple[int, str]]:
    rows = await session.execute(
        select(Member.id, Member.display_name)
        .join(GroupMember, GroupMember.member_id == Member.id)
        .where(GroupMember.group_id == group_id)
        .order_by(Member.display_name)
    )
    return [(i, n) for i, n in rows]


async def names_of(session: AsyncSession, member_ids: list[int]) -> dict[int, str]:
    rows = await session.execute(select(Member.id, Member.display_name).where(Member.id.in_(member_ids)))
    return dict(rows.tuples().all())


async def member_answers(session: AsyncSession, member_id: int) -> list[tuple[str, str, bool, bool]]:
    rows = await session.execute(
        select(Answer.question_id, Answer.topic, Answer.correct, on_open_question())
        .where(Answer.member_id == member_id)
        .order_by(Answer.answered_at, Answer.id)
    )
    return [(q, t, c, o) for q, t, c, o in rows.tuples()]


async def member_topic_accuracy(session: AsyncSession, member_id: int) -> dict[str, tuple[float, int]]:
    rows = await session.execute(
        select(Answer.topic, func.sum(case((Answer.correct, 1), else_=0)), func.count())
        .where(Answer.member_id == member_id, ~on_open_question())
        .group_by(Answer.topic)
    )
    return {topic: (int(c or 0) / n, n) for topic, c, n in rows}


def streak_row(row: Streak) -> StreakRow:
    return StreakRow(row.member_id, row.channel_id, row.current, row.best, row.freezes, row.freezes_used,
                     row.week_of, row.week_answers, row.week_done)


async def streak_of(session: AsyncSession, member_id: int, channel_id: int) -> StreakRow | None:
    row = await session.get(Streak, (member_id, channel_id))
    return None if row is None else streak_row(row)


async def streaks_of(session: AsyncSession, member_id: int,
                     channel_id: int | None) -> list[tuple[StreakRow, int | None, str | None]]:
    rows = await session.execute(
        select(Streak, Channel.streak_per_week, Channel.timezone)
        .join(Channel, Channel.id == Streak.channel_id)
        .where(Streak.member_id == member_id,
               *([Streak.channel_id == channel_id] if channel_id is not None else [])))
    return [(streak_row(k), per_week, tz) for k, per_week, tz in rows.tuples()]


async def weekly_channel(session: AsyncSession, member_id: int,
                         channel_id: int | None) -> list[tuple[int, int | None, str | None]]:
    answered_in = select(Answer.channel_id).where(Answer.member_id == member_id).distinct()
    rows = await session.execute(
        select(Channel.id, Channel.streak_per_week, Channel.timezone).where(
            Channel.streak_per_week.is_not(None),
            Channel.id == channel_id if channel_id is not None else Channel.id.in_(answered_in))
        .order_by(Channel.id).limit(1))
    return [(c, per_week, tz) for c, per_week, tz in rows.tuples()]


async def week_answers(session: AsyncSession, member_id: int, channel_pk: int, monday: date) -> int:
    """The member's answers to the channel's daily questions of the week starting ``monday``
    (right or wrong, revealed or not: weekly mode counts answering)."""
    return int(await session.scalar(
        select(func.count()).select_from(Answer).join(Post, Post.id == Answer.post_id)
        .where(Answer.member_id == member_id, Post.channel_id == channel_pk, Post.kind == "daily",
               Post.local_date >= monday, Post.local_date < monday + timedelta(days=7))) or 0)


class StoredProgressReads:
    """``ProgressReads`` (bot.core.progress.ports): the reads above and the board rows of
    ``bot.storage.scores``, each in the caller's transaction."""

    top = staticmethod(scores.top)
    rank_of = staticmethod(scores.rank_of)
    settled_points = staticmethod(settled_points)
    answer_times = staticmethod(answer_times)
    topic_accuracy = staticmethod(topic_accuracy)
    group_members = staticmethod(group_members)
    cards_of = staticmethod(cards_of)
    member_answers = staticmethod(member_answers)
    member_topic_accuracy = staticmethod(member_topic_accuracy)
    streaks_of = staticmethod(streaks_of)
    weekly_channel = staticmethod(weekly_channel)
    week_answers = staticmethod(week_answers)
    abilities = staticmethod(estimates.read_abilities)
