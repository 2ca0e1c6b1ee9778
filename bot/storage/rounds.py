"""Live rounds behind bot.core.stores' ``RoundStore``: the one running in a channel,
standings, and closing leftovers."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.clock import Clock
from bot.core.domain.identity import Where, Who
from bot.core.stores import RoundSettings, Standing
from bot.storage.db import Database
from bot.storage.identity import channel_row, member_row
from bot.storage.models import Answer, Member, Post, Round


class StoredRounds:
    """``RoundStore``: each call one transaction, as ``Rounds`` made them before."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db, self.clock = db, clock

    async def start(self, where: Where, who: Who, *, count: int, seconds: int,
                    topic: str | None) -> int | None:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            member = await member_row(session, who, self.clock)
            if await running_round(session, channel.id) is not None:
                return None
            rnd = Round(
                channel_id=channel.id, started_by=member.id, n_questions=count,
                seconds_per_question=seconds, topic=topic, started_at=self.clock.now(),
            )
            session.add(rnd)
            await session.flush()
            return rnd.id

    async def settings(self, round_id: int) -> RoundSettings:
        async with self.db.read() as session:
            rnd = await session.get(Round, round_id)
            assert rnd is not None
            return RoundSettings(rnd.n_questions, rnd.seconds_per_question, rnd.topic)

    async def standings(self, round_id: int, limit: int) -> list[Standing]:
        async with self.db.read() as session:
            return await standings(session, round_id, limit)

    async def finish(self, round_id: int, now: datetime) -> None:
        async with self.db.write() as session:
            await finish(session, round_id, now)

    async def finish_all_open(self, now: datetime) -> None:
        async with self.db.write() as session:
            await finish_all_open(session, now)


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
