"""/mock's storage port (``bot.core.mock.ports``): mock_sessions and mock_items, and the
answers, cards and posts a mock records through the same functions as /quiz."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import fields
from datetime import date, datetime, timedelta

from fsrs import Rating
from sqlalchemy import CursorResult, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.answers import recording as answers
from bot.core.answers.ports import AnswerStores
from bot.core.community_banks.shelf import Shelf
from bot.core.content.bank import Library, Question
from bot.core.content.challenges import Challenge
from bot.core.domain.clock import Clock, as_utc
from bot.core.domain.identity import Who
from bot.core.domain.kinds import PostKind
from bot.core.learning.readiness import OverallReadiness, Readiness
from bot.core.mock.interview import eve
from bot.core.mock.ports import ItemState, MockState, Picked
from bot.core.progress import srs
from bot.core.progress.stats import member_readiness
from bot.core.quizzes import sequence as quizzes
from bot.core.reveal.posts import create_post
from bot.core.reveal.posts import order_of as post_order
from bot.storage import challenge_progress
from bot.storage.db import Database
from bot.storage.estimates import read_abilities
from bot.storage.identity import member_row, workspace_row
from bot.storage.models import (
    Answer,
    CommunityTracks,
    GroupMockTaker,
    InterviewDate,
    Member,
    MockItem,
    MockSession,
    Post,
    SrsCard,
    Workspace,
)
from bot.storage.upsert import dialect_insert

_MOCK_FIELDS = [f.name for f in fields(MockState)]
_ITEM_FIELDS = [f.name for f in fields(ItemState)]


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def _state(row: MockSession) -> MockState:
    values = {name: getattr(row, name) for name in _MOCK_FIELDS}
    for name in ("started_at", "deadline_at", "finished_at"):
        values[name] = _utc(values[name])
    return MockState(**values)


def _item(row: MockItem) -> ItemState:
    values = {name: getattr(row, name) for name in _ITEM_FIELDS}
    values["shown_at"], values["answered_at"] = _utc(row.shown_at), _utc(row.answered_at)
    return ItemState(**values)


async def who_of(session: AsyncSession, member_id: int) -> Who:
    found = (await session.execute(
        select(Workspace.platform, Workspace.external_id, Member.user_id, Member.display_name)
        .join(Member, Member.workspace_id == Workspace.id).where(Member.id == member_id))).one()
    return Who(found[0], found[1], found[2], found[3])


class StoredMockTx:
    """One write transaction of one member's mocks."""

    def __init__(self, session: AsyncSession, library: Library, clock: Clock, who: Who,
                 member_id: int, answers: AnswerStores) -> None:
        self.session, self.library, self.clock, self.who = session, library, clock, who
        self.member_id = member_id
        # a mock's picks and grades are recorded as /quiz records them; a missed item goes back
        # into review (answers.cards); MCQs come at the practice edge (answers.quizzes)
        self.answers = answers

    async def open_mock(self) -> MockState | None:
        row = await self.session.scalar(select(MockSession).where(
            MockSession.member_id == self.member_id, MockSession.finished_at.is_(None))
            .order_by(MockSession.id.desc()).limit(1))
        return None if row is None else _state(row)

    async def mock(self, mock_id: int) -> MockState | None:
        row = await self.session.get(MockSession, mock_id)
        return None if row is None else _state(row)

    async def items(self, mock_id: int) -> list[ItemState]:
        rows = await self.session.scalars(select(MockItem).where(MockItem.mock_id == mock_id)
                                          .order_by(MockItem.idx))
        return [_item(r) for r in rows]

    async def create(self, state: MockState, items: Sequence[ItemState]) -> int:
        values = {n: getattr(state, n) for n in _MOCK_FIELDS if n != "id"}
        row = MockSession(**values)
        self.session.add(row)
        await self.session.flush()
        for item in items:
            self.session.add(MockItem(mock_id=row.id, **{n: getattr(item, n) for n in _ITEM_FIELDS}))
        await self.session.flush()
        return row.id

    async def save(self, state: MockState, items: Sequence[ItemState]) -> None:
        row = await self.session.get(MockSession, state.id)
        assert row is not None
        for name in _MOCK_FIELDS:
            if name not in ("id", "finished_at"):  # the end is set by ``claim`` only
                setattr(row, name, getattr(state, name))
        for item in items:
            stored = await self.session.get(MockItem, (state.id, item.idx))
            assert stored is not None
            for name in _ITEM_FIELDS:
                setattr(stored, name, getattr(item, name))
        await self.session.flush()

    async def claim(self, mock_id: int, end: datetime) -> bool:
        claimed = await self.session.execute(update(MockSession).where(
            MockSession.id == mock_id, MockSession.finished_at.is_(None)).values(finished_at=end))
        assert isinstance(claimed, CursorResult)
        return bool(claimed.rowcount)

    async def new_post(self, question: Question, rng: random.Random) -> int:
        post = await create_post(self.answers.quizzes.posts, self.session, question, kind=PostKind.QUIZ,
                                 now=self.clock.now(), member_id=self.member_id, rng=rng)
        return post.id

    async def order_of(self, post_id: int) -> list[int]:
        post = await self.session.get(Post, post_id)
        assert post is not None
        return post_order(post)

    async def record_pick(self, post_id: int, position: int) -> Picked:
        outcome = await answers.record_pick(self.answers, self.session, self.library, self.clock, self.who, post_id, position)
        if not outcome.recorded:
            return Picked(False, False, outcome.reply)
        correct = await self.session.scalar(select(Answer.correct).where(
            Answer.post_id == post_id, Answer.member_id == self.member_id))
        return Picked(True, bool(correct))

    async def record_grade(self, post_id: int, grade: int) -> None:
        await answers.record_grade(self.answers, self.session, self.library, self.clock, self.who, post_id, grade)

    async def review_again(self, question_id: str) -> None:
        await srs.review(self.answers.cards, self.session, self.member_id, question_id, Rating.Again, self.clock.now())

    async def _readiness(self) -> tuple[dict[str, Readiness], OverallReadiness]:
        return member_readiness(self.library, self.member_id,
                                await read_abilities(self.session, self.member_id))

    async def readiness(self) -> float | None:
        _, overall = await self._readiness()
        return overall.expected if overall.enough_data else None

    async def topic_readiness(self) -> dict[str, float] | None:
        per_topic, overall = await self._readiness()
        return {t: r.expected for t, r in per_topic.items()} if overall.enough_data else None

    async def answer_times(self, before: datetime) -> list[tuple[str, int]]:
        rows = await self.session.execute(select(Answer.question_id, Answer.response_ms).where(
            Answer.member_id == self.member_id, Answer.answered_at < before))
        return [(q, ms) for q, ms in rows]

    async def seen(self) -> set[str]:
        return set(await self.session.scalars(
            select(Answer.question_id).where(Answer.member_id == self.member_id)))

    async def ring_of(self, band: tuple[float, float]) -> Callable[[Question], int]:
        return await quizzes.ring_of(self.answers.quizzes, self.session, self.library, self.member_id, band)

    async def solved_challenges(self) -> set[str]:
        return await challenge_progress.solved_ids(self.session, self.member_id)

    async def make_current(self, challenge: Challenge) -> None:
        """The member's open challenge (what /submit judges), as /challenge makes it."""
        workspace_id = await self.session.scalar(select(Member.workspace_id).where(Member.id == self.member_id))
        assert workspace_id is not None  # the member's row is there: this transaction found it
        await challenge_progress.make_current(self.session, self.member_id, workspace_id, challenge,
                                              self.clock.now())


    async def finished(self) -> list[MockState]:
        rows = await self.session.scalars(select(MockSession).where(
            MockSession.member_id == self.member_id, MockSession.finished_at.is_not(None))
            .order_by(MockSession.started_at, MockSession.id))
        return [_state(r) for r in rows]

    async def interview_day(self) -> date | None:
        row = await self.session.get(InterviewDate, self.member_id)
        return row.day if row is not None else None

    async def set_interview_day(self, day: date | None) -> None:
        row = await self.session.get(InterviewDate, self.member_id)
        if day is None:
            if row is not None:
                await self.session.delete(row)
            return
        if row is None:
            self.session.add(InterviewDate(member_id=self.member_id, day=day, set_at=self.clock.now()))
        else:
            row.day, row.set_at = day, self.clock.now()
        await self.session.flush()
        await _bring_forward(self.session, self.member_id, day, self.clock.now())

    async def community_tracks(self) -> str | None:
        return await _tracks_of(self.session, self.who.platform, self.who.workspace)

    async def joined(self, group_mock_id: int) -> int | None:
        return await self.session.scalar(select(GroupMockTaker.mock_id).where(
            GroupMockTaker.group_mock_id == group_mock_id, GroupMockTaker.member_id == self.member_id))

    async def join(self, group_mock_id: int, mock_id: int) -> bool:
        won = await self.session.scalar(
            dialect_insert(self.session, GroupMockTaker)
            .values(group_mock_id=group_mock_id, member_id=self.member_id, mock_id=mock_id)
            .on_conflict_do_nothing().returning(GroupMockTaker.mock_id))
        return won is not None

    async def discard(self, mock_id: int) -> None:
        await self.session.execute(delete(MockItem).where(MockItem.mock_id == mock_id))
        await self.session.execute(delete(MockSession).where(MockSession.id == mock_id))


async def _tracks_of(session: AsyncSession, platform: str, workspace: str) -> str | None:
    return await session.scalar(
        select(CommunityTracks.source).join(Workspace, Workspace.id == CommunityTracks.workspace_id)
        .where(Workspace.platform == platform, Workspace.external_id == workspace))


async def _bring_forward(session: AsyncSession, member_id: int, day: date, now: datetime) -> int:
    """Cards of ``member_id`` due after the eve of ``day`` brought to the eve (while it is ahead)."""
    cap = eve(day)
    if now >= cap:
        return 0
    done = await session.execute(
        update(SrsCard).where(SrsCard.member_id == member_id, SrsCard.due > cap).values(due=cap))
    assert isinstance(done, CursorResult)
    return int(done.rowcount)


class StoredMocks:
    """``bot.core.mock.ports.MockStore`` on the database."""

    def __init__(self, db: Database, library: Library, clock: Clock, shelf: Shelf,
                 answers: AnswerStores) -> None:
        self.db, self.library, self.clock, self.shelf = db, library, clock, shelf
        self.answers = answers  # the drill's: bot.storage.drill_stores builds them once

    @asynccontextmanager
    async def member(self, who: Who) -> AsyncIterator[StoredMockTx]:
        async with self.db.write() as session:
            await self.shelf.refresh(session)  # a mock may hold community questions
            member = await member_row(session, who, self.clock)
            yield StoredMockTx(session, self.library, self.clock, who, member.id, self.answers)

    @asynccontextmanager
    async def member_id(self, member_id: int) -> AsyncIterator[StoredMockTx]:
        async with self.db.write() as session:
            await self.shelf.refresh(session)
            yield StoredMockTx(session, self.library, self.clock, await who_of(session, member_id), member_id,
                               self.answers)

    async def due(self, now: datetime) -> list[tuple[int, int]]:
        async with self.db.read() as session:
            rows = await session.execute(select(MockSession.id, MockSession.member_id).where(
                MockSession.finished_at.is_(None), MockSession.deadline_at <= now))
            return [(m, who) for m, who in rows]

    async def who(self, member_id: int) -> Who:
        async with self.db.read() as session:
            return await who_of(session, member_id)

    async def set_community_tracks(self, who: Who, source: str) -> None:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            now = self.clock.now()
            await session.execute(
                dialect_insert(session, CommunityTracks)
                .values(workspace_id=ws.id, source=source, uploaded_by=who.user_id, updated_at=now)
                .on_conflict_do_update(index_elements=["workspace_id"],
                                       set_={"source": source, "uploaded_by": who.user_id, "updated_at": now}))

    async def community_tracks(self, who: Who) -> str | None:
        async with self.db.read() as session:
            return await _tracks_of(session, who.platform, who.workspace)

    async def bring_reviews_forward(self, now: datetime) -> int:
        moved = 0
        async with self.db.write() as session:
            rows = (await session.execute(select(InterviewDate.member_id, InterviewDate.day).where(
                InterviewDate.day > now.date() + timedelta(days=1)))).all()
            for member_id, day in rows:
                moved += await _bring_forward(session, member_id, day, now)
        return moved
