"""What each channel was served, behind bot.core.drill.selection's ``ServedLog``, in the
caller's transaction."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Served
from bot.storage.upsert import dialect_insert


class StoredServed:
    """``ServedLog``: the same three statements ``next_for_channel`` always ran."""

    async def latest_cycle(self, session: AsyncSession, channel_id: int, pool_key: str) -> tuple[int, set[str]]:
        cycle = await session.scalar(
            select(func.max(Served.cycle)).where(Served.channel_id == channel_id, Served.pool == pool_key)
        )
        cycle = cycle or 0
        seen = set(
            await session.scalars(
                select(Served.question_id).where(
                    Served.channel_id == channel_id, Served.pool == pool_key, Served.cycle == cycle
                )
            )
        )
        return cycle, seen

    async def mark(self, session: AsyncSession, channel_id: int, pool_key: str, cycle: int,
                   question_id: str) -> None:
        await session.execute(
            dialect_insert(session, Served)
            .values(channel_id=channel_id, pool=pool_key, cycle=cycle, question_id=question_id)
            .on_conflict_do_nothing()
        )
