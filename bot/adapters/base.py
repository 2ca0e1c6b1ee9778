"""The contract every chat adapter fulfils, so `serve` can run any mix of them."""

from __future__ import annotations

from typing import Protocol

from bot.core.publisher import Publisher


class Adapter(Protocol):
    platform: str  # "discord", "slack", "console": the Where.platform this adapter serves
    publisher: Publisher

    async def start(self) -> None:
        """Connect/log in so that ``publisher`` works; must not block until shutdown."""
        ...

    async def run_forever(self) -> None:
        """Serve interactions until stopped."""
        ...

    async def close(self) -> None: ...
