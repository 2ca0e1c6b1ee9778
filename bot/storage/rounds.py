"""Queries of live rounds: the one running in a channel, standings, and closing leftovers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Answer, Member, Post, Round


@dataclass(frozen=True)
class Standing:
    name: str
    points: int
    correct: int


async def running_round(session: AsyncSession, channel_id: int) -> int | None:
    return await session.scalar(
        select(Round.id).where(Round.channel_id == channel_id, Round.finished_at.is_(None))
    )


async def standings(session: AsyncSession, round_id: int, limit: int) -> list[Standing]:
    """Points then the earliest answer first, as the final standings rank them."""
    rows = (
        await session.execute(
            select(
                Member.display_name,
                func.sum(Answer.points),
                func.sum(case((Answer.correct, 1), else_=0)),
            )
            .join(Post, Post.id == Answer.post_id)
            .join(Member, Member.id == Answer.member_id)
            .where(Post.round_id == round_id)
            .group_by(Member.id, Member.display_name)
            .order_by(func.sum(Answer.points).desc(), func.min(Answer.answered_at))
            .limit(limit)
        )
    ).all()
    return [Standing(name, int(points or 0), int(correct or 0)) for name, points, correct in rows]


async def finish(session: AsyncSession, round_id: int, now: datetime) -> None:
    await session.execute(
        update(Round).where(Round.id == round_id, Round.finished_at.is_(None)).values(finished_at=now)
    )


async def finish_all_open(session: AsyncSession, now: datetime) -> None:
    """After a crash: no round is still playing, so none may stay open."""
    await session.execute(update(Round).where(Round.finished_at.is_(None)).values(finished_at=now))
