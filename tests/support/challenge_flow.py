"""A member and channel of the /challenge flow, and a publisher that records the verdicts posted.
"""

from __future__ import annotations

import asyncio

from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message

PLATFORM, WORKSPACE = "test", "ws1"
ANA = Who(PLATFORM, WORKSPACE, "u-ana", "ana")
HERE = Where(PLATFORM, WORKSPACE, "c1", "general")


class Recorder:
    """A platform publisher that keeps what the bot posted, by thread."""

    def __init__(self) -> None:
        self.posts: list[tuple[str | None, Message]] = []
        self.changed = asyncio.Event()

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        self.posts.append((thread_of, message))
        self.changed.set()
        return f"m{len(self.posts)}"

    async def update(self, where: Where, ref: str, message: Message) -> None:
        pass

    async def in_thread(self, ref: str, count: int) -> list[Message]:
        async with asyncio.timeout(60):
            while len(found := [m for t, m in self.posts if t == ref]) < count:
                self.changed.clear()
                await self.changed.wait()
        return found


class Ack:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.status: list[Message] = []
        self.retracted: list[str] = []

    async def post(self, ack: Message) -> str | None:
        return await self.recorder.publish(HERE, ack)

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        self.status.append(status)

    async def retract(self, ref: str) -> None:
        self.retracted.append(ref)
