"""Study groups: named groups that members join and leave within a workspace."""

from __future__ import annotations

import re

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.model.clock import Clock
from bot.core.model.identity import Who, member_row, workspace_row
from bot.storage.models import GroupMember, StudyGroup
from bot.storage.upsert import dialect_insert

NAME_RE = re.compile(r"^[\w][\w .+#-]{0,31}$")


class GroupError(ValueError):
    pass


def _key(name: str) -> str:
    clean = " ".join(name.split())
    if not NAME_RE.match(clean):
        raise GroupError(
            f"group names are 1-32 letters, digits, spaces or - _ . + # (got {name!r})"
        )
    return clean.lower()


async def find(session: AsyncSession, platform: str, workspace: str, name: str) -> StudyGroup:
    ws = await workspace_row(session, platform, workspace)
    group = await session.scalar(
        select(StudyGroup).where(StudyGroup.workspace_id == ws.id, StudyGroup.name_key == _key(name))
    )
    if group is None:
        raise GroupError(f"there is no study group called {name!r}; /group list shows them")
    return group


async def create(session: AsyncSession, clock: Clock, who: Who, name: str) -> StudyGroup:
    key = _key(name)
    member = await member_row(session, who, clock)
    existing = await session.scalar(
        select(StudyGroup).where(
            StudyGroup.workspace_id == member.workspace_id, StudyGroup.name_key == key
        )
    )
    if existing is not None:
        raise GroupError(f"a group called {existing.name!r} already exists; join it with /group join")
    group = StudyGroup(
        workspace_id=member.workspace_id,
        name=" ".join(name.split()),
        name_key=key,
        created_by=member.id,
        created_at=clock.now(),
    )
    session.add(group)
    await session.flush()
    await join(session, clock, who, group.name)
    return group


async def join(session: AsyncSession, clock: Clock, who: Who, name: str) -> tuple[StudyGroup, bool]:
    """Returns (group, newly_joined)."""
    group = await find(session, who.platform, who.workspace, name)
    member = await member_row(session, who, clock)
    inserted = await session.scalar(
        dialect_insert(session, GroupMember)
        .values(group_id=group.id, member_id=member.id, joined_at=clock.now())
        .on_conflict_do_nothing()
        .returning(GroupMember.group_id)
    )
    return group, inserted is not None


async def leave(session: AsyncSession, clock: Clock, who: Who, name: str) -> tuple[StudyGroup, bool]:
    group = await find(session, who.platform, who.workspace, name)
    member = await member_row(session, who, clock)
    result = await session.execute(
        delete(GroupMember).where(GroupMember.group_id == group.id, GroupMember.member_id == member.id)
    )
    return group, bool(result.rowcount)


async def listing(session: AsyncSession, platform: str, workspace: str) -> list[tuple[str, int]]:
    ws = await workspace_row(session, platform, workspace)
    rows = await session.execute(
        select(StudyGroup.name, func.count(GroupMember.member_id))
        .outerjoin(GroupMember, GroupMember.group_id == StudyGroup.id)
        .where(StudyGroup.workspace_id == ws.id)
        .group_by(StudyGroup.id, StudyGroup.name)
        .order_by(StudyGroup.name)
    )
    return [(name, n) for name, n in rows]


async def groups_of(session: AsyncSession, member_id: int) -> list[str]:
    rows = await session.scalars(
        select(StudyGroup.name)
        .join(GroupMember, GroupMember.group_id == StudyGroup.id)
        .where(GroupMember.member_id == member_id)
        .order_by(StudyGroup.name)
    )
    return list(rows)
