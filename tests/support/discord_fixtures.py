"""Fixtures for the Discord adapter tests: a fake Discord, a real app on SQLite, the real client.

Registered once in tests/conftest.py. A module marked ``pytest.mark.platform("discord")`` gets
``discord_fake`` and ``discord_app`` as ``fake`` and ``app`` (tests/support/platforms.py).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.adapters.discord.bot import DiscordAdapter
from bot.app import App, build_app
from bot.config import Settings
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where
from bot.core.reveal.posts import order_of
from bot.storage.models import Post
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    FakeDiscord,
    User,
    buttons_of,
    text_of,
)

StartAdapter = Callable[[], Awaitable[DiscordAdapter]]


@pytest.fixture(name="discord_fake")
async def discord_fake_fixture() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    yield server
    await server.stop()
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway  # endpoints are process-wide


NINE = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture(name="discord_clock")
def discord_clock_fixture() -> FakeClock:
    return FakeClock(NINE)


def discord_settings(fake: FakeDiscord, database_url: str) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        discord_token=fake.token,
        discord_api_base_url=fake.api_base_url,
        discord_gateway_url=fake.gateway_url,
    )


@pytest.fixture(name="discord_app")
async def discord_app_fixture(
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


ALICE = User(800_000_000_000_000_001, "alice")


async def correct_position(app: App, post_id: int) -> int:
    """Read the post back from the database: tests never depend on question texts."""
    async with app.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        return order_of(post).index(app.library[post.question_id].answer_index)


async def post_daily_now(fake: FakeDiscord) -> dict:
    """`/daily now` as an admin; returns the question message the bot posted in the channel."""
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert "Posted today's question" in text_of(reply)
    posted = await fake.wait_for("POST", f"/channels/{fake.channel_id}/messages")
    [question] = [m for m in fake.in_channel(fake.channel_id) if buttons_of(m)]
    assert question["embeds"] == posted.json["embeds"]
    return question


@asynccontextmanager
async def discord_channels_due_at_nine(
    app: App, fake: FakeDiscord, start_adapter: StartAdapter, clock: FakeClock, count: int
) -> AsyncIterator[list[int]]:
    """``count`` channels of the fake guild, each with its daily at 09:00 UTC every day, set at
    08:59 through the app as ``/daily schedule`` does; then the real adapter and the app started.
    Yields the channel ids with the clock at 09:00, when every daily is due (nothing fired yet:
    tests/support/daily_fanout.py fires them), and closes the app on the way out."""
    clock.set(NINE - timedelta(minutes=1))
    channels = [fake.channel_id + i for i in range(count)]
    fake.channels.update(channels)
    for i, channel in enumerate(channels):
        await app.daily.set_schedule(Where("discord", str(fake.guild_id), str(channel), f"room-{i}"),
                                     at="09:00", timezone="UTC", weekdays="daily")
    await start_adapter()
    await app.start()
    try:
        clock.set(NINE)
        yield channels
    finally:
        await app.close()
