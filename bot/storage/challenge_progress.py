"""challenge_progress behind ``bot.core.challenges.ports.ChallengeProgressStore``: a member's
work per /challenge problem, and the first solve that scores once (one guarded UPDATE, so two
verdicts racing cannot both score). /mock opens problems through the same functions."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.challenges.ports import BoardLine, Opened
from bot.core.content.challenges import Challenge
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.storage.claims import rows_changed
from bot.storage.db import Database
from bot.storage.identity import member_ref
from bot.storage.models import ChallengeProgress, Member, Workspace
from bot.storage.upsert import dialect_insert


async def solved_ids(session: AsyncSession, member_id: int) -> set[str]:
    return set(await session.scalars(select(ChallengeProgress.challenge_id).where(
        ChallengeProgress.member_id == member_id, ChallengeProgress.solved_at.is_not(None))))


async def make_current(session: AsyncSession, member_id: int, workspace_id: int, challenge: Challenge,
                       now: datetime) -> None:
    """Open ``challenge`` as the member's current problem: a new row, or the old one reopened."""
    insert = dialect_insert(session, ChallengeProgress).values(
        member_id=member_id, challenge_id=challenge.id, workspace_id=workspace_id, topic=challenge.topic,
        opened_at=now, hints_shown=0, attempts=0, points=0)
    await session.execute(insert.on_conflict_do_update(
        index_elements=["member_id", "challenge_id"], set_={"opened_at": now}))


class StoredChallengeProgress:
    """``ChallengeProgressStore`` over a ``Database``; its transactions are the database's."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db, self.clock = db, clock  # the clock stamps a member row made on first sight

    def read(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.db.read()

    def write(self) -> AbstractAsyncContextManager[AsyncSession]:
        return self.db.write()

    async def solved_ids(self, tx: AsyncSession, who: Who) -> set[str]:
        me = await member_ref(tx, who, self.clock)
        return await solved_ids(tx, me.id)

    async def make_current(self, tx: AsyncSession, who: Who, challenge: Challenge, now: datetime) -> None:
        me = await member_ref(tx, who, self.clock)
        await make_current(tx, me.id, me.workspace_id, challenge, now)

    async def latest(self, tx: AsyncSession, who: Who, *, unsolved: bool = False) -> Opened | None:
        me = await member_ref(tx, who, self.clock)
        query = select(ChallengeProgress.challenge_id, ChallengeProgress.hints_shown).where(
            ChallengeProgress.member_id == me.id)
        if unsolved:
            query = query.where(ChallengeProgress.solved_at.is_(None))
        row = (await tx.execute(query.order_by(ChallengeProgress.opened_at.desc()).limit(1))).first()
        return None if row is None else Opened(row.challenge_id, row.hints_shown)

    async def show_hints(self, tx: AsyncSession, who: Who, challenge_id: str, shown: int) -> None:
        me = await member_ref(tx, who, self.clock)
        await tx.execute(update(ChallengeProgress).where(
            ChallengeProgress.member_id == me.id, ChallengeProgress.challenge_id == challenge_id,
            ChallengeProgress.hints_shown != shown).values(hints_shown=shown))

    async def record(self, tx: AsyncSession, who: Who, challenge: Challenge, solved: bool,
                     now: datetime) -> bool:
        me = await member_ref(tx, who, self.clock)
        insert = dialect_insert(tx, ChallengeProgress).values(
            member_id=me.id, challenge_id=challenge.id, workspace_id=me.workspace_id,
            topic=challenge.topic, opened_at=now, hints_shown=0, attempts=0, points=0)
        await tx.execute(insert.on_conflict_do_nothing())
        key = (ChallengeProgress.member_id == me.id) & (ChallengeProgress.challenge_id == challenge.id)
        await tx.execute(update(ChallengeProgress).where(key).values(attempts=ChallengeProgress.attempts + 1))
        if not solved:
            return False
        first = await tx.execute(
            update(ChallengeProgress).where(key, ChallengeProgress.solved_at.is_(None))
            .values(solved_at=now, points=challenge.points))
        return bool(rows_changed(first))

    async def board(self, tx: AsyncSession, platform: str, workspace: str, limit: int) -> list[BoardLine]:
        ws_id = await tx.scalar(select(Workspace.id).where(
            Workspace.platform == platform, Workspace.external_id == workspace))
        if ws_id is None:
            return []
        rows = await tx.execute(
            select(Member.display_name, func.sum(ChallengeProgress.points).label("points"),
                   func.count(ChallengeProgress.solved_at), func.max(ChallengeProgress.solved_at))
            .join(Member, Member.id == ChallengeProgress.member_id)
            .where(ChallengeProgress.workspace_id == ws_id, ChallengeProgress.solved_at.is_not(None))
            .group_by(Member.id, Member.display_name)
            .order_by(func.sum(ChallengeProgress.points).desc(), func.max(ChallengeProgress.solved_at))
            .limit(limit))
        return [BoardLine(name, points, solved) for name, points, solved, _ in rows]

    async def solved_by_topic(self, tx: AsyncSession, who: Who) -> dict[str, int]:
        me = await member_ref(tx, who, self.clock)
        rows = await tx.execute(
            select(ChallengeProgress.topic, func.count())
            .where(ChallengeProgress.member_id == me.id, ChallengeProgress.solved_at.is_not(None))
            .group_by(ChallengeProgress.topic))
        return {topic: n for topic, n in rows}
