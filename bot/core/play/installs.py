"""A workspace that removes the bot: its posts stop at once, its data stays until purged.

Uninstalling is not a request to forget: a team may reinstall next week and expect its boards.
So removal only pauses every schedule of the workspace (daily and weekly posts; a reinstalled
workspace resumes with ``/daily resume``), and an operator deletes the data explicitly
(``torchdrill slack purge TEAM_ID``), which removes the workspace row and, by cascade, its
members, channels, posts, answers, scores, groups and schedules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, select, update

from bot.core.render import counted
from bot.storage.models import Answer, Channel, Member, Schedule, Workspace

if TYPE_CHECKING:
    from bot.core.play.daily import DailyPosting
    from bot.storage.db import Database


@dataclass(frozen=True)
class Purged:
    """What a purge removed (zeros when the workspace was unknown)."""

    workspace: str
    members: int
    channels: int
    answers: int
    existed: bool = False

    def describe(self) -> str:
        if not self.existed:
            return f"nothing stored for workspace {self.workspace}"
        return (f"purged workspace {self.workspace}: {counted(self.members, 'member')}, "
                f"{counted(self.channels, 'channel')}, {counted(self.answers, 'answer')}")


def _channels_of(platform: str, external_id: str) -> object:
    return (
        select(Channel.id).join(Workspace, Workspace.id == Channel.workspace_id)
        .where(Workspace.platform == platform, Workspace.external_id == external_id)
    )


async def stop_workspace(daily: DailyPosting, platform: str, external_id: str) -> int:
    """Pause every schedule of the workspace; returns how many were running."""
    async with daily.db.write() as session:
        result = await session.execute(
            update(Schedule)
            .where(Schedule.channel_id.in_(_channels_of(platform, external_id)),  # type: ignore[arg-type]
                   Schedule.paused.is_(False))
            .values(paused=True, updated_at=daily.drill.clock.now())
        )
    stopped = int(result.rowcount or 0)
    if stopped:
        await daily.changed()  # this replica at once; the others on their next tick
    return stopped


async def purge_workspace(db: Database, platform: str, external_id: str) -> Purged:
    """Delete the workspace and everything stored for it."""
    async with db.write() as session:
        workspace = await session.scalar(select(Workspace).where(
            Workspace.platform == platform, Workspace.external_id == external_id))
        if workspace is None:
            return Purged(external_id, 0, 0, 0)

        async def count(model: type, column: object) -> int:
            return int(await session.scalar(
                select(func.count()).select_from(model).where(column == workspace.id)) or 0)

        purged = Purged(external_id, await count(Member, Member.workspace_id),
                        await count(Channel, Channel.workspace_id),
                        await count(Answer, Answer.workspace_id), existed=True)
        await session.execute(delete(Workspace).where(Workspace.id == workspace.id))
    return purged
