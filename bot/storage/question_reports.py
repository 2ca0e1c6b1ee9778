"""Storage behind 🚩 question reports (``bot.core.learning.report_desk.ReportStore``).

A report is one row per member and question (unique), so a second report updates the first.
Retiring a community question marks its stored row retired and touches its bank's
``updated_at``: every replica's shelf sees the change on its next refresh.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.learning.report_desk import OpenReport, Recorded, ReportCounts
from bot.storage.db import Database
from bot.storage.identity import member_row, workspace_row
from bot.storage.models import (
    Channel,
    CommunityBank,
    CommunityQuestion,
    Member,
    Post,
    QuestionReport,
)

OPEN = "open"


class StoredReports:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db, self.clock = db, clock

    async def question_of(self, who: Who, post_id: int) -> str | None:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            post = await session.get(Post, post_id)
            if post is None:
                return None
            if post.channel_id is not None:
                owner = await session.scalar(select(Channel.workspace_id).where(Channel.id == post.channel_id))
            else:
                owner = await session.scalar(select(Member.workspace_id).where(Member.id == post.member_id))
            return post.question_id if owner == ws.id else None

    async def _mine(self, session: AsyncSession, who: Who, question: str) -> tuple[Member, QuestionReport | None]:
        member = await member_row(session, who, self.clock)
        row = await session.scalar(select(QuestionReport).where(
            QuestionReport.member_id == member.id, QuestionReport.question_id == question))
        return member, row

    async def reason_of(self, who: Who, question: str) -> str | None:
        async with self.db.write() as session:
            _, row = await self._mine(session, who, question)
            return None if row is None else row.reason

    async def record(self, who: Who, post_id: int, question: str, reason: str, note: str | None,
                     now: datetime) -> Recorded:
        async with self.db.write() as session:
            member, row = await self._mine(session, who, question)
            if row is None:
                session.add(QuestionReport(workspace_id=member.workspace_id, member_id=member.id,
                                           question_id=question, post_id=post_id, reason=reason, note=note,
                                           status=OPEN, created_at=now, updated_at=now))
                return Recorded(False, note)
            row.reason, row.updated_at, row.status, row.post_id = reason, now, OPEN, post_id
            if note is not None:
                row.note = note
            return Recorded(True, row.note)

    @staticmethod
    async def _workspace(session: AsyncSession, who: Who) -> int:
        return (await workspace_row(session, who.platform, who.workspace)).id

    async def waiting(self, who: Who) -> int:
        async with self.db.write() as session:
            ws = await self._workspace(session, who)
            return int(await session.scalar(select(func.count()).select_from(QuestionReport).where(
                QuestionReport.workspace_id == ws, QuestionReport.status == OPEN)) or 0)

    async def next_open(self, who: Who) -> OpenReport | None:
        async with self.db.write() as session:
            ws = await self._workspace(session, who)
            is_open = (QuestionReport.workspace_id == ws) & (QuestionReport.status == OPEN)
            row = await session.scalar(select(QuestionReport).where(is_open).order_by(QuestionReport.id).limit(1))
            if row is None:
                return None
            waiting = await session.scalar(select(func.count()).select_from(QuestionReport).where(is_open))
            same = await session.scalar(select(func.count()).select_from(QuestionReport).where(
                is_open, QuestionReport.question_id == row.question_id))
            reporter = await session.get(Member, row.member_id)
            return OpenReport(row.id, reporter.display_name if reporter is not None else "a member",
                              row.question_id, row.reason, row.note, int(waiting or 0), int(same or 0))

    async def _open(self, session: AsyncSession, who: Who, number: int) -> QuestionReport | None:
        ws = await self._workspace(session, who)
        return await session.scalar(select(QuestionReport).where(
            QuestionReport.workspace_id == ws, QuestionReport.id == number, QuestionReport.status == OPEN))

    async def open_question(self, who: Who, number: int) -> str | None:
        async with self.db.write() as session:
            row = await self._open(session, who, number)
            return None if row is None else row.question_id

    async def retire(self, who: Who, number: int, now: datetime) -> int | None:
        async with self.db.write() as session:
            row = await self._open(session, who, number)
            if row is None or "." not in row.question_id:
                return None
            bank_pk, slug = row.question_id[1:].split(".", 1)
            if not bank_pk.isdigit():
                return None
            stored = await session.scalar(
                select(CommunityQuestion).join(CommunityBank, CommunityBank.id == CommunityQuestion.bank_id)
                .where(CommunityQuestion.bank_id == int(bank_pk), CommunityQuestion.slug == slug,
                       CommunityBank.workspace_id == row.workspace_id))
            if stored is None:
                return None
            stored.retired = True
            bank = await session.get(CommunityBank, stored.bank_id)
            assert bank is not None
            bank.updated_at = now  # other replicas' shelves see the change
            reports = list(await session.scalars(select(QuestionReport).where(
                QuestionReport.workspace_id == row.workspace_id, QuestionReport.question_id == row.question_id,
                QuestionReport.status == OPEN)))
            for report in reports:
                report.status, report.decided_by = "retired", who.user_id
            return len(reports)

    async def dismiss(self, who: Who, number: int) -> bool:
        async with self.db.write() as session:
            row = await self._open(session, who, number)
            if row is None:
                return False
            row.status, row.decided_by = "dismissed", who.user_id
            return True

    async def open_counts(self, question_ids: Collection[str]) -> dict[str, ReportCounts]:
        """Open reports per question across every community (the maintainers' export)."""
        found: dict[str, tuple[dict[str, int], list[str]]] = {}
        async with self.db.read() as session:
            rows = await session.execute(
                select(QuestionReport.question_id, QuestionReport.reason, QuestionReport.note)
                .where(QuestionReport.status == OPEN).order_by(QuestionReport.id))
            for question, reason, note in rows:
                if question not in question_ids:
                    continue
                reasons, notes = found.setdefault(question, ({}, []))
                reasons[reason] = reasons.get(reason, 0) + 1
                if note:
                    notes.append(note)
        return {q: ReportCounts(q, reasons, tuple(notes)) for q, (reasons, notes) in found.items()}
