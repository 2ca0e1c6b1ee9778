"""A workspace's rows as installs change them, behind bot.core.drill.installs' ``WorkspaceStore``:
pausing its schedules when it removes the bot, deleting it when an operator purges it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CursorResult, Select, delete, func, select, update
from sqlalchemy.orm import InstrumentedAttribute

from bot.core.drill.installs import Purged
from bot.storage.db import Database
from bot.storage.models import Answer, Channel, Member, Schedule, Workspace


def _channels_of(platform: str, external_id: str) -> Select[tuple[int]]:
    return (
        select(Channel.id).join(Workspace, Workspace.id == Channel.workspace_id)
        .where(Workspace.platform == platform, Workspace.external_id == external_id)
    )


class StoredWorkspaces:
    """``WorkspaceStore``: each call one write transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def pause_schedules(self, platform: str, external_id: str, now: datetime) -> int:
        async with self.db.write() as session:
            result = await session.execute(
                update(Schedule)
                .where(Schedule.channel_id.in_(_channels_of(platform, external_id)),
                       Schedule.paused.is_(False))
                .values(paused=True, updated_at=now)
            )
        assert isinstance(result, CursorResult)  # an UPDATE's result carries its rowcount
        return int(result.rowcount or 0)

    async def purge(self, platform: str, external_id: str) -> Purged:
        async with self.db.write() as session:
            workspace = await session.scalar(select(Workspace).where(
                Workspace.platform == platform, Workspace.external_id == external_id))
            if workspace is None:
                return Purged(external_id, 0, 0, 0)

            async def count(model: type, column: InstrumentedAttribute[int]) -> int:
                return int(await session.scalar(
                    select(func.count()).select_from(model).where(column == workspace.id)) or 0)

            purged = Purged(external_id, await count(Member, Member.workspace_id),
                            await count(Channel, Channel.workspace_id),
                            await count(Answer, Answer.workspace_id), existed=True)
            await session.execute(delete(Workspace).where(Workspace.id == workspace.id))
        return purged


async def purge_workspace(db: Database, platform: str, external_id: str) -> Purged:
    """Delete the workspace and everything stored for it (``torchdrill slack purge``)."""
    return await StoredWorkspaces(db).purge(platform, external_id)
