"""What the channel features need from storage, as the core states it (issue 32: the core
owns its ports; ``bot.storage`` implements them and the wiring hands the implementations in).

``Transactions`` is the unit of work: ``read()`` and ``write()`` open one transaction and yield
a ``Tx`` the core never looks into; it only hands it back to a storage function or port, so a
feature that reads several things in one transaction still does so in one. A port method
that takes a ``Tx`` works inside the caller's transaction (``Identities``, ``CommunityRows``);
the others own theirs: each call is the one transaction the feature made before.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.core.domain.identity import Where, Who

# A storage transaction (today a SQLAlchemy session), opaque to the core.
Tx = Any


class Transactions(Protocol):
    """Short transactions, one per interaction (``bot.storage.db.Database``)."""

    def read(self) -> AbstractAsyncContextManager[Tx]: ...

    def write(self) -> AbstractAsyncContextManager[Tx]:
        """Commits on success, rolls back on error."""
        ...


# ---- members and channels ---------------------------------------------------------------


@dataclass(frozen=True)
class MemberRef:
    """A member's row as most interactions need it: its id, its workspace's, its name."""

    id: int
    workspace_id: int
    display_name: str


@dataclass(frozen=True)
class ChannelRef:
    """A channel's row as the boards and stats read it: its id and its timezone."""

    id: int
    timezone: str


class Identities(Protocol):
    """The member and channel rows (``bot.storage.identity.StoredIdentities``), found or made
    on first sight inside the caller's transaction, so the features key their rows by id."""

    async def member(self, tx: Tx, who: Who) -> MemberRef:
        """The member (and their workspace) made if new; a changed display name updated."""
        ...

    async def channel(self, tx: Tx, where: Where) -> ChannelRef:
        """The channel (and its workspace) made if new, in UTC."""
        ...


# ---- live rounds --------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """One member's score in a round, as the standings list it."""

    name: str
    points: int
    correct: int


@dataclass(frozen=True)
class RoundSettings:
    count: int
    seconds: int
    topic: str | None


class RoundStore(Protocol):
    """The rounds of a channel (``bot.storage.rounds.StoredRounds``)."""

    async def start(self, where: Where, who: Who, *, count: int, seconds: int,
                    topic: str | None) -> int | None:
        """Register a round started now (the channel and member rows made if new): its id,
        or None when one is already running in the channel."""
        ...

    async def settings(self, round_id: int) -> RoundSettings: ...

    async def standings(self, round_id: int, limit: int) -> Sequence[Standing]:
        """Points, then the earliest answer first."""
        ...

    async def finish(self, round_id: int, now: datetime) -> None: ...

    async def finish_all_open(self, now: datetime) -> None:
        """After a crash: no round is still playing, so none may stay open."""
        ...


# ---- community questions ------------------------------------------------------------------


@dataclass(frozen=True)
class CommunityRow:
    """A community question as stored: its bank's state and community, its data."""

    enabled: bool  # the bank is enabled
    community: tuple[str, str]  # (platform, workspace) of the bank
    retired: bool
    data: Any  # the question as JSON, ``bot.core.content.community.load_question`` reads it


class CommunityRows(Protocol):
    """The community banks (``bot.storage.community.StoredCommunityRows``), read inside the
    caller's transaction."""

    async def stamp(self, tx: Tx) -> tuple[object, ...]:
        """A small aggregate that changes whenever any bank does (one query)."""
        ...

    async def rows(self, tx: Tx) -> list[CommunityRow]:
        """Every community question, by bank then slug."""
        ...
