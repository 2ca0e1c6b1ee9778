"""The community banks and suggestions behind ``bot.core.community_banks.ports``: the rows
/bank and /suggest read and write, one community per transaction. A unique key another
replica took meanwhile surfaces as the core's ``BankRace``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.community_banks.ports import BankRace, StoredBank, StoredSuggestion
from bot.core.domain.identity import Who
from bot.storage.db import Database
from bot.storage.identity import workspace_row
from bot.storage.models import CommunityBank, CommunityQuestion, Suggestion


@contextmanager
def _race() -> Iterator[None]:
    try:
        yield
    except IntegrityError as exc:  # another replica stored this bank meanwhile
        raise BankRace(str(exc.orig)) from exc


def _bank(row: CommunityBank) -> StoredBank:
    return StoredBank(row.id, row.slug, row.title, row.version, row.enabled, row.source)


def _suggestion(row: Suggestion) -> StoredSuggestion:
    return StoredSuggestion(row.id, row.author_id, row.author_name, row.status, row.data)


class StoredCommunity:
    """``CommunityTx``: the session of one write transaction and the community's workspace id."""

    def __init__(self, session: AsyncSession, workspace_id: int) -> None:
        self.session, self.workspace_id = session, workspace_id

    @property
    def tx(self) -> AsyncSession:
        return self.session

    async def _bank_row(self, slug: str) -> CommunityBank | None:
        return await self.session.scalar(select(CommunityBank).where(
            CommunityBank.workspace_id == self.workspace_id, CommunityBank.slug == slug))

    async def bank(self, slug: str) -> StoredBank | None:
        row = await self._bank_row(slug)
        return None if row is None else _bank(row)

    async def banks(self) -> list[tuple[StoredBank, int]]:
        rows = (await self.session.execute(
            select(CommunityBank, func.count(CommunityQuestion.slug))
            .outerjoin(CommunityQuestion, (CommunityQuestion.bank_id == CommunityBank.id)
                       & CommunityQuestion.retired.is_(False))
            .where(CommunityBank.workspace_id == self.workspace_id)
            .group_by(CommunityBank.id).order_by(CommunityBank.slug)
        )).all()
        return [(_bank(bank), n) for bank, n in rows]

    async def served(self, bank_id: int) -> list[Any]:
        return list(await self.session.scalars(
            select(CommunityQuestion.data).where(CommunityQuestion.bank_id == bank_id,
                                                 CommunityQuestion.retired.is_(False))
            .order_by(CommunityQuestion.slug)))

    async def put_bank(self, slug: str, title: str, source: str, *, by: str, now: datetime,
                       limit: int) -> StoredBank | None:
        session = self.session
        row = await self._bank_row(slug)
        if row is None:
            count = await session.scalar(select(func.count()).select_from(CommunityBank)
                                         .where(CommunityBank.workspace_id == self.workspace_id))
            if (count or 0) >= limit:
                return None
            row = CommunityBank(workspace_id=self.workspace_id, slug=slug, title=title, version=1,
                                enabled=True, source=source, uploaded_by=by, updated_at=now)
            session.add(row)
            with _race():
                await session.flush()
        else:
            row.version += 1
            row.title, row.source, row.uploaded_by, row.updated_at = title, source, by, now
            row.enabled = True
        return _bank(row)

    async def put_questions(self, bank: StoredBank, questions: dict[str, Any]) -> None:
        session = self.session
        with _race():  # the autoflush of the bank's new version, and the questions' inserts
            existing = {
                slug: stored for slug, stored in await session.execute(
                    select(CommunityQuestion.slug, CommunityQuestion)
                    .where(CommunityQuestion.bank_id == bank.id))
            }
            for slug, data in questions.items():
                found = existing.pop(slug, None)
                if found is None:
                    session.add(CommunityQuestion(bank_id=bank.id, slug=slug, version=bank.version,
                                                  retired=False, data=data))
                else:
                    found.version, found.retired, found.data = bank.version, False, data
            for gone in existing.values():
                gone.retired = True
            await session.flush()

    async def set_enabled(self, bank_id: int, enabled: bool, now: datetime) -> None:
        row = await self.session.get(CommunityBank, bank_id)
        assert row is not None
        row.enabled, row.updated_at = enabled, now
        await self.session.flush()

    def _pending(self) -> ColumnElement[bool]:
        return (Suggestion.workspace_id == self.workspace_id) & (Suggestion.status == "pending")

    async def pending(self, author_id: str) -> tuple[int, int]:
        total, mine = (await self.session.execute(
            select(func.count(), func.count().filter(Suggestion.author_id == author_id))
            .where(self._pending()))).one()
        return int(total), int(mine)

    async def pending_count(self) -> int:
        return int(await self.session.scalar(
            select(func.count()).select_from(Suggestion).where(self._pending())) or 0)

    async def next_pending(self) -> StoredSuggestion | None:
        row = await self.session.scalar(
            select(Suggestion).where(self._pending()).order_by(Suggestion.id).limit(1))
        return None if row is None else _suggestion(row)

    async def _suggestion_row(self, number: int) -> Suggestion | None:
        return await self.session.scalar(select(Suggestion).where(
            Suggestion.workspace_id == self.workspace_id, Suggestion.id == number))

    async def suggestion(self, number: int) -> StoredSuggestion | None:
        row = await self._suggestion_row(number)
        return None if row is None else _suggestion(row)

    async def add_suggestion(self, author_id: str, author_name: str, data: Any, now: datetime) -> int:
        row = Suggestion(workspace_id=self.workspace_id, author_id=author_id, author_name=author_name,
                         data=data, status="pending", created_at=now)
        self.session.add(row)
        await self.session.flush()
        return row.id

    async def _known(self, number: int) -> Suggestion:
        """A suggestion this transaction has read or added (no query: the session holds it)."""
        row = await self.session.get(Suggestion, number)
        assert row is not None and row.workspace_id == self.workspace_id
        return row

    async def _decided(self, number: int, status: str, by: str, now: datetime) -> Suggestion:
        row = await self._known(number)
        row.status, row.decided_at, row.decided_by = status, now, by
        return row

    async def set_suggestion_data(self, number: int, data: Any) -> None:
        (await self._known(number)).data = data

    async def approve(self, number: int, bank_id: int, *, by: str, now: datetime) -> None:
        row = await self._decided(number, "approved", by, now)
        row.bank_id = bank_id
        await self.session.flush()

    async def reject(self, number: int, reason: str, *, by: str, now: datetime) -> None:
        row = await self._decided(number, "rejected", by, now)
        row.reason = reason


class StoredBanks:
    """``BankStore`` on the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @asynccontextmanager
    async def community(self, who: Who) -> AsyncIterator[StoredCommunity]:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            yield StoredCommunity(session, ws.id)

    def read(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.db.read()
