"""Answer-count refreshes, folded so a busy question is edited at most once per interval.

Discord and Slack rate-limit message edits per channel. The first click on a quiet message
shows at once; clicks inside the interval are folded into one trailing edit carrying the
latest view. Any other update (the reveal) cancels a pending refresh and is never overtaken
by one: edits of a message are serialized.

The interval is per message, but the platforms' budget is per channel (Discord: 5 message
edits per 5 s; a channel may hold a daily question, a weekly post and a live round open at
once). So refreshes in one channel also share a window: at most ``CHANNEL_REFRESHES`` per
``CHANNEL_WINDOW_S``, leaving the rest of the budget to authoritative edits (the reveal); a
refresh over it waits, folded, for the window to move on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.publisher import (
    ChatPublisher,
    Delivery,
    has_roles_via,
    role_problem_via,
    set_role_via,
)

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 2.0
CHANNEL_REFRESHES = 3  # count refreshes per channel per window (Discord: 5 edits / 5 s)
CHANNEL_WINDOW_S = 5.0


class CoalescingPublisher(ChatPublisher):
    """Every capability of ``inner``; only ``refresh`` folds, everything else forwards."""

    def __init__(self, inner: ChatPublisher, interval_s: float = DEFAULT_INTERVAL_S,
                 channel_refreshes: int = CHANNEL_REFRESHES, window_s: float = CHANNEL_WINDOW_S) -> None:
        self.inner = inner
        self.interval_s = interval_s
        self.channel_refreshes = channel_refreshes
        self.window_s = window_s
        self._sent: dict[tuple[str, str, str], deque[float]] = {}  # refresh times per channel
        self._last: dict[str, float] = {}
        self._latest: dict[str, tuple[Where, Message]] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._flushing = asyncio.Event()

    def _budget_wait(self, where: Where, now: float) -> float:
        """Seconds until the channel's window allows another refresh (0: now)."""
        key = (where.platform, where.workspace, where.channel_id)
        sent = self._sent.get(key)
        while sent and now - sent[0] >= self.window_s:
            sent.popleft()
        if not sent:
            self._sent.pop(key, None)
            return 0.0
        return 0.0 if len(sent) < self.channel_refreshes else sent[0] + self.window_s - now

    def _spend(self, where: Where, now: float) -> None:
        self._sent.setdefault((where.platform, where.workspace, where.channel_id), deque()).append(now)

    def _lock(self, ref: str) -> asyncio.Lock:
        return self._locks.setdefault(ref, asyncio.Lock())

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        return await self.inner.publish(where, message, thread_of=thread_of)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        return await self.inner.publish_once(where, message, delivery)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        return await self.inner.find_sent(where, delivery)

    async def permalink(self, where: Where, ref: str) -> str | None:
        return await self.inner.permalink(where, ref)

    async def tell(self, who: Who, message: Message) -> bool:
        return await self.inner.tell(who, message)

    async def delete(self, where: Where, ref: str) -> None:
        """Removes the message; a refresh still pending for it is dropped first."""
        pending = self._pending.pop(ref, None)
        self._latest.pop(ref, None)
        if pending is not None:
            pending.cancel()
        async with self._lock(ref):
            await self.inner.delete(where, ref)

    async def set_role(self, where: Where, user_id: str, role_id: str, *, held: bool) -> None:
        await set_role_via(self.inner, where, user_id, role_id, held=held)

    def has_roles(self, where: Where) -> bool:
        return has_roles_via(self.inner, where)

    async def role_problem(self, where: Where, role_id: str) -> str | None:
        return await role_problem_via(self.inner, where, role_id)

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
        budget = self._budget_wait(where, now)
        if (ref not in self._pending and budget == 0.0
                and now - self._last.get(ref, float("-inf")) >= self.interval_s):
            self._last[ref] = now
            self._spend(where, now)
            async with self._lock(ref):
                await self.inner.update(where, ref, message)
            return
        self._latest[ref] = (where, message)
        if ref not in self._pending:
            delay = self.interval_s - (now - self._last.get(ref, now))
            self._pending[ref] = asyncio.create_task(self._trailing(ref, max(0.0, delay, budget)))

    async def _trailing(self, ref: str, delay: float) -> None:
        with contextlib.suppress(TimeoutError):  # flush() sends it at once
            await asyncio.wait_for(self._flushing.wait(), delay)
        loop = asyncio.get_running_loop()
        while ref in self._latest and not self._flushing.is_set():
            # another message of the channel may have taken the window meanwhile
            wait = self._budget_wait(self._latest[ref][0], loop.time())
            if wait == 0.0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flushing.wait(), wait)
        latest = self._latest.pop(ref, None)
        if latest is None:
            return
        self._spend(latest[0], loop.time())
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
