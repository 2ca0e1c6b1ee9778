"""Study groups behind bot.core.progress.ports' ``GroupStore``, in the caller's transaction."""

from __future__ import annotations

from sqlalchemy import CursorResult, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.progress.groups import display_name, missing, name_key, taken
from bot.core.progress.ports import Group
from bot.storage.identity import member_row, workspace_row
from bot.storage.models import GroupMember, StudyGroup
from bot.storage.upsert import dialect_insert


class StoredGroups:
    """``GroupStore``: the queries the study groups always made."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def find(self, session: AsyncSession, platform: str, workspace: str, name: str) -> Group:
        ws = await workspace_row(session, platform, workspace)
        group = await session.scalar(
            select(StudyGroup).where(StudyGroup.workspace_id == ws.id, StudyGroup.name_key == name_key(name))
        )
        if group is None:
            raise missing(name)
        return Group(group.id, group.name)

    async def create(self, session: AsyncSession, who: Who, name: str) -> Group:
        key = name_key(name)
        member = await member_row(session, who, self.clock)
        existing = await session.scalar(
            select(StudyGroup).where(
                StudyGroup.workspace_id == member.workspace_id, StudyGroup.name_key == key
            )
        )
        if existing is not None:
            raise taken(existing.name)
        group = StudyGroup(
            workspace_id=member.workspace_id,
            name=display_name(name),
            name_key=key,
            created_by=member.id,
            created_at=self.clock.now(),
        )
        session.add(group)
        await session.flush()
        await self.join(session, who, group.name)
        return Group(group.id, group.name)

    async def join(self, session: AsyncSession, who: Who, name: str) -> tuple[Group, bool]:
        group = await self.find(session, who.platform, who.workspace, name)
        member = await member_row(session, who, self.clock)
        inserted = await session.scalar(
            dialect_insert(session, GroupMember)
            .values(group_id=group.id, member_id=member.id, joined_at=self.clock.now())
            .on_conflict_do_nothing()
            .returning(GroupMember.group_id)
        )
        return group, inserted is not None

    async def leave(self, session: AsyncSession, who: Who, name: str) -> tuple[Group, bool]:
        group = await self.find(session, who.platform, who.workspace, name)
        member = await member_row(session, who, self.clock)
        result = await session.execute(
            delete(GroupMember).where(GroupMember.group_id == group.id, GroupMember.member_id == member.id)
        )
        assert isinstance(result, CursorResult)  # a DELETE's result carries its rowcount
        return group, bool(result.rowcount)

    async def listing(self, session: AsyncSession, platform: str, workspace: str) -> list[tuple[str, int]]:
        ws = await workspace_row(session, platform, workspace)
        rows = await session.execute(
            select(StudyGroup.name, func.count(GroupMember.member_id))
            .outerjoin(GroupMember, GroupMember.group_id == StudyGroup.id)
            .where(StudyGroup.workspace_id == ws.id)
            .group_by(StudyGroup.id, StudyGroup.name)
            .order_by(StudyGroup.name)
        )
        return [(name, n) for name, n in rows]

    async def groups_of(self, session: AsyncSession, member_id: int) -> list[str]:
        rows = await session.scalars(
            select(StudyGroup.name)
            .join(GroupMember, GroupMember.group_id == StudyGroup.id)
            .where(GroupMember.member_id == member_id)
            .order_by(StudyGroup.name)
        )
        return list(rows)
