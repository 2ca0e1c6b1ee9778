"""The claim rows behind bot.core.posting's ``ClaimStore``: daily claims and weekly claims.

Every write is one short transaction and every fenced write names the token it expects, so the
row, not this process's memory, decides who owns a post. A daily claim records its send on the
post row too (its ``platform_ref``), in the same transaction as ``sent_at``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, CursorResult, Result, select, update

from bot.core.daily.ports import DailyKey
from bot.core.domain.clock import as_utc
from bot.core.posting.claims import ClaimState
from bot.core.weekly.ports import WeeklyNatural
from bot.storage.db import Database
from bot.storage.models import DailyClaim, Post, WeeklyClaim
from bot.storage.upsert import dialect_insert


def rows_changed(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE touched (only a cursor result carries the count)."""
    assert isinstance(result, CursorResult)
    return result.rowcount


def _daily_fence(key: DailyKey, token: str) -> tuple[ColumnElement[bool], ...]:
    """The claim is unsent and still held under ``token``."""
    return (DailyClaim.channel_id == key[0], DailyClaim.local_date == key[1],
            DailyClaim.claimed_by == token, DailyClaim.sent_at.is_(None))


class DailyClaims:
    """``ClaimStore[DailyKey, DailyKey]``: one claim per channel and local date."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def insert(self, natural: DailyKey, token: str, now: datetime) -> DailyKey | None:
        async with self.db.write() as session:
            won = await session.scalar(
                dialect_insert(session, DailyClaim)
                .values(channel_id=natural[0], local_date=natural[1], claimed_at=now, claimed_by=token)
                .on_conflict_do_nothing()
                .returning(DailyClaim.channel_id)
            )
        return None if won is None else natural

    async def get(self, key: DailyKey) -> ClaimState | None:
        row = await self.db.read_first(  # the fence before every send: one round trip
            select(DailyClaim.claimed_by, DailyClaim.claimed_at, DailyClaim.sent_at, Post.platform_ref)
            .select_from(DailyClaim).outerjoin(Post, Post.id == DailyClaim.post_id)
            .where(DailyClaim.channel_id == key[0], DailyClaim.local_date == key[1]))
        if row is None:
            return None
        return ClaimState(row[0], as_utc(row[1]), as_utc(row[2]) if row[2] else None, row[3])

    async def take_over(self, key: DailyKey, holder: str, token: str, now: datetime) -> bool:
        async with self.db.write() as session:
            taken = await session.execute(
                update(DailyClaim).where(*_daily_fence(key, holder))
                .values(claimed_by=token, claimed_at=now).execution_options(synchronize_session=False)
            )
        return bool(rows_changed(taken))

    async def renew(self, key: DailyKey, token: str, now: datetime) -> bool:
        async with self.db.write() as session:
            renewed = await session.execute(
                update(DailyClaim).where(*_daily_fence(key, token)).values(claimed_at=now))
        return bool(rows_changed(renewed))

    async def release(self, key: DailyKey, token: str, claimed_at: datetime) -> None:
        async with self.db.write() as session:
            await session.execute(
                update(DailyClaim).where(*_daily_fence(key, token)).values(claimed_at=claimed_at))

    async def record_sent(self, key: DailyKey, token: str, now: datetime, ref: str) -> bool:
        async with self.db.write() as session:  # two statements, no ORM objects (hot path)
            done = (await session.execute(
                update(DailyClaim).where(*_daily_fence(key, token)).values(sent_at=now)
                .returning(DailyClaim.post_id).execution_options(synchronize_session=False))).first()
            if done is None:
                return False
            assert done[0] is not None  # the policy records its post before any send
            await session.execute(update(Post).where(Post.id == done[0]).values(platform_ref=ref)
                                  .execution_options(synchronize_session=False))
        return True

    async def stale(self, before: datetime) -> list[DailyKey]:
        async with self.db.read() as session:
            rows = await session.execute(
                select(DailyClaim.channel_id, DailyClaim.local_date).where(
                    DailyClaim.sent_at.is_(None), DailyClaim.claimed_at <= before))
            return [(pk, day) for pk, day in rows]


class ClaimsById:
    """The fenced writes of a claim table found by its id (``id``, ``claimed_by``,
    ``claimed_at``, ``sent_at``, ``platform_ref``): written once for the weekly posts and the
    group mocks, which differ only in their table and how a claim is first inserted."""

    model: Any  # the claim table's mapped class

    def __init__(self, db: Database) -> None:
        self.db = db

    def _fence(self, claim_id: int, token: str) -> tuple[ColumnElement[bool], ...]:
        """The claim is unsent and still held under ``token``."""
        m = self.model
        return (m.id == claim_id, m.claimed_by == token, m.sent_at.is_(None))

    async def get(self, key: int) -> ClaimState | None:
        m = self.model
        row = await self.db.read_first(  # the fence before every send: one round trip
            select(m.claimed_by, m.claimed_at, m.sent_at, m.platform_ref).where(m.id == key))
        if row is None:
            return None
        return ClaimState(row[0], as_utc(row[1]), as_utc(row[2]) if row[2] else None, row[3])

    async def take_over(self, key: int, holder: str, token: str, now: datetime) -> bool:
        async with self.db.write() as session:
            taken = await session.execute(
                update(self.model).where(*self._fence(key, holder)).values(claimed_by=token, claimed_at=now))
        return bool(rows_changed(taken))

    async def renew(self, key: int, token: str, now: datetime) -> bool:
        async with self.db.write() as session:
            renewed = await session.execute(
                update(self.model).where(*self._fence(key, token)).values(claimed_at=now))
        return bool(rows_changed(renewed))

    async def release(self, key: int, token: str, claimed_at: datetime) -> None:
        async with self.db.write() as session:
            await session.execute(
                update(self.model).where(*self._fence(key, token)).values(claimed_at=claimed_at))

    async def record_sent(self, key: int, token: str, now: datetime, ref: str) -> bool:
        async with self.db.write() as session:
            done = await session.execute(
                update(self.model).where(*self._fence(key, token)).values(sent_at=now, platform_ref=ref))
        return bool(rows_changed(done))

    async def stale(self, before: datetime) -> list[int]:
        m = self.model
        async with self.db.read() as session:
            return list(await session.scalars(
                select(m.id).where(m.sent_at.is_(None), m.claimed_at <= before).order_by(m.id)))


class WeeklyClaims(ClaimsById):
    """``ClaimStore[WeeklyNatural, int]``: one claim per channel, kind and local week, found
    afterwards by its id (the challenge, the digest, and the challenge's closing summary)."""

    model = WeeklyClaim

    async def insert(self, natural: WeeklyNatural, token: str, now: datetime) -> int | None:
        async with self.db.write() as session:
            return await self.insert_in(session, natural, token, now)

    @staticmethod
    async def insert_in(session: Any, natural: WeeklyNatural, token: str, now: datetime,
                        item: str | None = None) -> int | None:
        """The insert inside a caller's transaction (the close decides and claims at once)."""
        channel_pk, kind, monday = natural
        won: int | None = await session.scalar(
            dialect_insert(session, WeeklyClaim)
            .values(channel_id=channel_pk, kind=kind, week_start=monday, claimed_at=now,
                    claimed_by=token, item=item)
            .on_conflict_do_nothing(index_elements=["channel_id", "kind", "week_start"])
            .returning(WeeklyClaim.id)
        )
        return won

