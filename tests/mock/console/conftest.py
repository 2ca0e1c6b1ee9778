"""The console mock tests' fixtures (this folder only): the mock bank on disk, both databases,
a fake clock at the mock's start, and the app `build_app` wires on them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.storage.db import Database, migrate
from tests.conftest import TABLES, _in_thread
from tests.support.mock_console import BANK, START, make_app


@pytest.fixture
def content(tmp_path: Path) -> Path:
    banks = tmp_path / "banks"
    banks.mkdir()
    (banks / "mock.yaml").write_bytes(BANK)
    return banks


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Both databases: the mock's claims and rows are plain SQL on either."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'mock.db'}"
        _in_thread(migrate, url)  # alembic runs its own event loop
        return url
    url = request.getfixturevalue("pg_url")
    database = Database(url)
    async with database.engine.begin() as conn:
        await conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)}, mock_sessions, mock_items, challenge_progress "
                                   "RESTART IDENTITY CASCADE")
    await database.dispose()
    return str(url)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
async def app(db_url: str, content: Path, clock: FakeClock) -> AsyncIterator[App]:
    built = await make_app(db_url, content, clock)
    yield built
    await built.close()
