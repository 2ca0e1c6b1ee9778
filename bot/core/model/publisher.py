"""The outbound port: how the core posts into a chat. Each adapter implements it."""

from __future__ import annotations

from typing import Protocol

from bot.core.model.identity import Where
from bot.core.model.messages import Message


class Publisher(Protocol):
    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        """Post ``message`` in the channel (or in the thread of message ``thread_of``); return its ref."""
        ...

    async def update(self, where: Where, ref: str, message: Message) -> None:
        """Replace the content of a message posted earlier."""
        ...
