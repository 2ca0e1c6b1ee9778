"""The weekly posts' storage (``bot.core.weekly.ports.WeeklyStore``): the weekly claims behind
bot.core.posting's ``ClaimStore`` (``WeeklyClaims``) and what the posts read and mark around
them: the schedules' weekly times, the problems a channel has had, the challenge's solvers.

The claims are read back as ``WeeklyPost`` values, never as rows: the core decides, this
module only reads and writes what it decided, under the same fences as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from datetime import date, datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.daily.schedules import ScheduleView, view_of
from bot.core.domain.clock import as_utc
from bot.core.domain.identity import Where
from bot.core.posting.claims import ClaimStore
from bot.core.weekly.ports import OpenedClaim, WeeklyNatural, WeeklyPost
from bot.storage.claims import WeeklyClaims, rows_changed
from bot.storage.db import Database
from bot.storage.identity import channel_row
from bot.storage.models import ChallengeProgress, Channel, Member, Schedule, WeeklyClaim
from bot.storage.schedules import (
    all_schedules,
    schedule_of,
    schedule_rows_of,
    weekly_claimed_since,
)


def post_of(row: WeeklyClaim) -> WeeklyPost:
    return WeeklyPost(row.id, row.channel_id, row.kind, row.week_start, row.item,
                      as_utc(row.sent_at) if row.sent_at else None,
                      as_utc(row.closed_at) if row.closed_at else None, row.platform_ref)


class StoredWeekly:
    """``WeeklyStore`` on the database; ``claims`` defaults to ``WeeklyClaims``."""

    def __init__(self, db: Database, claims: ClaimStore[WeeklyNatural, int] | None = None) -> None:
        self.db = db
        self.claims: ClaimStore[WeeklyNatural, int] = claims or WeeklyClaims(db)

    def read(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.db.read()

    def write(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.db.write()

    # ---- schedules ---------------------------------------------------------------------------
    async def schedule(self, channel_pk: int) -> ScheduleView | None:
        return await schedule_of(self.db, channel_pk)

    async def schedules(self) -> list[ScheduleView]:
        return await all_schedules(self.db)

    async def schedules_of(self, tx: AsyncSession, channel_pks: Iterable[int]) -> dict[int, ScheduleView]:
        return {r.channel_pk: view_of(r) for r in await schedule_rows_of(tx, channel_pks)}

    async def set_spec(self, where: Where, field: str, spec: str | None, now: datetime) -> int | None:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            done = await session.execute(
                update(Schedule).where(Schedule.channel_id == channel.id)
                .values({field: spec, "updated_at": now}))
            channel_pk = channel.id
        return channel_pk if rows_changed(done) else None

    async def channel_pk(self, where: Where) -> int:
        async with self.db.write() as session:
            return (await channel_row(session, where)).id

    # ---- claims ------------------------------------------------------------------------------
    async def claimed_since(self, first_day: date) -> set[WeeklyNatural]:
        async with self.db.read() as session:
            return await weekly_claimed_since(session, first_day)

    async def claim(self, claim_id: int) -> WeeklyPost | None:
        async with self.db.read() as session:
            row = await session.get(WeeklyClaim, claim_id)
            return None if row is None else post_of(row)

    async def open_claim(self, tx: AsyncSession, claim_id: int, token: str,
                         now: datetime) -> OpenedClaim | None:
        row = await tx.get(WeeklyClaim, claim_id)
        if row is None or row.claimed_by != token or row.sent_at is not None:
            return None
        retry = row.opened_at is not None
        if row.opened_at is None:
            row.opened_at = now
        return OpenedClaim(post_of(row), as_utc(row.opened_at), retry)

    async def used_items(self, tx: AsyncSession, channel_pk: int) -> set[str]:
        return set(await tx.scalars(
            select(WeeklyClaim.item).where(WeeklyClaim.channel_id == channel_pk,
                                           WeeklyClaim.item.is_not(None))))

    async def set_item(self, tx: AsyncSession, claim_id: int, item: str) -> None:
        row = await tx.get(WeeklyClaim, claim_id)
        assert row is not None  # opened in this transaction
        row.item = item

    async def close_in(self, tx: AsyncSession, channel_pk: int, kind: str, week_start: date,
                       now: datetime) -> WeeklyPost | None:
        row = await tx.scalar(select(WeeklyClaim).where(
            WeeklyClaim.channel_id == channel_pk, WeeklyClaim.week_start == week_start,
            WeeklyClaim.kind == kind))
        if row is not None and row.closed_at is None:
            row.closed_at = now
        return None if row is None else post_of(row)

    async def open_posts(self, tx: AsyncSession, kind: str, channel_pk: int | None) -> list[WeeklyPost]:
        query = (select(WeeklyClaim).where(WeeklyClaim.kind == kind, WeeklyClaim.sent_at.is_not(None),
                                           WeeklyClaim.closed_at.is_(None))
                 .order_by(WeeklyClaim.channel_id, WeeklyClaim.week_start))
        if channel_pk is not None:
            query = query.where(WeeklyClaim.channel_id == channel_pk)
        return [post_of(row) for row in (await tx.execute(query)).scalars().all()]

    async def close(self, claim_id: int, now: datetime) -> bool:
        async with self.db.write() as session:
            won = await session.execute(update(WeeklyClaim).where(WeeklyClaim.id == claim_id,
                                                                  WeeklyClaim.closed_at.is_(None))
                                        .values(closed_at=now))
        return bool(rows_changed(won))

    async def current_item(self, where: Where, kind: str) -> str | None:
        channel_pk = await self.channel_pk(where)
        async with self.db.read() as session:
            return await session.scalar(
                select(WeeklyClaim.item).where(WeeklyClaim.channel_id == channel_pk,
                                               WeeklyClaim.kind == kind,
                                               WeeklyClaim.sent_at.is_not(None),
                                               WeeklyClaim.closed_at.is_(None))
                .order_by(WeeklyClaim.week_start.desc()).limit(1))

    # ---- the challenge's solvers -------------------------------------------------------------
    async def solver_names(self, channel_pk: int, item: str | None, since: datetime,
                           until: datetime) -> list[str]:
        async with self.db.read() as session:
            channel = await session.get(Channel, channel_pk)
            assert channel is not None
            names = await session.scalars(
                select(Member.display_name)
                .join(ChallengeProgress, ChallengeProgress.member_id == Member.id)
                .where(ChallengeProgress.challenge_id == item,
                       ChallengeProgress.workspace_id == channel.workspace_id,
                       ChallengeProgress.solved_at >= since,
                       ChallengeProgress.solved_at <= until)
                .order_by(ChallengeProgress.solved_at, Member.id))
            return list(names)
