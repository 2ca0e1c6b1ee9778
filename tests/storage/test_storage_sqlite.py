"""SQLite specifics: statements run inline, but another process's write lock never blocks
the event loop; the write waits asynchronously and then succeeds."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError

from bot.storage import db as db_module
from bot.storage.db import Database
from bot.storage.models import Workspace
from tests.support.sqlite_lock import hold_lock

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants


@pytest.fixture
def sqlite_db(tmp_path: Path, sqlite_template: Path) -> Path:
    path = tmp_path / "lock.db"
    shutil.copy(sqlite_template, path)
    return path


async def test_write_waits_for_another_process_without_blocking_the_loop(sqlite_db: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{sqlite_db}")
    holder = hold_lock(sqlite_db, 1.0)
    ticks = 0
    gaps: list[float] = []

    async def ticker() -> None:
        nonlocal ticks
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    async with db.write() as session:
        session.add(Workspace(platform="test", external_id="mine"))
    waited = time.monotonic() - started
    task.cancel()
    holder.wait(timeout=10)
    assert waited >= 0.5  # it really waited for the other process's commit
    assert ticks >= waited / 0.01 * 0.5  # and the loop kept running meanwhile
    # never stopped for a busy handler's wait (it was 100 ms a time, a third of the wait):
    # long gaps add up to a small share, allowing a loaded machine's occasional hiccup
    stalled = sum(g for g in gaps if g > 0.05)
    assert stalled < 0.15 * waited, sorted(gaps)[-5:]
    async with db.read() as session:
        assert (await session.execute(text("PRAGMA busy_timeout"))).scalar() == 0
    async with db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Workspace)) == 2
    await db.dispose()


async def test_write_gives_up_after_the_wait_limit(sqlite_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db_module, "WRITE_LOCK_WAIT_S", 0.3)
    db = Database(f"sqlite+aiosqlite:///{sqlite_db}")
    holder = hold_lock(sqlite_db, 2.0)
    with pytest.raises(OperationalError, match="locked"):
        async with db.write() as session:
            await session.execute(text("SELECT 1"))
    holder.wait(timeout=10)
    await db.dispose()


async def test_pragmas_wal_and_foreign_keys(sqlite_db: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{sqlite_db}")
    async with db.read() as session:
        assert (await session.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
        assert (await session.execute(text("PRAGMA foreign_keys"))).scalar() == 1
    await db.dispose()
    assert sqlite3.connect(sqlite_db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
