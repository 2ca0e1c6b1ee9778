"""Runner test support: a result collector, and a real embedded runner wired to an app (the
``runs`` fixture, registered in tests/conftest.py: the app of the test gets a RunDesk on it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.app import App
from bot.core.runs.desk import RunDesk
from runner.jobs import JobResult


class Collector:
    """Records delivered results so a test can wait for a given job."""

    def __init__(self) -> None:
        self.results: dict[str, JobResult] = {}
        self._event = asyncio.Event()

    async def __call__(self, result: JobResult) -> None:
        self.results[result.job_id] = result
        self._event.set()

    async def wait(self, job_id: str, timeout: float = 60) -> JobResult:
        async with asyncio.timeout(timeout):
            while job_id not in self.results:
                self._event.clear()
                await self._event.wait()
        return self.results[job_id]


@asynccontextmanager
async def embedded_run_desk(app: App, tmp_path: Path) -> AsyncIterator[RunDesk]:
    from runner.factory import make_runner

    runner = make_runner(
        "embedded",
        warm=False,
        allow_weak_isolation=True,
        gpus=[],
        timeout_s=20,
        journal_path=tmp_path / "journal.sqlite3",
        rate_per_minute=30,
    )
    desk = RunDesk(runner, app.publisher)
    app.runs = desk
    await runner.start()
    try:
        yield desk
    finally:
        await runner.close()
        app.runs = None


@pytest.fixture
async def runs(app: App, tmp_path: Path) -> AsyncIterator[RunDesk]:
    """A real embedded runner behind the app's /run and /submit, for the test's duration."""
    async with embedded_run_desk(app, tmp_path) as desk:
        yield desk
