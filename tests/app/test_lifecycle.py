"""Graceful shutdown: SIGTERM lands the pending answer-count edit, closes everything, exits 0
within Docker's 10 s; the images run under an init so the signal reaches the bot."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

import pytest
import yaml

from bot.adapters.slack.app import EVENTS_PATH, SlackAdapter
from bot.app import App, run_adapters
from bot.lifecycle import run_until_signalled
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE, BOB, CAROL, SIGNING_SECRET

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]

ROOT = Path(__file__).resolve().parents[2]
STOP_S = 10.0  # docker stop's default grace before SIGKILL
WAIT_S = 5.0


async def bounded(probe, timeout: float = WAIT_S) -> None:
    """Poll a condition no fake call announces (a trailing edit being scheduled)."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


async def test_sigterm_flushes_the_pending_edit_closes_and_returns(fake: FakeSlack, app: App):
    adapter = SlackAdapter(app)
    serving = asyncio.create_task(run_until_signalled(run_adapters(app, [adapter])))
    await bounded(lambda: adapter.http is not None)
    slack = SlackSender(fake, f"http://127.0.0.1:{adapter.port}{EVENTS_PATH}", SIGNING_SECRET)
    await slack.command("/daily", ALICE, "now")
    question = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if buttons_of(m)), None)
    )
    action = buttons_of(question)[0]["action_id"]
    await slack.click(question, action, BOB)
    await fake.wait_until(lambda: "1 answered" in text_of(question))
    await slack.click(question, action, CAROL)  # inside the interval: folded, not yet sent
    await bounded(lambda: bool(adapter.publisher._pending))
    assert "1 answered" in text_of(question)

    started = time.monotonic()
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(serving, STOP_S)
    assert time.monotonic() - started < STOP_S
    assert "2 answered" in text_of(question)  # the edit landed before the exit
    assert adapter.http is None and not app.scheduler.scheduler.running
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers removed again


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
async def test_torchdrill_serve_exits_0_on_sigterm_within_10_s(fake: FakeSlack, tmp_path, sqlite_template):
    db = tmp_path / "serve.db"
    shutil.copy(sqlite_template, db)
    port = free_port()
    env = {
        **os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{db}", "SLACK_BOT_TOKEN": fake.token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_MODE": "http",
        "SLACK_API_BASE_URL": fake.api_base_url, "HTTP_HOST": "127.0.0.1", "HTTP_PORT": str(port),
        "RUNNER_BACKEND": "redis", "REDIS_URL": "redis://127.0.0.1:1/0",  # no runner: /run says so
    }
    serve = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("torchdrill")), "serve", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    try:
        slack = SlackSender(fake, f"http://127.0.0.1:{port}{EVENTS_PATH}", SIGNING_SECRET)
        deadline = time.monotonic() + 60  # the child imports the whole bot first
        while True:
            try:
                status, _ = await slack.command("/help", ALICE)
                break
            except OSError:
                if time.monotonic() > deadline or serve.returncode is not None:
                    raise
                await asyncio.sleep(0.2)
        assert status == 200
        started = time.monotonic()
        serve.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(serve.wait(), STOP_S)
        elapsed = time.monotonic() - started
    finally:
        if serve.returncode is None:
            serve.kill()
            await serve.wait()
    stderr = (await serve.stderr.read()).decode()
    assert code == 0, stderr[-2000:]
    assert elapsed < STOP_S
    assert "shutdown signal received" in stderr


def test_compose_runs_every_torchdrill_service_under_an_init() -> None:
    """As PID 1 without an init, a process ignores SIGTERM: docker stop would SIGKILL it."""
    services = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())["services"]
    ours = {name: s for name, s in services.items() if "postgres" not in name and "redis" not in name}
    assert set(ours) == {"migrate", "bot", "runner"}
    assert {name: s.get("init") for name, s in ours.items()} == dict.fromkeys(ours, True)
