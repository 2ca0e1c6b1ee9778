"""What boards, study groups, progress charts and a member's own numbers need from storage, as the core states it
(issue 32: the core owns its ports). ``bot.storage.progress_queries.StoredProgressReads`` and
``bot.storage.groups.StoredGroups`` implement them.

Every method runs inside the caller's transaction (``tx``, opaque here: see
``bot.core.stores.Tx``), so a board still reads its rows, ranks and chart points in one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.core.domain.identity import Who
    from bot.core.domain.periods import Scope
    from bot.core.learning.online import Belief
    from bot.core.progress.leaderboard import Row
    from bot.core.stores import Tx


@dataclass(frozen=True)
class Group:
    """A study group as members name it."""

    id: int
    name: str


@dataclass(frozen=True)
class StreakRow:
    """A member's streak in one channel, as stored (``bot.core.domain.scoring`` counts it)."""

    member_id: int
    channel_id: int
    current: int | None = 0
    best: int | None = 0
    freezes: int | None = 0
    freezes_used: int | None = 0
    week_of: date | None = None
    week_answers: int | None = 0
    week_done: bool | None = False


class ProgressReads(Protocol):
    """Board rows, the numbers behind the progress charts and a member's own numbers
    (``bot.core.progress.stats``)."""

    async def top(self, tx: Tx, scope: Scope, scope_id: int, since: datetime | None, *,
                  limit: int = 10, workspace_id: int | None = None, raw: bool = False) -> list[Row]:
        """The best ``limit`` members; ``raw`` recomputes all time from answers (for checks)."""
        ...

    async def rank_of(self, tx: Tx, scope: Scope, scope_id: int, since: datetime | None,
                      member_id: int, *, workspace_id: int | None = None,
                      raw: bool = False) -> Row | None: ...

    async def settled_points(self, tx: Tx, member_ids: list[int], since: datetime | None, *,
                             channel_id: int | None = None,
                             workspace_id: int | None = None) -> list[tuple[int, datetime, int]]:
        """(member, when, points) of revealed answers (and, beyond a channel, challenge solves)."""
        ...

    async def answer_times(self, tx: Tx, member_ids: list[int],
                           since: datetime) -> list[tuple[int, datetime]]: ...

    async def topic_accuracy(self, tx: Tx, *, member_ids: list[int] | None = None,
                             channel_id: int | None = None) -> dict[str, float]: ...

    async def group_members(self, tx: Tx, group_id: int) -> list[tuple[int, str]]:
        """(member id, display name) by name."""
        ...

    async def cards_of(self, tx: Tx, member_id: int) -> list[tuple[str, str]]:
        """(question id, FSRS card JSON) of the member's cards."""
        ...

    async def member_answers(self, tx: Tx, member_id: int) -> list[tuple[str, str, bool, bool]]:
        """(question id, topic, correct, on an open question) of the member's answers, oldest first."""
        ...

    async def member_topic_accuracy(self, tx: Tx, member_id: int) -> dict[str, tuple[float, int]]:
        """Topic -> (share right, answers) of the member's answers, open questions left out."""
        ...

    async def streaks_of(self, tx: Tx, member_id: int,
                         channel_id: int | None) -> list[tuple[StreakRow, int | None, str | None]]:
        """(streak, its channel's answers per week or None, the channel's timezone) of the
        member's streaks (in ``channel_id`` only, when given)."""
        ...

    async def weekly_channel(self, tx: Tx, member_id: int,
                             channel_id: int | None) -> list[tuple[int, int | None, str | None]]:
        """(channel id, answers per week, timezone): ``channel_id`` when it counts streaks in
        weeks, else (None) the first weekly-mode channel the member answered in; at most one."""
        ...

    async def week_answers(self, tx: Tx, member_id: int, channel_pk: int, monday: date) -> int:
        """The member's answers to the channel's daily questions of the week from ``monday``."""
        ...

    async def abilities(self, tx: Tx, member_id: int) -> dict[str, Belief]:
        """The member's stored ability per topic (revealed answers only)."""
        ...


class GroupStore(Protocol):
    """Study groups of a workspace. Names are checked (``groups.name_key``) before any query;
    a missing or taken name raises ``groups.GroupError``."""

    async def find(self, tx: Tx, platform: str, workspace: str, name: str) -> Group: ...

    async def create(self, tx: Tx, who: Who, name: str) -> Group:
        """The new group, its creator joined."""
        ...

    async def join(self, tx: Tx, who: Who, name: str) -> tuple[Group, bool]:
        """(group, newly joined)."""
        ...

    async def leave(self, tx: Tx, who: Who, name: str) -> tuple[Group, bool]:
        """(group, was a member)."""
        ...

    async def listing(self, tx: Tx, platform: str, workspace: str) -> list[tuple[str, int]]:
        """(name, member count) of the workspace's groups, by name."""
        ...

    async def groups_of(self, tx: Tx, member_id: int) -> list[str]: ...
