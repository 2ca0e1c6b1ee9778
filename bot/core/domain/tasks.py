"""Work that outlives the interaction that started it (live rounds), owned by the core.

Commands acknowledge first and keep running afterwards; this keeps a reference to each task
(so it is not garbage-collected), logs failures instead of losing them, and cancels what is
left when the app closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[object]] = set()

    def spawn(self, work: Awaitable[object], name: str) -> None:
        async def guarded() -> object:
            try:
                return await work
            except Exception:
                log.exception("background task %s failed", name)
                return None

        task = asyncio.create_task(guarded(), name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def cancel_all(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
