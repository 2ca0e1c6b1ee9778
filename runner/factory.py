"""Choose the runner backend by name.

It sits above the backends, which import only `runner.service`, so no cycle runs through
it; each backend is imported when chosen, so a bot without the Redis extra can still run
the embedded one.
"""

from __future__ import annotations

from typing import Any

from runner.service import RunnerService
from runner.settings import RunnerSettings


def make_runner(backend: str, **settings: Any) -> RunnerService:
    """`backend` is "embedded" or "redis"; `settings` override RunnerSettings fields."""
    config = RunnerSettings(**settings)
    if backend == "embedded":
        from runner.embedded import EmbeddedRunner

        return EmbeddedRunner(config)
    if backend == "redis":
        from runner.redis_queue import RedisRunner

        return RedisRunner(config)
    raise ValueError(f"unknown runner backend {backend!r}; use 'embedded' or 'redis'")
