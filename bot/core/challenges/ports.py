"""What /challenge needs from storage, as the core states it (issue 32: the core owns its ports).
``bot.storage.challenge_progress.StoredChallengeProgress`` implements it.

The store is also the desk's ``Transactions``: the desk opens one transaction per interaction
and hands its ``Tx`` to each call, so opening a problem still reads the member's solves and
makes the pick current in one, and a hint still reads and moves the count in one. Members are
named by ``Who``; the store finds (or makes) their row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.core.stores import Transactions

if TYPE_CHECKING:
    from datetime import datetime

    from bot.core.content.challenges import Challenge
    from bot.core.domain.identity import Who
    from bot.core.stores import Tx


@dataclass(frozen=True)
class Opened:
    """A problem a member opened, as stored: which one and how many hints they have seen."""

    challenge_id: str
    hints_shown: int


@dataclass(frozen=True)
class BoardLine:
    """One member on a workspace's challenges board."""

    name: str
    points: int
    solved: int


class ChallengeProgressStore(Transactions, Protocol):
    """A member's work per problem: opened, hints, attempts and the first solve (one row each)."""

    async def solved_ids(self, tx: Tx, who: Who) -> set[str]:
        """The problems the member has solved: /challenge offers the others first."""
        ...

    async def make_current(self, tx: Tx, who: Who, challenge: Challenge, now: datetime) -> None:
        """Open ``challenge`` as the member's current problem (the one /submit judges); a
        problem opened before keeps its hints, attempts and solve."""
        ...

    async def latest(self, tx: Tx, who: Who, *, unsolved: bool = False) -> Opened | None:
        """The problem the member opened last (of the unsolved ones only, with ``unsolved``)."""
        ...

    async def show_hints(self, tx: Tx, who: Who, challenge_id: str, shown: int) -> None:
        """The member has now seen ``shown`` hints of the problem."""
        ...

    async def record(self, tx: Tx, who: Who, challenge: Challenge, solved: bool, now: datetime) -> bool:
        """Count a judged attempt (the row made if the problem was never opened); with
        ``solved``, store the first solve and its points once, in one statement, so two
        verdicts racing cannot both score. True when this attempt is that first solve."""
        ...

    async def board(self, tx: Tx, platform: str, workspace: str, limit: int) -> list[BoardLine]:
        """The workspace's members by points of first solves, ties to the earlier last solve."""
        ...

    async def solved_by_topic(self, tx: Tx, who: Who) -> dict[str, int]:
        """How many problems of each topic the member has solved."""
        ...
