"""What /bank and /suggest need from storage, as the core states it (issue 32: the core owns
its ports). ``bot.storage.community_banks.StoredBanks`` implements them.

``BankStore.community(who)`` is one write transaction on one community's banks and
suggestions (``CommunityTx``): a suggestion approved into a bank, the bank's new version and
the shelf's reload happen in one, as they did when the desk held the session itself.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.core.domain.identity import Who
    from bot.core.stores import Tx


class BankRace(Exception):
    """Another replica stored the same bank meanwhile (a unique key was taken): the
    transaction is void; running it again replaces what that replica stored."""


@dataclass(frozen=True)
class StoredBank:
    """A community bank as stored: its number (question ids carry it), slug and latest version."""

    id: int
    slug: str
    title: str
    version: int
    enabled: bool
    source: str  # the YAML as uploaded (or as approvals extended it)


@dataclass(frozen=True)
class StoredSuggestion:
    """A member's suggestion (``data``: the question as JSON, ``load_question`` reads it)."""

    id: int
    author_id: str
    author_name: str
    status: str  # pending | approved | rejected
    data: Any


class CommunityTx(Protocol):
    """One transaction on the banks and suggestions of one community."""

    @property
    def tx(self) -> Tx:
        """The open transaction, for ``Shelf.refresh``."""
        ...

    async def bank(self, slug: str) -> StoredBank | None: ...

    async def banks(self) -> list[tuple[StoredBank, int]]:
        """Every bank of the community with its count of served (not retired) questions, by slug."""
        ...

    async def served(self, bank_id: int) -> list[Any]:
        """The data of the bank's questions not retired, by slug."""
        ...

    async def put_bank(self, slug: str, title: str, source: str, *, by: str, now: datetime,
                       limit: int) -> StoredBank | None:
        """Create the bank (version 1) or make a new version of it, enabled; None when it is new
        and the community has ``limit`` banks already. Raises ``BankRace`` when another
        replica created it meanwhile."""
        ...

    async def put_questions(self, bank: StoredBank, questions: dict[str, Any]) -> None:
        """The bank's questions (slug → data) at ``bank.version``; those it had and no longer
        has are retired, not deleted, so older posts still render. Raises ``BankRace``."""
        ...

    async def set_enabled(self, bank_id: int, enabled: bool, now: datetime) -> None: ...

    async def pending(self, author_id: str) -> tuple[int, int]:
        """(suggestions waiting in the community, of them by ``author_id``)."""
        ...

    async def pending_count(self) -> int: ...

    async def next_pending(self) -> StoredSuggestion | None:
        """The oldest suggestion waiting for review."""
        ...

    async def suggestion(self, number: int) -> StoredSuggestion | None:
        """Suggestion ``number`` if it is this community's."""
        ...

    async def add_suggestion(self, author_id: str, author_name: str, data: Any, now: datetime) -> int:
        """Queue a suggestion (pending): its number."""
        ...

    async def set_suggestion_data(self, number: int, data: Any) -> None:
        """Replace the question of a suggestion (once its number is known, its id names it)."""
        ...

    async def approve(self, number: int, bank_id: int, *, by: str, now: datetime) -> None: ...

    async def reject(self, number: int, reason: str, *, by: str, now: datetime) -> None: ...


class BankStore(Protocol):
    """The community banks and the suggestions queue (``bot.storage.community_banks``)."""

    def community(self, who: Who) -> AbstractAsyncContextManager[CommunityTx]:
        """A write transaction on ``who``'s community (its workspace row made if new)."""
        ...

    def read(self) -> AbstractAsyncContextManager[Tx]:
        """A read transaction, for ``Shelf.refresh`` alone."""
        ...
