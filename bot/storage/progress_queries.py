"""Reads behind the progress charts: answer times, settled points, cards, group members."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Answer, ChallengeProgress, GroupMember, Member, Post, SrsCard


def on_open_question() -> ColumnElement[bool]:
    """The answer belongs to a channel question not revealed yet: its pick stays private."""
    open_posts = select(Post.id).where(Post.closed_at.is_(None), Post.channel_id.is_not(None))
    return Answer.post_id.in_(open_posts)


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
