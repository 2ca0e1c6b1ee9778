"""A workspace that removes the bot: its posts stop at once, its data stays until purged.

Uninstalling is not a request to forget: a team may reinstall next week and expect its boards.
So removal only pauses every schedule of the workspace (daily and weekly posts; a reinstalled
workspace resumes with ``/daily resume``), and an operator deletes the data explicitly
(``torchdrill slack purge TEAM_ID``), which removes the workspace row and, by cascade, its
members, channels, posts, answers, scores, groups and schedules. The rows live behind
``WorkspaceStore`` (implemented in bot.storage.workspaces).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.core.render.notices import counted

if TYPE_CHECKING:
    from bot.core.daily.service import DailyPosting


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


class WorkspaceStore(Protocol):
    """A workspace's rows as installs change them; each call one transaction."""

    async def pause_schedules(self, platform: str, external_id: str, now: datetime) -> int:
        """Pause every running schedule of the workspace's channels; how many were running."""
        ...

    async def purge(self, platform: str, external_id: str) -> Purged:
        """Delete the workspace row (and by cascade everything stored for it)."""
        ...


async def stop_workspace(
    workspaces: WorkspaceStore, daily: DailyPosting, platform: str, external_id: str
) -> int:
    """Pause every schedule of the workspace; returns how many were running."""
    stopped = await workspaces.pause_schedules(platform, external_id, daily.drill.clock.now())
    if stopped:
        await daily.changed()  # this replica at once; the others on their next tick
    return stopped
