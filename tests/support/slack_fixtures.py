"""Fixtures for the Slack adapter tests: a fake Slack Web API, a real app on SQLite, and the
real adapter serving HTTP mode on port 0, driven by signed requests.

Registered once in tests/conftest.py. A module marked ``pytest.mark.platform("slack")`` gets
``slack_fake`` and ``slack_app`` as ``fake`` and ``app`` (tests/support/platforms.py).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.adapters.slack.app import EVENTS_PATH, SlackAdapter
from bot.app import App, build_app
from bot.config import Settings, SlackMode
from bot.core.domain.clock import FakeClock
from bot.core.reveal.posts import order_of
from bot.storage.models import Post
from tests.support.fake_slack import FakeSlack, SlackSender, User, buttons_of, text_of

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ALICE = User("U0ALICE", "alice", admin=True)
BOB = User("U0BOB", "bob")
CAROL = User("U0CAROL", "carol")


@pytest.fixture(name="slack_fake")
async def slack_fake_fixture() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    for user in (ALICE, BOB, CAROL):
        server.users[user.id] = user
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(name="slack_clock")
def slack_clock_fixture() -> FakeClock:
    """Sleepers wait until a test moves time, so members can click during a round."""
    return FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC), auto=False)


def slack_settings(fake: FakeSlack, database_url: str, **extra: object) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        slack_bot_token=fake.token,
        slack_signing_secret=SIGNING_SECRET,
        slack_mode=SlackMode.HTTP,
        slack_api_base_url=fake.api_base_url,
        http_host="127.0.0.1",
        http_port=0,
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture(name="slack_app")
async def slack_app_fixture(
    fake: FakeSlack, tmp_path: Path, sqlite_template: Path, slack_clock: FakeClock
) -> AsyncIterator[App]:
    path = tmp_path / "slack.db"
    shutil.copy(sqlite_template, path)
    built = await build_app(
        slack_settings(fake, f"sqlite+aiosqlite:///{path}"), clock=slack_clock, with_runner=False
    )
    yield built
    await built.db.dispose()


@pytest.fixture(name="adapter")
async def adapter_fixture(fake: FakeSlack, app: App) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(app)
    app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    assert [c.method for c in fake.calls] == ["auth.test"]  # start-up checks the bot token once
    fake.calls.clear()  # tests count what members' requests cause
    yield adapter
    await adapter.close()


@pytest.fixture(name="slack")
def sender_fixture(fake: FakeSlack, adapter: SlackAdapter) -> SlackSender:
    return SlackSender(fake, f"http://127.0.0.1:{adapter.port}{EVENTS_PATH}", SIGNING_SECRET)


async def correct_position(app: App, post_id: int) -> int:
    """Read the post back from the database: tests never depend on question texts."""
    async with app.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        return order_of(post).index(app.library[post.question_id].answer_index)


def post_id_of(button: dict) -> int:
    return int(button["action_id"].split(":")[2])


async def post_daily_now(fake: FakeSlack, slack: SlackSender) -> dict:
    status, _ = await slack.command("/daily", ALICE, "now")
    assert status == 200
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral"
    assert "Posted today's question" in text_of(reply.data)
    posted = fake.sent("chat.postMessage", channel=fake.channel_id)
    assert len(posted) == 1
    [question] = [m for m in fake.in_channel() if buttons_of(m)]
    return question
