"""Fixtures for the console adapter tests: a real app on a migrated SQLite file, built by
``build_app``, and the real console adapter writing into a buffer.

Registered once in tests/conftest.py. A module marked ``pytest.mark.platform("console")`` gets
``console_app`` as ``app`` (tests/support/platforms.py), and the ``console`` adapter on it.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bot.adapters.console.play import ConsoleAdapter
from bot.adapters.console.screen import Screen
from bot.app import App, build_app
from bot.config import Settings
from bot.core.domain.clock import FakeClock
from bot.storage.db import migrate


class Term:
    """A Screen whose console writes into a buffer; ``take`` returns what appeared since."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.console = Console(file=self.buffer, width=160, color_system=None, force_terminal=False)
        self.seen = 0

    def take(self) -> str:
        text = self.buffer.getvalue()[self.seen :]
        self.seen = len(self.buffer.getvalue())
        return text


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"
    migrate(url)
    return url


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 4, 10, 0, tzinfo=UTC))


@pytest.fixture(name="console_app")
async def console_app_fixture(db_url: str, fake_clock: FakeClock) -> AsyncIterator[App]:
    built = await build_app(Settings(database_url=db_url), clock=fake_clock, with_runner=False)
    yield built
    await built.close()


@pytest.fixture
def term() -> Term:
    return Term()


@pytest.fixture
def console(app: App, term: Term, tmp_path: Path) -> ConsoleAdapter:
    adapter = ConsoleAdapter(app, name="ana", screen=Screen(term.console),
                             files_dir=tmp_path / "files")
    app.publisher.register(adapter.platform, adapter.publisher)
    return adapter


async def say(console: ConsoleAdapter, term: Term, line: str) -> str:
    assert await console.handle(line)
    return term.take()
