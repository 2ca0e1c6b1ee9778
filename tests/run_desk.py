"""A real embedded runner wired to an app's publisher, for the adapters' /run tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.app import App
from bot.core.runs import RunDesk


@asynccontextmanager
async def embedded_run_desk(app: App, tmp_path: Path) -> AsyncIterator[RunDesk]:
    from runner.service import make_runner

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
