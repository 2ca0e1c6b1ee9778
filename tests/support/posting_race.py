"""Posting exactly once, driven as the platforms would drive it: replicas (an app each, with the
real Discord or Slack publisher) on a shared database, and what the fake channel shows.

Used by the daily, weekly and posting exactly-once tests; those modules are marked
``pytest.mark.platform("discord", "slack")`` so each test runs against both fakes, and use the
``quick_backoff`` fixture (registered in tests/conftest.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from bot.app import App, build_app
from bot.config import Settings
from bot.core.domain.clock import FakeClock
from tests.support.daily_process import real_publisher
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack

WAIT_S = 5.0
POSTS_PATH = "/channels/"


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.adapters.slack.publisher.ONCE_BACKOFF_S", (0.05, 0.05, 0.05))


def platform(fake: FakeDiscord | FakeSlack) -> str:
    return "discord" if isinstance(fake, FakeDiscord) else "slack"


def channel_messages(fake: FakeDiscord | FakeSlack) -> list[dict[str, Any]]:
    if isinstance(fake, FakeDiscord):
        return fake.in_channel(fake.channel_id)
    return fake.in_channel()


def ref_of(fake: FakeDiscord | FakeSlack, message: dict[str, Any]) -> str:
    if isinstance(fake, FakeDiscord):
        return f"{fake.channel_id}:{message['id']}"
    return f"{fake.channel_id}:{message['ts']}"


def hold_answer(fake: FakeDiscord | FakeSlack) -> asyncio.Event:
    """The platform creates the post at once but answers only when the event is set."""
    return fake.hold_answer(POSTS_PATH) if isinstance(fake, FakeDiscord) else fake.hold_answer("chat.postMessage")


def accepted(fake: FakeDiscord | FakeSlack) -> bool:
    if isinstance(fake, FakeDiscord):
        return bool(fake.accepted_unanswered)
    return fake.accepted_unanswered("chat.postMessage")


async def eventually(fake: FakeDiscord | FakeSlack, probe: Callable[[], Any]) -> Any:
    return await fake.wait_until(probe, WAIT_S)


async def replica(db_url: str, fake: FakeDiscord | FakeSlack, clock: FakeClock) -> tuple[App, Any]:
    """A bot process: its own app and publisher on the shared database."""
    app = await build_app(Settings(_env_file=None, database_url=db_url), clock=clock, with_runner=False)
    publisher, close = await real_publisher(platform(fake), fake.api_base_url)
    app.publisher.register(platform(fake), publisher)
    return app, close


async def stop(*replicas: tuple[App, Any]) -> None:
    for app, close in replicas:
        await close()
        await app.db.dispose()


class CrashBeforeRecord:
    """A claim store whose next record of a send fails: the process died between the platform
    accepting the post and the database recording it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.armed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def record_sent(self, key: Any, token: str, now: datetime, ref: str) -> bool:
        if self.armed:
            self.armed = False
            raise ConnectionError("the process died before recording the send")
        result: bool = await self.inner.record_sent(key, token, now, ref)
        return result


def thread_messages(server: FakeDiscord | FakeSlack, challenge_ref: str) -> list[dict[str, Any]]:
    if isinstance(server, FakeDiscord):
        return server.in_channel(int(challenge_ref.split(":")[1]))
    channel, ts = challenge_ref.split(":")[:2]
    return server.in_channel(channel, thread_ts=ts)
