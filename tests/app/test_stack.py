"""What compose runs, run here: migrate, the bot and the runner worker as the processes their
containers start (entry points, commands, environment, users and installed distributions read
from docker/, see tests/support/stack.py), on a fresh PostgreSQL database and Redis, with the bot
pointed at the fake Discord and the fake Slack. On each platform members post, click, see the
reveal, /run and /submit (judged on the worker: the bot has no torch), reading what members
read; /readyz answers for the operator. One stack serves it all: its start is most of the time.

`make stack-test` builds the real images and runs compose itself (tools/stack_test.sh).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import update
from sqlalchemy.engine import make_url

from bot.core.commands import replies
from bot.core.content.bank import DEFAULT_CONTENT_DIR, load_library
from bot.core.content.challenges import load_challenges
from bot.core.reveal.posts import order_of
from bot.storage.db import Database, head_revision, migrate
from bot.storage.models import Post
from tests.conftest import PG_ADMIN_URL, REQUIRE_SERVICES
from tests.support import stack
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    MODAL,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.support.fake_discord import User as DiscordUser
from tests.support.fake_slack import FakeSlack, SlackSender
from tests.support.fake_slack import User as SlackUser
from tests.support.fake_slack import buttons_of as slack_buttons_of
from tests.support.fake_slack import text_of as slack_text_of

PYTHON = Path(sys.executable)
TORCHDRILL = PYTHON.with_name("torchdrill")
START_S = 90  # a process up and answering (the worker imports torch and probes its sandbox)
RESULT_S = 90  # a /run or /submit result back through Redis
REVEAL_S = 45  # the scheduler's reveal tick runs every 30 s
ALICE = DiscordUser(800_000_000_000_000_011, "alice")
DANA = DiscordUser(800_000_000_000_000_014, "dana")
SLACK_ADMIN = SlackUser("U0STACKADM", "sam", admin=True)
SLACK_MEMBER = SlackUser("U0STACKMEM", "mo")


def require(condition: bool, reason: str) -> None:
    if not condition:
        if REQUIRE_SERVICES:
            pytest.fail(reason)
        pytest.skip(reason)


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def workdir() -> Iterator[Path]:
    """World-traversable (the bot runs as its image's uid), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="torchdrill-stack-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def _admin(sql: str) -> None:
    db = Database(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        async with db.engine.connect() as conn:
            await conn.exec_driver_sql(sql)
    finally:
        await db.dispose()


@pytest.fixture
async def fresh_db() -> AsyncIterator[str]:
    """An empty database (compose's `migrate` creates the schema), dropped afterwards."""
    name = f"torchdrill_stack_{uuid.uuid4().hex[:10]}"
    try:
        await _admin(f'CREATE DATABASE "{name}"')
    except Exception as exc:
        require(False, f"PostgreSQL not usable at {PG_ADMIN_URL}: {exc}")
    yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def redis_prefix() -> AsyncIterator[str]:
    """A queue key prefix of this test's own on the local Redis; its keys removed afterwards."""
    from redis.asyncio import Redis

    client = Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        await client.ping()
    except Exception as exc:
        await client.aclose()
        require(False, f"Redis not reachable at 127.0.0.1:6379: {exc}")
    prefix = f"torchdrill-stack-{uuid.uuid4().hex[:8]}"
    yield prefix
    async for key in client.scan_iter(match=f"{prefix}:*"):
        await client.delete(key)
    await client.aclose()


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    for user in (SLACK_ADMIN, SLACK_MEMBER):
        server.users[user.id] = user
    await server.start()
    yield server
    await server.stop()


# ---------------------------------------------------------------- helpers


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def localize(service: stack.Service, database_url: str, dotenv: dict[str, str]) -> dict[str, str]:
    """The container's environment on this host: compose's `environment` wins over the .env
    file (as in compose), the compose hosts become the local servers."""
    env = {**stack.host_base_env(), **service.image.env, **dotenv, **service.env}
    if "DATABASE_URL" in env:
        url = make_url(env["DATABASE_URL"])
        assert (url.drivername, url.host, url.port) == ("postgresql+asyncpg", "postgres", 5432)
        env["DATABASE_URL"] = database_url
    if "REDIS_URL" in env:
        assert env["REDIS_URL"].startswith("redis://redis:6379/")
        env["REDIS_URL"] = env["REDIS_URL"].replace("redis://redis:", "redis://127.0.0.1:")
    return env


def as_image(service: stack.Service, env: dict[str, str], workdir: Path) -> dict[str, str]:
    """Only the image's Python distributions importable; this checkout's code."""
    site = stack.write_sitecustomize(workdir / f"site-{service.image.dockerfile.name}",
                                     service.name, service.image.extras)
    return {**env, "PYTHONPATH": f"{site}{os.pathsep}{stack.ROOT}"}


def run_service(service: stack.Service, env: dict[str, str], workdir: Path) -> stack.Process:
    cwd = workdir / service.name  # the image's WORKDIR, with its data/ volume
    (cwd / "data").mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        for path in (cwd, cwd / "data"):
            os.chown(path, service.uid, service.uid)
    argv = service.setpriv_prefix() + service.host_argv(TORCHDRILL, PYTHON)
    return start_as(service, service.name, argv, as_image(service, env, workdir), cwd, workdir)


def start_as(service: stack.Service, name: str, argv: list[str], env: dict[str, str], cwd: Path,
             workdir: Path) -> stack.Process:
    """Started as the image's user, or not at all (CI fails, a developer's run skips)."""
    try:
        process = stack.start(name, argv, env, cwd=cwd, uid=service.uid, log_dir=workdir)
    except stack.CannotRunAs as exc:
        require(False, f"{name} cannot run as its image's uid {service.uid}: {exc}")
        raise  # not reached: require failed or skipped
    return process


def uid_of(process: stack.Process) -> int:
    """The real uid the process runs as now (after its setpriv)."""
    status = Path(f"/proc/{process.popen.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


async def wait_ready(process: stack.Process, url: str) -> dict:
    """/readyz answering 200 (bounded); fails with the process's output if it died."""
    deadline = time.monotonic() + START_S
    last = "no answer"
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if process.popen.poll() is not None:
                pytest.fail(f"{process.name} exited {process.popen.returncode}:\n{process.output()}")
            try:
                async with session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as response:
                    if response.status == 200:
                        return await response.json()
                    last = f"{response.status} {await response.text()}"
            except aiohttp.ClientError as exc:
                last = repr(exc)
            await asyncio.sleep(0.25)  # polling an HTTP endpoint: no event to wait on
    pytest.fail(f"{url} not ready within {START_S} s (last: {last}):\n{process.output()}")


def post_id_of(question: dict) -> int:
    return int(buttons_of(question)[0]["custom_id"].split(":")[2])


async def right_button(db: Database, question: dict) -> str:
    """The custom id of the correct choice, read back from the post (never from texts)."""
    library = load_library(DEFAULT_CONTENT_DIR)
    async with db.read() as session:
        post = await session.get(Post, post_id_of(question))
        assert post is not None
        position = order_of(post).index(library[post.question_id].answer_index)
    return buttons_of(question)[position]["custom_id"]


# ---------------------------------------------------------------- the images' Python


@pytest.mark.parametrize(("service", "refused", "present"), [
    ("bot", "torch", ("discord", "slack_bolt", "asyncpg", "redis", "arq")),
    ("runner", "discord", ("torch", "arq", "redis")),
])
def test_a_process_started_as_an_image_sees_only_that_images_distributions(
    workdir: Path, service: str, refused: str, present: tuple[str, ...]
) -> None:
    spec = stack.Service.read(service)
    env = as_image(spec, stack.host_base_env(), workdir)
    code = f"import {', '.join(present)}\ntry:\n    import {refused}\nexcept ModuleNotFoundError as e:\n    print(e)"
    done = subprocess.run([str(PYTHON), "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"No module named '{refused}' (not installed in the {service} image)"


def test_the_bot_image_has_no_torch_and_the_runner_image_has_it() -> None:
    assert "torch" in stack.modules_outside(stack.Service.read("bot").image.extras)
    assert "torch" not in stack.modules_outside(stack.Service.read("runner").image.extras)


def test_a_process_that_cannot_run_as_its_images_user_is_not_started_at_all(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never as root instead: a checkout other users cannot read is a reason, not a fallback."""
    checkout = workdir / "checkout"
    for package in ("bot", "runner"):
        (checkout / package).mkdir(parents=True)
        (checkout / package / "__init__.py").touch()
    (checkout / "bot").chmod(0o700)
    monkeypatch.setattr(stack, "ROOT", checkout)
    with pytest.raises(stack.CannotRunAs, match="uid 10001"):
        stack.start("bot", ["true"], {}, cwd=workdir, uid=10001, log_dir=workdir)
    assert not (workdir / "bot.log").exists()  # nothing was started


# ---------------------------------------------------------------- serve without a token


async def test_serve_without_a_token_in_a_container_answers_readyz(workdir: Path) -> None:
    """No platform token and no terminal (a container being set up): HTTP only, until SIGTERM."""
    db_file = workdir / "bot" / "data" / "drill.db"
    db_file.parent.mkdir(parents=True)
    url = f"sqlite+aiosqlite:///{db_file}"
    await asyncio.to_thread(migrate, url)
    service = stack.Service.read("bot")
    port = free_port()
    env = {**stack.host_base_env(), **service.image.env, "DATABASE_URL": url,
           "HTTP_PORT": str(port), "RUNNER_BACKEND": "embedded"}
    if os.geteuid() == 0:
        for path in (db_file.parent.parent, db_file.parent, db_file):
            os.chown(path, service.uid, service.uid)
    bot = start_as(service, "serve", [str(TORCHDRILL), "serve"], as_image(service, env, workdir),
                   workdir / "bot", workdir)
    try:
        ready = await wait_ready(bot, f"http://127.0.0.1:{port}/readyz")
        assert ready["status"] == "ok"
        assert {"database", "schema"} <= set(ready["checks"])
        assert uid_of(bot) == service.uid
    finally:
        code = bot.stop()
    assert code == 0, bot.output()
    assert "no Discord or Slack token set and no terminal: serving only HTTP" in bot.output()


# ---------------------------------------------------------------- the whole stack


async def test_the_compose_stack_serves_members_on_discord_and_slack(
    workdir: Path, fresh_db: str, redis_prefix: str, discord: FakeDiscord, slack: FakeSlack
) -> None:
    runner = stack.Service.read("runner")
    require(os.geteuid() == 0 or runner.uid != 0,
            "the runner image runs as root (its sandbox needs it): run this test as root")
    require(shutil.which("bwrap") is not None, "bubblewrap is not installed")
    require(not runner.setpriv_prefix() or shutil.which("setpriv") is not None,
            "setpriv (util-linux) is needed to give the worker compose's capability set")
    port = free_port()
    dotenv = {  # the operator's .env: platform settings, plus what stands in for the port mapping
        "DISCORD_TOKEN": discord.token, "DISCORD_API_BASE_URL": discord.api_base_url,
        "DISCORD_GATEWAY_URL": discord.gateway_url,
        "SLACK_BOT_TOKEN": slack.token, "SLACK_APP_TOKEN": slack.app_token,
        "SLACK_API_BASE_URL": slack.api_base_url,
        "RUNNER_KEY_PREFIX": redis_prefix, "HTTP_PORT": str(port),
    }
    processes: list[stack.Process] = []
    db = Database(fresh_db)
    try:
        # compose: migrate runs once and exits 0 before the bot starts
        migrate_service = stack.Service.read("migrate")
        migrating = run_service(migrate_service, localize(migrate_service, fresh_db, dotenv), workdir)
        assert migrating.popen.wait(timeout=START_S) == 0, migrating.output()
        assert f"to {head_revision()}" in migrating.output()

        processes.append(run_service(runner, localize(runner, fresh_db, dotenv), workdir))
        bot_service = stack.Service.read("bot")
        processes.append(run_service(bot_service, localize(bot_service, fresh_db, dotenv), workdir))
        bot, worker = processes[1], processes[0]
        ready = await wait_ready(bot, f"http://127.0.0.1:{port}/readyz")
        assert ready["status"] == "ok"
        assert {"database", "schema", "redis"} <= set(ready["checks"])
        assert (uid_of(bot), uid_of(worker)) == (bot_service.uid, runner.uid)
        await discord.connected(timeout=START_S)
        await discord.wait_until(lambda: discord.identifies, timeout=START_S)

        on_discord = await daily_and_click_on_discord(discord, db)
        on_slack = await daily_and_click_on_slack(slack, db)
        await close_both(db, on_discord, on_slack)  # the scheduler reveals them meanwhile
        await run_on_discord(discord, worker)
        await run_on_slack(slack, worker)
        await submit_on_discord(discord, bot)
        await submit_on_slack(slack, bot)
        await revealed_both(discord, on_discord, slack, on_slack)
    finally:
        for process in reversed(processes):
            process.stop()
        await db.dispose()
    assert processes[1].popen.returncode == 0, processes[1].output()  # SIGTERM: a clean exit


async def daily_and_click_on_discord(fake: FakeDiscord, db: Database) -> dict:
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    assert "Posted today's question" in text_of(await fake.original_of(token, timeout=30))
    question = await fake.wait_until(
        lambda: next((m for m in fake.in_channel(fake.channel_id) if buttons_of(m)), None))
    assert "0 answered" in text_of(question)

    token = await fake.click(int(question["id"]), await right_button(db, question), ALICE)
    feedback = await fake.original_of(token, timeout=30)
    assert feedback["flags"] & EPHEMERAL and "Correct" in text_of(feedback)
    await fake.wait_until(lambda: "1 answered" in text_of(fake.messages[int(question["id"])]),
                          timeout=30)
    return question


async def close_both(db: Database, on_discord: dict, on_slack: dict) -> None:
    """The reveal time comes for both posts: moved, not waited for."""
    posts = [post_id_of(on_discord), int(slack_buttons_of(on_slack)[0]["action_id"].split(":")[2])]
    async with db.write() as session:
        moved = await session.execute(update(Post).where(Post.id.in_(posts))
                                      .values(closes_at=datetime.now(UTC) - timedelta(seconds=1)))
        assert moved.rowcount == 2  # type: ignore[attr-defined]  # a CursorResult


async def revealed_both(discord: FakeDiscord, on_discord: dict, slack: FakeSlack,
                        on_slack: dict) -> None:
    """A scheduler tick (every 30 s) revealed both posts: results replace the question (the
    answers' buttons gone), the explanation in its thread, on each platform."""
    revealed = await discord.wait_until(
        lambda: (m := discord.messages[int(on_discord["id"])])
        and [b["label"] for b in buttons_of(m)] == ["🚩 Report"] and m,
        timeout=REVEAL_S)
    assert "1 answered" in text_of(revealed) and "100% correct" in text_of(revealed)
    await discord.wait_for("POST", f"/channels/{on_discord['id']}/messages", timeout=30)
    [explanation] = discord.in_channel(int(on_discord["id"]))  # thread id == starter message id
    assert "Why:" in text_of(explanation)

    await slack.wait_until(  # the fake edits the stored message in place
        lambda: [b["text"]["text"] for b in slack_buttons_of(on_slack)] == ["🚩 Report"], timeout=30)
    assert "1 answered" in slack_text_of(on_slack) and "100% correct" in slack_text_of(on_slack)
    [explanation] = await slack.wait_until(
        lambda: slack.in_channel(thread_ts=on_slack["ts"]), timeout=30)
    assert "Why:" in slack_text_of(explanation)


async def open_run_modal(fake: FakeDiscord) -> dict:
    """/run opens its modal once the bot's runner client is up (bounded); until then the
    member reads that it is starting, and nothing else."""
    deadline = time.monotonic() + START_S
    while True:
        token = await fake.slash("run", DANA)
        opened = await fake.callback_of(token, timeout=30)
        if opened.json["type"] == MODAL:
            return opened.json["data"]
        assert text_of(opened.json["data"]).strip() == replies.RUNNER_STARTING
        assert time.monotonic() < deadline, f"the runner still starting after {START_S} s"
        await asyncio.sleep(1)  # the member tries again a moment later


async def run_on_discord(fake: FakeDiscord, worker: stack.Process) -> None:
    modal = await open_run_modal(fake)
    field = modal["components"][0]["components"][0]
    code = "import torch\nprint(torch.arange(4).sum().item())"
    token = await fake.submit_modal(modal, {field["custom_id"]: code}, DANA)
    assert (await fake.callback_of(token, timeout=30)).json["type"] == DEFERRED_CHANNEL_MESSAGE
    ack = await fake.wait_until(
        lambda: (m := fake.messages.get(fake.originals.get(token, 0))) and "queued" in text_of(m) and m,
        timeout=30)
    try:
        await fake.wait_for("POST", f"/channels/{int(ack['id'])}/messages", timeout=RESULT_S)
    except TimeoutError:
        pytest.fail(f"no /run result within {RESULT_S} s; worker output:\n{worker.output()}")
    [result] = fake.in_channel(int(ack["id"]))
    assert "Finished" in text_of(result)
    assert "```text\n6\n```" in text_of(result)


async def daily_and_click_on_slack(fake: FakeSlack, db: Database) -> dict:
    sender = SlackSender(fake, url="", signing_secret="")
    await fake.connected(timeout=START_S)  # a command sent before the socket is up is lost
    await fake.push("slash_commands", sender.command_payload("/daily", SLACK_ADMIN, "now"))
    question = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if slack_buttons_of(m)), None), timeout=30)
    first = slack_buttons_of(question)[0]["action_id"]
    library = load_library(DEFAULT_CONTENT_DIR)
    async with db.read() as session:
        post = await session.get(Post, int(first.split(":")[2]))
        assert post is not None
        right = order_of(post).index(library[post.question_id].answer_index)
    action = slack_buttons_of(question)[right]["action_id"]
    await fake.push("interactive", sender.click_payload(question, action, SLACK_MEMBER))
    feedback = await fake.wait_for("chat.postEphemeral", user=SLACK_MEMBER.id, timeout=30)
    assert "Correct" in slack_text_of(feedback.data)
    await fake.wait_until(lambda: "1 answered" in slack_text_of(question), timeout=30)
    return question


async def slack_modal(fake: FakeSlack, command: str, text: str = "") -> dict:
    """The member's slash command over Socket Mode; the modal it opens."""
    opened = len(fake.sent("views.open"))
    sender = SlackSender(fake, url="", signing_secret="")
    await fake.push("slash_commands", sender.command_payload(command, SLACK_MEMBER, text))
    return (await fake.wait_for("views.open", count=opened + 1, timeout=30)).data["view"]


async def submit_slack_modal(fake: FakeSlack, view: dict, code: str, ack_says: str) -> dict:
    """The code typed into the modal's one box and submitted; the acknowledgement posted in the
    channel, once it says `ack_says` (the bot posts it, then edits in where the job stands)."""
    [block] = view["blocks"]
    sender = SlackSender(fake, url="", signing_secret="")
    before = {m["ts"] for m in fake.in_channel()}
    await fake.push("interactive", sender.view_payload(
        view, {block["block_id"]: {block["element"]["action_id"]: code}}, SLACK_MEMBER))
    return await fake.wait_until(
        lambda: next((m for m in fake.in_channel()
                      if m["ts"] not in before and ack_says in slack_text_of(m)), None), timeout=30)


async def in_slack_thread(fake: FakeSlack, ack: dict, process: stack.Process, what: str) -> str:
    """The text of the first reply in the acknowledgement's thread (bounded)."""
    try:
        reply = await fake.wait_until(lambda: next(iter(fake.in_channel(thread_ts=ack["ts"])), None),
                                      timeout=RESULT_S)
    except TimeoutError:
        pytest.fail(f"no {what} on Slack within {RESULT_S} s; {process.name}:\n{process.output()[-4000:]}")
    return slack_text_of(reply)


async def run_on_slack(fake: FakeSlack, worker: stack.Process) -> None:
    view = await slack_modal(fake, "/run")
    ack = await submit_slack_modal(fake, view, "import torch\nprint(torch.arange(4).sum().item())",
                                   ack_says="queued")
    assert f"/run by {SLACK_MEMBER.name}" in slack_text_of(ack)
    result = await in_slack_thread(fake, ack, worker, "/run result")
    assert "Finished" in result and "```\n6\n```" in result
    assert f"<@{SLACK_MEMBER.id}>" in result


async def submit_on_slack(fake: FakeSlack, bot: stack.Process) -> None:
    sender = SlackSender(fake, url="", signing_secret="")
    shown_before = len(fake.sent("respond"))
    await fake.push("slash_commands", sender.command_payload("/challenge", SLACK_MEMBER, "autograd 2"))
    shown = await fake.wait_for("respond", count=shown_before + 1, timeout=30)
    assert shown.data["response_type"] == "ephemeral"
    [challenge] = [c for c in load_challenges().challenges if c.title in slack_text_of(shown.data)]
    view = await slack_modal(fake, "/submit")
    assert view["blocks"][0]["element"]["initial_value"] == challenge.stub[:3000]
    ack = await submit_slack_modal(fake, view, challenge.reference, ack_says="Judging")
    assert f"{SLACK_MEMBER.name} submitted a solution" in slack_text_of(ack)
    verdict = await in_slack_thread(fake, ack, bot, "/submit verdict")
    assert f"✅ Solved: {challenge.title}" in verdict
    assert f"+{challenge.points} points (first solve)" in verdict


async def submit_on_discord(fake: FakeDiscord, bot: stack.Process) -> None:
    token = await fake.slash("challenge", DANA, topic="autograd", difficulty=2)
    shown = text_of(await fake.original_of(token, timeout=30))
    [challenge] = [c for c in load_challenges().challenges if c.title in shown]
    token = await fake.slash("submit", DANA)
    opened = await fake.callback_of(token, timeout=30)
    assert opened.json["type"] == MODAL
    modal = opened.json["data"]
    field = modal["components"][0]["components"][0]
    assert field["value"] == challenge.stub[:3000]
    token = await fake.submit_modal(modal, {field["custom_id"]: challenge.reference}, DANA)
    try:
        ack = await fake.wait_until(
            lambda: (m := fake.messages.get(fake.originals.get(token, 0))) and "Judging" in text_of(m) and m,
            timeout=30)
    except TimeoutError:  # e.g. "Something went wrong": the bot judging without torch
        reply = fake.messages.get(fake.originals.get(token, 0))
        pytest.fail(f"/submit shows {text_of(reply) if reply else 'nothing'!r}; bot:\n"
                    f"{bot.output()[-4000:]}")
    await fake.wait_for("POST", f"/channels/{int(ack['id'])}/messages", timeout=RESULT_S)
    [verdict] = fake.in_channel(int(ack["id"]))
    assert f"✅ Solved: {challenge.title}" in text_of(verdict)
    assert f"+{challenge.points} points (first solve)" in text_of(verdict)
