"""`torchdrill runner worker`: serve the Redis queue with this host's slots.

One slot per GPU (its sandbox holds only that GPU's device node) plus `cpu_slots` CPU
slots. Refuses to start when the host's isolation is weak, unless explicitly allowed.
"""

from __future__ import annotations

import asyncio
import logging

from runner.isolation import require
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)


def run_worker(settings: RunnerSettings) -> None:
    """Blocks until SIGINT/SIGTERM; raises WeakIsolationError before touching Redis."""
    from runner.redis_queue import build_worker

    isolation = require(settings.allow_weak_isolation)
    log.info("%s", isolation.describe())
    for warning in isolation.warnings:  # e.g. no per-job CPU share: said apart, at warning level
        log.warning("%s", warning)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        build_worker(settings).run()  # arq installs its own SIGINT/SIGTERM handlers
    finally:
        loop.close()
