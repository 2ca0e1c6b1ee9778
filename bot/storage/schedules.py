"""Schedules and daily-claim reads: ``StoredSchedules`` is bot.core.daily's ``ScheduleStore``.

A fire reads the one schedule it needs by primary key; the sweep reads every schedule's timing
columns and the recent claims as tuples. Neither builds ORM objects, so reading thousands of
schedules costs rows, not object graphs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.daily.ports import DailyKey, ScheduleSettings
from bot.core.daily.schedules import ScheduleView, view_of
from bot.core.domain.identity import Where
from bot.storage.claims import rows_changed
from bot.storage.db import Database
from bot.storage.identity import channel_row
from bot.storage.models import Channel, DailyClaim, Schedule, WeeklyClaim, Workspace
from bot.storage.upsert import dialect_insert

_S, _C, _W = Schedule.__table__.c, Channel.__table__.c, Workspace.__table__.c

SCHEDULE_COLUMNS = (
    _S.channel_id.label("channel_pk"), _W.platform, _W.external_id, _C.channel_id, _C.name,
    _S.time_of_day, _S.timezone, _S.weekdays, _S.topic, _S.reveal_after_minutes, _S.paused,
    _S.challenge_at, _S.digest_at, _S.bank_source,
)
_SCHEDULES = (
    select(*SCHEDULE_COLUMNS)
    .select_from(Schedule.__table__.join(Channel.__table__, _C.id == _S.channel_id)
                 .join(Workspace.__table__, _W.id == _C.workspace_id))
)


async def schedule_row(session: AsyncSession, channel_pk: int) -> Any | None:
    """One channel's schedule with its address, or None (one row read)."""
    return (await session.execute(_SCHEDULES.where(_S.channel_id == channel_pk))).first()


async def schedule_rows(session: AsyncSession) -> Sequence[Any]:
    """Every schedule with its address, as rows."""
    return (await session.execute(_SCHEDULES.order_by(_S.channel_id))).all()


async def schedule_rows_of(session: AsyncSession, channel_pks: Iterable[int]) -> Sequence[Any]:
    """The schedules of these channels only (what closing a few open challenges needs)."""
    return (await session.execute(_SCHEDULES.where(_S.channel_id.in_(sorted(channel_pks))))).all()


async def weekly_claimed_since(session: AsyncSession, first_day: date) -> set[tuple[int, str, date]]:
    """(channel, kind, local Monday) of every weekly claim from ``first_day`` on, sent or not."""
    table = WeeklyClaim.__table__.c
    rows = await session.execute(
        select(table.channel_id, table.kind, table.week_start).where(table.week_start >= first_day))
    return {(pk, kind, monday) for pk, kind, monday in rows}


async def claimed_since(session: AsyncSession, first_day: date) -> set[DailyKey]:
    """(channel, local date) of every daily claim from ``first_day`` on, sent or not."""
    rows = await session.execute(
        select(DailyClaim.__table__.c.channel_id, DailyClaim.__table__.c.local_date)
        .where(DailyClaim.__table__.c.local_date >= first_day)
    )
    return {(pk, day) for pk, day in rows}


async def all_schedules(db: Database) -> list[ScheduleView]:
    async with db.read() as session:
        return [view_of(row) for row in await schedule_rows(session)]


async def schedule_of(db: Database, channel_pk: int) -> ScheduleView | None:
    """The one schedule a fire needs (a single row, however many channels there are)."""
    row = await db.read_first(_SCHEDULES.where(_S.channel_id == channel_pk))
    return None if row is None else view_of(row)


class StoredSchedules:
    """``bot.core.daily.ports.ScheduleStore``: each call is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def all(self) -> list[ScheduleView]:
        return await all_schedules(self.db)

    async def of(self, channel_pk: int) -> ScheduleView | None:
        return await schedule_of(self.db, channel_pk)

    async def claimed_since(self, first_day: date) -> set[DailyKey]:
        async with self.db.read() as session:
            return await claimed_since(session, first_day)

    async def save(self, where: Where, settings: ScheduleSettings, now: datetime) -> int:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            channel.timezone = settings.timezone
            values = dict(
                time_of_day=settings.time_of_day, timezone=settings.timezone,
                weekdays=settings.weekdays, topic=settings.topic,
                reveal_after_minutes=settings.reveal_after_minutes, paused=False, updated_at=now,
                bank_source=settings.bank_source,
            )
            await session.execute(
                dialect_insert(session, Schedule)
                .values(channel_id=channel.id, **values)
                .on_conflict_do_update(index_elements=["channel_id"], set_=values)
            )
            return channel.id

    async def set_paused(self, where: Where, paused: bool, now: datetime) -> bool:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            result = await session.execute(
                update(Schedule).where(Schedule.channel_id == channel.id).values(paused=paused, updated_at=now))
        return bool(rows_changed(result))
