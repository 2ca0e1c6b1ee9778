"""Fixtures for the Discord adapter tests: a fake Discord, a real app on SQLite, the real client.

Test modules import the ``*_fixture`` functions; pytest knows them by their short names.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.adapters.discord.bot import DiscordAdapter
from bot.app import App, build_app
from bot.config import Settings
from bot.core.model.clock import FakeClock
from tests.fake_discord import FakeDiscord

StartAdapter = Callable[[], Awaitable[DiscordAdapter]]


@pytest.fixture(name="fake")
async def fake_fixture() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    yield server
    await server.stop()
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway  # endpoints are process-wide


@pytest.fixture(name="discord_clock")
def discord_clock_fixture() -> FakeClock:
    return FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))  # a Wednesday


def discord_settings(fake: FakeDiscord, database_url: str) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        discord_token=fake.token,
        discord_api_base_url=fake.api_base_url,
        discord_gateway_url=fake.gateway_url,
    )


@pytest.fixture(name="app")
async def app_fixture(
    fake: FakeDiscord, tmp_path: Path, sqlite_template: Path, discord_clock: FakeClock
) -> AsyncIterator[App]:
    path = tmp_path / "discord.db"
    shutil.copy(sqlite_template, path)
    built = await build_app(
        discord_settings(fake, f"sqlite+aiosqlite:///{path}"),
        clock=discord_clock,
        with_runner=False,
    )
    yield built
    await built.db.dispose()


@pytest.fixture(name="start_adapter")
async def start_adapter_fixture(app: App) -> AsyncIterator[StartAdapter]:
    """Start (or, called again, restart) the real discord.py adapter against the fake."""
    running: list[DiscordAdapter] = []

    async def start() -> DiscordAdapter:
        for old in running:
            await old.close()
        running.clear()
        adapter = DiscordAdapter(app)
        app.publisher.register(adapter.platform, adapter.publisher)
        running.append(adapter)
        await adapter.start()
        return adapter

    yield start
    for adapter in running:
        await adapter.close()
