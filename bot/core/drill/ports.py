"""What the feature areas beside the drill (practice, boards, rounds) use of it, as ports.

The drill builds them and passes itself, but they type against these protocols and import
nothing of ``bot.core.drill.service``, so the drill can import them without a cycle.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import random

    from bot.core.community_banks.shelf import Shelf
    from bot.core.content.bank import Library
    from bot.core.domain.clock import Clock
    from bot.core.domain.identity import Where
    from bot.core.domain.messages import Message
    from bot.core.publisher import Publisher
    from bot.core.stores import Identities, Transactions


class Basics(Protocol):
    """The database's transactions (opaque: the storage ports read them), the members and
    channels in them, the banks and the community shelf over them, the clock, the random
    source."""

    @property
    def db(self) -> Transactions: ...

    @property
    def identities(self) -> Identities: ...

    @property
    def library(self) -> Library: ...

    @property
    def shelf(self) -> Shelf: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random: ...


class Asked(Protocol):
    """A question posted to a channel: its post and the platform's reference to the message."""

    @property
    def post_id(self) -> int: ...

    @property
    def ref(self) -> str: ...


class ChannelQuestions(Basics, Protocol):
    """A live round also posts questions to the channel and reveals them, as the drill does."""

    async def ask(
        self, where: Where, publisher: Publisher, *, kind: str = ..., topic: str | None = None,
        reveal_after: timedelta | None = ..., round_id: int | None = None,
        local_date: object = None, source: str | None = None,
    ) -> Asked: ...

    async def reveal_post(self, post_id: int, where: Where, publisher: Publisher) -> Message: ...
