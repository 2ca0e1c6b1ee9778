"""Answer-count refreshes, folded so a busy question is edited at most once per interval.

Discord and Slack rate-limit message edits per channel. The first click on a quiet message
shows at once; clicks inside the interval are folded into one trailing edit carrying the
latest view. Any other update (the reveal) cancels a pending refresh and is never overtaken
by one: edits of a message are serialized.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.play import delivery as delivery_port
from bot.core.play.delivery import Delivery

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 2.0


class CoalescingPublisher:
    def __init__(self, inner: Publisher, interval_s: float = DEFAULT_INTERVAL_S) -> None:
        self.inner = inner
        self.interval_s = interval_s
        self._last: dict[str, float] = {}
        self._latest: dict[str, tuple[Where, Message]] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._flushing = asyncio.Event()

    def _lock(self, ref: str) -> asyncio.Lock:
        return self._locks.setdefault(ref, asyncio.Lock())

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        return await self.inner.publish(where, message, thread_of=thread_of)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        return await delivery_port.publish_once(self.inner, where, message, delivery)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        return await delivery_port.find_sent(self.inner, where, delivery)

    async def tell(self, who: Who, message: Message) -> bool:
        return await delivery_port.tell_privately(self.inner, who, message)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        """An authoritative edit: drops any pending refresh of the same message."""
        pending = self._pending.pop(ref, None)
        self._latest.pop(ref, None)
        if pending is not None:
            pending.cancel()
        async with self._lock(ref):
            await self.inner.update(where, ref, message)
            self._last[ref] = asyncio.get_running_loop().time()

    async def refresh(self, where: Where, ref: str, message: Message) -> None:
        """A best-effort edit (the answer count): now if the message is quiet, else folded."""
        now = asyncio.get_running_loop().time()
        if ref not in self._pending and now - self._last.get(ref, float("-inf")) >= self.interval_s:
            self._last[ref] = now
            async with self._lock(ref):
                await self.inner.update(where, ref, message)
            return
        self._latest[ref] = (where, message)
        if ref not in self._pending:
            delay = self.interval_s - (now - self._last.get(ref, now))
            self._pending[ref] = asyncio.create_task(self._trailing(ref, max(0.0, delay)))

    async def _trailing(self, ref: str, delay: float) -> None:
        with contextlib.suppress(TimeoutError):  # flush() sends it at once
            await asyncio.wait_for(self._flushing.wait(), delay)
        latest = self._latest.pop(ref, None)
        if latest is None:
            return
        async with self._lock(ref):
            if self._pending.get(ref) is not asyncio.current_task():
                return  # an authoritative update replaced this refresh meanwhile
            self._pending.pop(ref, None)
            try:
                await self.inner.update(latest[0], ref, latest[1])
            except Exception:  # the answers are recorded; only the displayed count is stale
                log.warning("could not refresh the answer count of %s", ref, exc_info=True)
            self._last[ref] = asyncio.get_running_loop().time()

    async def flush(self) -> None:
        """Send pending refreshes now, without waiting out the interval (shutdown, tests)."""
        self._flushing.set()
        try:
            await asyncio.gather(*list(self._pending.values()), return_exceptions=True)
        finally:
            self._flushing.clear()
