"""The Redis runner: the test server, runner settings with a key prefix of their own (`conf`) and a
worker serving them (`worker`); the fixtures are registered in tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from runner.isolation import Level, detect
from runner.redis_queue import build_worker
from runner.settings import RunnerSettings

REDIS_URL = os.environ.get("TORCHDRILL_TEST_REDIS", "redis://127.0.0.1:6379/0")
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


SUBMITTED: list[str] = []


@pytest.fixture
async def conf(tmp_path: Path) -> AsyncIterator[RunnerSettings]:
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except OSError as exc:
        await client.aclose()
        if REQUIRE:
            raise
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")
    prefix = f"torchdrill-test:{uuid.uuid4().hex[:8]}"
    yield RunnerSettings(
        redis_url=REDIS_URL, key_prefix=prefix, cpu_slots=1, gpus=[], timeout_s=10,
        cpu_time_s=10, memory_mb=512, max_procs=64, queue_cap=3, rate_per_minute=30,
        journal_path=tmp_path / "unused",
        allow_weak_isolation=not REQUIRE and detect().level is Level.WEAK)
    doomed = [k async for k in client.scan_iter(f"{prefix}*")]
    for job_id in SUBMITTED:
        doomed += [f"arq:job:{job_id}", f"arq:in-progress:{job_id}", f"arq:result:{job_id}",
                   f"arq:retry:{job_id}"]
    if doomed:
        await client.delete(*doomed)
    await client.aclose()


@contextlib.asynccontextmanager
async def worker(conf: RunnerSettings) -> AsyncIterator[None]:
    w = build_worker(conf, handle_signals=False)
    task = asyncio.create_task(w.main())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await w.close()
