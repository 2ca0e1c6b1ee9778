"""The contract every chat adapter fulfils, and the narrow ports the app gives them.

Adapters type against these protocols, never against ``bot.app.App``: the wiring root
imports the adapters, the adapters import nothing of the wiring root, so there is no cycle.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from bot.core.publisher import ChatPublisher

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.core.commands.dispatch import CommandDesk
    from bot.core.daily.service import DailyPosting
    from bot.core.drill.service import Drill
    from bot.observability.health import Check, Detail


class Adapter(Protocol):
    platform: str  # "discord", "slack", "console": the Where.platform this adapter serves

    @property
    def publisher(self) -> ChatPublisher:
        """Every posting capability of the platform (read only: the app never swaps it; a wrapper
        forgetting a capability fails mypy)."""
        ...

    async def start(self) -> None:
        """Connect/log in so that ``publisher`` works; must not block until shutdown."""
        ...

    async def run_forever(self) -> None:
        """Serve interactions until stopped."""
        ...

    async def close(self) -> None: ...


class BotServices(Protocol):
    """What a platform adapter may use: its settings and the command port."""

    @property
    def settings(self) -> Settings: ...

    @property
    def commands(self) -> CommandDesk: ...

    def health_checks(self) -> dict[str, Check | Detail]: ...


class PlaygroundServices(BotServices, Protocol):
    """The console also plays the channel's daily post itself (today, reveal)."""

    @property
    def daily(self) -> DailyPosting: ...

    @property
    def drill(self) -> Drill: ...

    @property
    def runner_task(self) -> asyncio.Task[str | None] | None: ...
