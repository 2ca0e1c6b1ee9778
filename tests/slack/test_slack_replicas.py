"""Two `torchdrill serve` processes in Slack HTTP mode on one PostgreSQL database, as behind a
load balancer: requests alternate between them, and installs, answers, daily posts and an
uninstall behave as with one process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.storage.db import Database
from bot.storage.models import Channel, DailyClaim, Schedule, Workspace
from tests.conftest import TABLES
from tests.support.fake_slack import FakeSlack, SlackSender, User, buttons_of, text_of
from tests.support.slack_fixtures import SIGNING_SECRET
from tests.support.slack_oauth_fixtures import (
    ANN,
    BEN,
    DAN,
    EVE,
    STATE_SECRET,
    TOKEN_KEY,
    WORKSPACES,
    Browser,
    sender,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
START_S = 90.0  # a cold start imports slack-bolt, SQLAlchemy and matplotlib on a busy machine
WAIT_S = 15.0


@dataclass
class Replica:
    """One `torchdrill serve` process; its JSON log lines are read as they come."""

    proc: asyncio.subprocess.Process
    logs: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    reader: asyncio.Task[None] | None = None
    port: int = 0

    async def read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            with contextlib.suppress(ValueError):
                entry = json.loads(raw)
                async with self.changed:
                    self.logs.append(entry)
                    self.changed.notify_all()
        async with self.changed:
            self.logs.append({"msg": "<exited>"})
            self.changed.notify_all()

    async def logged(self, msg: str, timeout: float = START_S) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            async with self.changed:
                while True:
                    found = next((e for e in self.logs if e.get("msg") == msg), None)
                    if found is not None:
                        return found
                    assert self.logs[-1:] != [{"msg": "<exited>"}], self.logs[-5:]
                    await self.changed.wait()

        return await asyncio.wait_for(find(), timeout)

    async def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(self.proc.wait(), WAIT_S * 2) == 0
        if self.reader is not None:
            await self.reader


async def start_replica(env: dict[str, str]) -> Replica:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("DISCORD_", "SLACK_", "DATABASE_", "LOG_", "REDIS_", "RUNNER_"))}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "serve", cwd=REPO, env={**base, **env},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    replica = Replica(proc)
    replica.reader = asyncio.create_task(replica.read())
    return replica


async def ready(replica: Replica) -> Replica:
    """Listening, and its scheduler started (the catch-up of missed daily posts is done)."""
    replica.port = int((await replica.logged("slack HTTP mode listening"))["port"])
    await replica.logged("daily schedules loaded")
    return replica


@pytest.fixture
async def replicas(pg_url: str, oauth_fake: FakeSlack) -> AsyncIterator[Callable[[], Awaitable[
        tuple[Replica, Replica]]]]:
    db = Database(pg_url)
    async with db.engine.begin() as conn:
        await conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    await db.dispose()
    env = {
        "DATABASE_URL": pg_url, "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_CLIENT_ID": oauth_fake.client_id, "SLACK_CLIENT_SECRET": oauth_fake.client_secret,
        "SLACK_STATE_SECRET": STATE_SECRET, "SLACK_TOKEN_KEY": TOKEN_KEY,
        "SLACK_API_BASE_URL": oauth_fake.api_base_url, "HTTP_HOST": "127.0.0.1", "HTTP_PORT": "0",
        "LOG_JSON": "1", "LOG_LEVEL": "INFO",
        # /run is not part of this test: a runner whose queue is unreachable fails fast
        "RUNNER_BACKEND": "redis", "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    running: list[Replica] = []

    async def start_two() -> tuple[Replica, Replica]:
        pair = [await start_replica(env), await start_replica(env)]
        running.extend(pair)
        first, second = await asyncio.gather(*(ready(r) for r in pair))
        return first, second

    yield start_two
    for replica in running:
        if replica.proc.returncode is None:
            replica.proc.kill()
            await replica.proc.wait()
        if replica.reader is not None:
            await replica.reader


def browser_on(fake: FakeSlack, replica: Replica) -> Browser:
    return Browser(f"http://127.0.0.1:{replica.port}", fake)


async def install_across(fake: FakeSlack, start_on: Replica, finish_on: Replica, team: str) -> None:
    """"Add to Slack" started on one replica, Slack's redirect lands on the other."""
    state, cookie = await browser_on(fake, start_on).start()
    code = fake.issue_code(team, WORKSPACES[team][0])
    status, page = await browser_on(fake, finish_on).come_back({"code": code, "state": state}, cookie)
    assert status == 200 and f"torchdrill is now in {WORKSPACES[team][0]}." in page, page


async def test_two_replicas_behind_one_url_install_answer_post_once_and_uninstall(
    oauth_fake: FakeSlack, replicas: Callable[[], Awaitable[tuple[Replica, Replica]]],
    pg_url: str,
) -> None:
    a, b = await replicas()
    await install_across(oauth_fake, a, b, "T1")
    await install_across(oauth_fake, b, a, "T2")

    # Schedules set through either replica; the post time has just passed.
    at = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%H:%M")
    for n, (replica, team, admin) in enumerate(((a, "T1", ANN), (b, "T2", EVE)), start=1):
        await sender(oauth_fake, replica.port, team).command(
            "/daily", admin, f"schedule time:{at} timezone:UTC weekdays:daily")
        reply = await oauth_fake.wait_for("respond", count=n)
        assert text_of(reply.data).startswith("Daily question scheduled"), reply.data

    # A rolling restart: both new replicas catch up on the missed post; the claims decide.
    await asyncio.gather(a.stop(), b.stop())
    a, b = await replicas()
    posts = oauth_fake.sent("chat.postMessage")
    assert sorted((c.data["channel"], c.team) for c in posts) == [
        ("C1DRILLS", "T1"), ("C2DRILLS", "T2")]

    # Answers alternate between the replicas; each member's feedback uses their workspace.
    questions = {team: next(m for m in oauth_fake.in_channel(WORKSPACES[team][1]) if buttons_of(m))
                 for team in ("T1", "T2")}
    clicks: list[tuple[Replica, str, User]] = [(a, "T1", ANN), (b, "T1", BEN), (b, "T2", EVE),
                                               (a, "T2", DAN)]
    for replica, team, who in clicks:
        slack: SlackSender = sender(oauth_fake, replica.port, team)
        question = questions[team]
        status, _ = await slack.click(question, buttons_of(question)[0]["action_id"], who)
        assert status == 200
        feedback = await oauth_fake.wait_for("chat.postEphemeral", user=who.id, timeout=WAIT_S)
        assert feedback.team == team and "You picked *A.*" in text_of(feedback.data)
    for team in ("T1", "T2"):
        await oauth_fake.wait_until(lambda t=team: "2 answered" in text_of(questions[t]), WAIT_S)

    # T1 removes the app through one replica; the other refuses T1 at once, T2 carries on.
    oauth_fake.revoke("T1")
    status, _ = await sender(oauth_fake, b.port, "T1").event({"type": "app_uninstalled"})
    assert status == 200
    await b.logged("slack workspace removed the bot", WAIT_S)
    replies = len(oauth_fake.sent("respond"))
    await sender(oauth_fake, a.port, "T1").command("/drill-help", BEN)
    gone = await oauth_fake.wait_for("respond", count=replies + 1, timeout=WAIT_S)
    assert gone.data["text"].startswith("torchdrill is not installed in this workspace any more.")
    await sender(oauth_fake, a.port, "T2").command("/drill-help", DAN)
    help_reply = await oauth_fake.wait_for("respond", count=replies + 2, timeout=WAIT_S)
    assert "/quiz" in text_of(help_reply.data)
    await asyncio.gather(a.stop(), b.stop())
    db = Database(pg_url)
    try:
        async with db.read() as session:
            rows = await session.execute(
                select(Workspace.external_id, Schedule.paused)
                .join(Channel, Channel.workspace_id == Workspace.id)
                .join(Schedule, Schedule.channel_id == Channel.id))
            assert dict(rows.all()) == {"T1": True, "T2": False}  # T1 posts no more
            assert await session.scalar(select(func.count()).select_from(DailyClaim)) == 2
    finally:
        await db.dispose()
