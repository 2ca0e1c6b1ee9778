"""Graceful shutdown: SIGTERM/SIGINT end ``serve`` cleanly within a bounded time.

Cancelling the serving task runs its ``finally`` blocks: adapters stop taking interactions,
flush pending answer-count edits and close their gateway/socket connections, then the app
stops the scheduler, the runner and the database. If that takes longer than the grace period
(Docker's default stop timeout is 10 s), we log it and return anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable
from typing import TypeVar

log = logging.getLogger(__name__)

GRACE_S = 8.0  # leaves Docker's 10 s stop timeout some room
SIGNALS = (signal.SIGTERM, signal.SIGINT)
T = TypeVar("T")


async def run_until_signalled(main: Awaitable[T], *, grace_s: float = GRACE_S) -> T | None:
    """Run ``main``; on SIGTERM/SIGINT cancel it and wait up to ``grace_s`` for its cleanup."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    stop = asyncio.Event()
    installed = []
    for sig in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not main thread
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        log.info("shutdown signal received: closing adapters, flushing edits, stopping")
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=grace_s)
        if not done:
            log.warning("shutdown did not finish within %.0f s; exiting anyway", grace_s)
            return None
        with contextlib.suppress(asyncio.CancelledError):
            return task.result()
        return None
    finally:
        waiter.cancel()
        for sig in installed:
            loop.remove_signal_handler(sig)
