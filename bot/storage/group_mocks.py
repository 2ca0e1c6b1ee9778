"""Group mocks' storage (``bot.core.mock.ports.GroupMockStore``): the scheduled mocks, their
takers, and their claims behind bot.core.posting's ``ClaimStore`` (the announcement and the
board, each once per group mock)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, and_, exists, func, select, update

from bot.core.domain.clock import as_utc
from bot.core.domain.identity import Where
from bot.core.mock.ports import GroupKey, GroupMockView, Taker
from bot.core.posting.claims import ClaimStore
from bot.storage.claims import ClaimsById
from bot.storage.db import Database
from bot.storage.identity import channel_row
from bot.storage.models import (
    Channel,
    GroupMock,
    GroupMockClaim,
    GroupMockTaker,
    Member,
    MockSession,
    Workspace,
)
from bot.storage.upsert import dialect_insert

POST, BOARD = "post", "board"


class GroupMockClaims(ClaimsById):
    """``ClaimStore[GroupKey, int]``: one claim per group mock and kind, found by its id."""

    model = GroupMockClaim

    async def insert(self, natural: GroupKey, token: str, now: datetime) -> int | None:
        async with self.db.write() as session:
            won: int | None = await session.scalar(
                dialect_insert(session, GroupMockClaim)
                .values(group_mock_id=natural[0], kind=natural[1], claimed_at=now, claimed_by=token)
                .on_conflict_do_nothing(index_elements=["group_mock_id", "kind"])
                .returning(GroupMockClaim.id))
        return won

    async def stale(self, before: datetime) -> list[int]:
        """Unsent claims past their lease, of group mocks not cancelled (a cancelled one's
        claim is never sent: it would be retried forever)."""
        async with self.db.read() as session:
            return list(await session.scalars(
                select(GroupMockClaim.id).join(GroupMock, GroupMock.id == GroupMockClaim.group_mock_id)
                .where(GroupMockClaim.sent_at.is_(None), GroupMockClaim.claimed_at <= before,
                       GroupMock.cancelled_at.is_(None))
                .order_by(GroupMockClaim.id)))


def _claim_sent(kind: str) -> Any:
    return exists().where(GroupMockClaim.group_mock_id == GroupMock.id, GroupMockClaim.kind == kind,
                          GroupMockClaim.sent_at.is_not(None))


def _claimed(kind: str) -> Any:
    return exists().where(GroupMockClaim.group_mock_id == GroupMock.id, GroupMockClaim.kind == kind)


class StoredGroupMocks:
    """``GroupMockStore`` on the database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.claims: ClaimStore[GroupKey, int] = GroupMockClaims(db)

    def _query(self) -> Any:
        post_ref = (select(GroupMockClaim.platform_ref)
                    .where(GroupMockClaim.group_mock_id == GroupMock.id, GroupMockClaim.kind == POST,
                           GroupMockClaim.sent_at.is_not(None)).scalar_subquery())
        takers = (select(func.count()).select_from(GroupMockTaker)
                  .where(GroupMockTaker.group_mock_id == GroupMock.id).scalar_subquery())
        return (select(GroupMock, Workspace.platform, Workspace.external_id, Channel.channel_id, Channel.name,
                       post_ref, _claim_sent(BOARD), takers)
                .join(Channel, Channel.id == GroupMock.channel_id)
                .join(Workspace, Workspace.id == Channel.workspace_id))

    @staticmethod
    def _view(row: Row[Any]) -> GroupMockView:
        mock: GroupMock = row[0]
        items = [(str(k), str(r), str(t)) for k, r, t in json.loads(mock.items)]
        return GroupMockView(mock.id, Where(row[1], row[2], row[3], row[4]), mock.track, mock.minutes,
                             as_utc(mock.starts_at), as_utc(mock.closes_at), mock.timezone, items,
                             mock.cancelled_at is not None, row[5], bool(row[6]), int(row[7] or 0))

    async def channel_timezone(self, where: Where) -> str:
        async with self.db.write() as session:
            return (await channel_row(session, where)).timezone or "UTC"

    async def create(self, where: Where, track: str, minutes: int, starts_at: datetime, timezone: str,
                     items: Sequence[tuple[str, str, str]], by: str, now: datetime) -> int:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            row = GroupMock(channel_id=channel.id, track=track, minutes=minutes, starts_at=starts_at,
                            closes_at=starts_at + timedelta(minutes=minutes), timezone=timezone,
                            items=json.dumps([list(i) for i in items]), created_by=by, created_at=now)
            session.add(row)
            await session.flush()
            return row.id

    async def upcoming(self, where: Where) -> list[GroupMockView]:
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        async with self.db.read() as session:
            rows = (await session.execute(self._query().where(
                GroupMock.channel_id == channel_pk, GroupMock.cancelled_at.is_(None), ~_claim_sent(BOARD))
                .order_by(GroupMock.starts_at, GroupMock.id))).all()
        return [self._view(r) for r in rows]

    async def cancel(self, where: Where, group_mock_id: int, now: datetime) -> GroupMockView | None:
        before = await self.get(group_mock_id)
        if before is None or before.where.channel_id != where.channel_id or before.where.community != where.community:
            return None
        async with self.db.write() as session:
            await session.execute(update(GroupMock).where(
                GroupMock.id == group_mock_id, GroupMock.cancelled_at.is_(None), ~_claimed(POST))
                .values(cancelled_at=now))
        return before

    async def get(self, group_mock_id: int) -> GroupMockView | None:
        async with self.db.read() as session:
            row = (await session.execute(self._query().where(GroupMock.id == group_mock_id))).first()
        return None if row is None else self._view(row)

    async def due_posts(self, now: datetime) -> list[int]:
        async with self.db.read() as session:
            return list(await session.scalars(select(GroupMock.id).where(
                GroupMock.cancelled_at.is_(None), GroupMock.starts_at <= now, GroupMock.closes_at > now,
                ~_claimed(POST)).order_by(GroupMock.starts_at, GroupMock.id)))

    async def due_boards(self, now: datetime) -> list[int]:
        async with self.db.read() as session:
            return list(await session.scalars(select(GroupMock.id).where(
                GroupMock.cancelled_at.is_(None), GroupMock.closes_at <= now, _claim_sent(POST),
                ~_claimed(BOARD)).order_by(GroupMock.closes_at, GroupMock.id)))

    async def claim_of(self, claim_id: int) -> GroupKey | None:
        async with self.db.read() as session:
            row = (await session.execute(select(GroupMockClaim.group_mock_id, GroupMockClaim.kind)
                                         .where(GroupMockClaim.id == claim_id))).first()
        return None if row is None else (row[0], row[1])

    async def open_claim(self, claim_id: int, token: str, now: datetime) -> tuple[bool, datetime] | None:
        async with self.db.write() as session:
            claim = await session.get(GroupMockClaim, claim_id)
            if claim is None or claim.claimed_by != token or claim.sent_at is not None:
                return None
            mock = await session.get(GroupMock, claim.group_mock_id)
            if mock is None or mock.cancelled_at is not None:
                return None
            retry = claim.opened_at is not None
            if claim.opened_at is None:
                claim.opened_at = now
            return retry, as_utc(claim.opened_at)

    async def takers(self, group_mock_id: int) -> list[Taker]:
        async with self.db.read() as session:
            rows = (await session.execute(
                select(Member.user_id, Member.display_name, MockSession.score, MockSession.started_at,
                       MockSession.finished_at, MockSession.deadline_at)
                .select_from(GroupMockTaker)
                .join(MockSession, MockSession.id == GroupMockTaker.mock_id)
                .join(Member, Member.id == GroupMockTaker.member_id)
                .where(GroupMockTaker.group_mock_id == group_mock_id))).all()
            mock = await session.get(GroupMock, group_mock_id)
        n = len(json.loads(mock.items)) if mock is not None else 0
        found = []
        for user_id, name, score, started, finished, deadline in rows:
            end = as_utc(finished or deadline)
            found.append(Taker(user_id, name or user_id, score or 0.0, (score or 0.0) * n, n,
                               max(0.0, (end - as_utc(started)).total_seconds())))
        return found

    async def open_sessions(self, group_mock_id: int) -> list[tuple[int, int]]:
        async with self.db.read() as session:
            rows = await session.execute(
                select(MockSession.id, MockSession.member_id).join(
                    GroupMockTaker, and_(GroupMockTaker.mock_id == MockSession.id,
                                         GroupMockTaker.group_mock_id == group_mock_id))
                .where(MockSession.finished_at.is_(None)))
            return [(m, w) for m, w in rows]
