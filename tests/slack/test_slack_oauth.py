"""Slack for many workspaces: "Add to Slack" end to end against the fake Slack, two installed
workspaces side by side on one deployment, failed installs, uninstalls and the purge."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from sqlalchemy import func, select, text, update

from bot.adapters.slack.app import SlackAdapter
from bot.app import App
from bot.config import ConfigError
from bot.core.domain.clock import FakeClock
from bot.observability import logs
from bot.storage.db import migrate
from bot.storage.models import (
    Answer,
    Channel,
    Member,
    Schedule,
    Workspace,
    slack_bots,
    slack_installations,
    slack_oauth_states,
)
from tests.support.cli import run_cli
from tests.support.fake_slack import FakeSlack, SlackSender, User, buttons_of, text_of
from tests.support.slack_fixtures import correct_position, post_id_of
from tests.support.slack_oauth_fixtures import ANN, BEN, DAN, EVE, TOKEN_KEY, Browser, sender

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

WAIT_S = 8.0


async def count(app: App, table: Any, **where: str) -> int:
    async with app.db.read() as session:
        query = select(func.count()).select_from(table)
        for column, value in where.items():
            query = query.where(table.c[column] == value)
        return int(await session.scalar(query) or 0)


async def until(probe: Callable[[], Any], timeout: float = WAIT_S) -> None:
    """Events are acknowledged before their listener runs: wait (bounded) for its effect."""
    async def loop() -> None:
        while not await probe():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(loop(), timeout)


class Raw(logging.Handler):
    """What the loggers were handed, before redaction."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def daily_now(fake: FakeSlack, slack: SlackSender, who: User, n: int) -> dict:
    """``/daily now`` by ``who``; returns the question posted in the sender's channel."""
    status, _ = await slack.command("/daily", who, "now")
    assert status == 200
    reply = await fake.wait_for("respond", count=n)
    assert "Posted today's question" in text_of(reply.data)
    return await fake.wait_until(
        lambda: next((m for m in fake.in_channel(slack.channel) if buttons_of(m)), None))


async def test_add_to_slack_stores_an_encrypted_token_and_serves_the_workspace(
    oauth_fake: FakeSlack, browser: Browser, oauth_adapter: SlackAdapter, oauth_app: App,
    restore_logging: None,
) -> None:
    stream = io.StringIO()
    logs.setup_logging("DEBUG", True, stream=stream, settings=oauth_app.settings)
    raw = Raw()
    logging.getLogger().handlers.insert(0, raw)  # before ours, which redacts records in place

    status, page = await browser.install("T1")
    assert status == 200
    assert "<h1>torchdrill is installed</h1>" in page and "torchdrill is now in One Corp." in page
    assert "/invite @torchdrill" in page and "/daily schedule" in page
    token = oauth_fake.token_of("T1")
    assert token is not None and token.startswith("xoxb-T1-")

    # At rest: one bot row for T1, its token a Fernet ciphertext of the real one.
    async with oauth_app.db.read() as session:
        [row] = (await session.execute(select(slack_bots))).mappings().all()
        [install] = (await session.execute(select(slack_installations))).mappings().all()
    assert (row["team_id"], row["team_name"], row["bot_user_id"]) == ("T1", "One Corp", "U0BOTT1")
    assert "xoxb" not in row["bot_token"] and "xoxb" not in install["bot_token"]
    assert Fernet(TOKEN_KEY.encode()).decrypt(row["bot_token"].encode()).decode() == token
    assert await count(oauth_app, slack_oauth_states) == 0  # the state was used up

    # The installed workspace works: a command's post goes out with T1's own token.
    t1 = sender(oauth_fake, oauth_adapter, "T1")
    question = await daily_now(oauth_fake, t1, ANN, 1)
    [post] = oauth_fake.sent("chat.postMessage", channel="C1DRILLS")
    assert post.team == "T1" and len(buttons_of(question)) == 4

    # The token passed through the loggers (slack-sdk logs responses at DEBUG) but no line shows it.
    assert any(token in line for line in raw.lines)
    logging.getLogger("torchdrill.test").warning("a token in a log line: %s", token)
    written = stream.getvalue()
    assert token not in written
    assert "a token in a log line: [REDACTED]" in written


async def test_two_workspaces_on_one_deployment_never_see_each_other(
    oauth_fake: FakeSlack, browser: Browser, oauth_adapter: SlackAdapter, oauth_app: App,
    slack_clock: FakeClock,
) -> None:
    for team in ("T1", "T2"):
        status, page = await browser.install(team)
        assert status == 200, page
    t1, t2 = sender(oauth_fake, oauth_adapter, "T1"), sender(oauth_fake, oauth_adapter, "T2")

    # /daily admins are per workspace: Ann (admin of T1) is nobody in T2, whose token asks.
    await t2.command("/daily", ANN, "now")
    refused = await oauth_fake.wait_for("respond")
    assert refused.data["text"] == (
        "Only workspace admins (or the bot's configured admins) can use /daily now.")
    assert not oauth_fake.sent("users.info")  # user_not_found: Ann is no member of T2
    assert [c.team for c in oauth_fake.calls if c.method == "users.info"] == ["T2"]

    q1 = await daily_now(oauth_fake, t1, ANN, 2)
    q2 = await daily_now(oauth_fake, t2, EVE, 3)
    assert {(c.data["channel"], c.team) for c in oauth_fake.sent("chat.postMessage")} == {
        ("C1DRILLS", "T1"), ("C2DRILLS", "T2")}

    # Each member answers in their own workspace; the counts update with that workspace's token.
    for slack, question, who in ((t1, q1, ANN), (t1, q1, BEN), (t2, q2, EVE), (t2, q2, DAN)):
        buttons = buttons_of(question)
        right = await correct_position(oauth_app, post_id_of(buttons[0]))
        await slack.click(question, buttons[right]["action_id"], who)
        feedback = await oauth_fake.wait_for("chat.postEphemeral", user=who.id)
        assert "Correct" in text_of(feedback.data) and feedback.team == slack.team
    assert {c.team for c in oauth_fake.sent("chat.update")} <= {"T1", "T2"}
    assert all(c.team == ("T1" if c.data["channel"] == "C1DRILLS" else "T2")
               for c in oauth_fake.sent("chat.update"))

    slack_clock.advance(hours=25)
    assert await oauth_app.drill.reveal_due(oauth_app.publisher) == 2

    # Boards: each workspace's board lists its own members only.
    await t1.command("/leaderboard", BEN, "workspace all")
    board1 = text_of((await oauth_fake.wait_for("respond", count=4)).data)
    await t2.command("/leaderboard", DAN, "workspace all")
    board2 = text_of((await oauth_fake.wait_for("respond", count=5)).data)
    assert "ann" in board1 and "ben" in board1 and "eve" not in board1 and "dan" not in board1
    assert "eve" in board2 and "dan" in board2 and "ann" not in board2 and "ben" not in board2
    async with oauth_app.db.read() as session:
        rows = await session.execute(
            select(Workspace.external_id, func.count(Answer.id))
            .join(Answer, Answer.workspace_id == Workspace.id).group_by(Workspace.external_id))
        assert dict(rows.all()) == {"T1": 2, "T2": 2}
    # bolt checks a token with auth.test once (at the install, then at its first request).
    assert sorted(c.team for c in oauth_fake.calls if c.method == "auth.test") == [
        "T1", "T1", "T2", "T2"]
    # Every Web API call carried one workspace's token (response URLs need none).
    assert not [c for c in oauth_fake.calls
                if c.team is None and c.method not in ("oauth.v2.access", "respond", "upload")]


@pytest.mark.parametrize("case", ["forged", "replayed", "expired", "other-browser", "cancelled"])
async def test_a_bad_or_expired_state_gets_a_clear_page_and_installs_nothing(
    oauth_fake: FakeSlack, browser: Browser, oauth_app: App, case: str
) -> None:
    state, cookie = await browser.start()
    code = oauth_fake.issue_code("T1", "One Corp")
    query = {"code": code, "state": state}
    if case == "forged":  # a state this deployment never signed
        query["state"] = cookie = "0f8a5c1e-1111-2222-3333-444455556666.deadbeef"
    elif case == "replayed":  # a state that was already used for an install
        first, _ = await browser.install("T2")
        assert first == 200
        spent_state, spent_cookie = state, cookie
        await browser.come_back({"code": oauth_fake.issue_code("T2", "Two Labs"),
                                 "state": spent_state}, spent_cookie)  # uses it up
        query["state"], cookie = spent_state, spent_cookie
    elif case == "expired":
        async with oauth_app.db.write() as session:
            await session.execute(update(slack_oauth_states).values(
                expire_at=text("'2000-01-01 00:00:00'")))
    elif case == "other-browser":
        cookie = None
    else:
        query = {"error": "access_denied", "state": state}
    bots_before = await count(oauth_app, slack_bots)

    status, page = await browser.come_back(query, cookie)

    expected = {
        "forged": (400, "This install link has expired or was already used."),
        "replayed": (400, "This install link has expired or was already used."),
        "expired": (400, "This install link has expired or was already used."),
        "other-browser": (400, "This install was started in another browser, or its link has expired."),
        "cancelled": (200, "The install was cancelled on Slack&#x27;s consent screen."),
    }[case]
    assert (status, expected[1] in page) == (expected[0], True), page
    assert "<h1>torchdrill was not installed</h1>" in page
    assert 'href="/slack/install"' in page
    assert await count(oauth_app, slack_bots, team_id="T1") == 0
    assert await count(oauth_app, slack_bots) == bots_before
    assert code in oauth_fake.codes  # Slack was never asked to exchange the code
    assert oauth_fake.token_of("T1") is None
    if case == "expired":  # the next install link clears states that can no longer be used
        await browser.start()
        assert await count(oauth_app, slack_oauth_states) == 1


async def test_an_install_page_request_never_answers_500(browser: Browser) -> None:
    for path in ("/slack/oauth_redirect", "/slack/oauth_redirect?state=&code=",
                 "/slack/oauth_redirect?state=%ff%fe&code=x"):
        status, page, _ = await browser.get(path, cookie="x")
        assert status == 400 and "torchdrill was not installed" in page, (path, status)


async def schedule(fake: FakeSlack, slack: SlackSender, who: User, n: int) -> None:
    await slack.command("/daily", who, "schedule time:09:00 timezone:UTC")
    reply = await fake.wait_for("respond", count=n)
    assert "Daily question scheduled" in text_of(reply.data)


async def paused_by_team(app: App) -> dict[str, bool]:
    async with app.db.read() as session:
        rows = await session.execute(
            select(Workspace.external_id, Schedule.paused)
            .join(Channel, Channel.workspace_id == Workspace.id)
            .join(Schedule, Schedule.channel_id == Channel.id))
        return dict(rows.all())


@pytest.mark.parametrize("event", [
    {"type": "app_uninstalled"},
    {"type": "tokens_revoked", "tokens": {"bot": ["U0BOTT1"]}},
])
async def test_uninstalling_one_workspace_forgets_its_token_and_stops_its_posts(
    oauth_fake: FakeSlack, browser: Browser, oauth_adapter: SlackAdapter, oauth_app: App,
    event: dict,
) -> None:
    for team in ("T1", "T2"):
        assert (await browser.install(team))[0] == 200
    t1, t2 = sender(oauth_fake, oauth_adapter, "T1"), sender(oauth_fake, oauth_adapter, "T2")
    await schedule(oauth_fake, t1, ANN, 1)
    await schedule(oauth_fake, t2, EVE, 2)
    jobs = {job.id for job in oauth_app.scheduler.scheduler.get_jobs() if job.id.startswith("daily:")}
    assert len(jobs) == 2

    oauth_fake.revoke("T1")  # Slack invalidates the token, then tells the app
    status, _ = await t1.event(event)
    assert status == 200

    async def forgotten() -> bool:
        return await count(oauth_app, slack_bots, team_id="T1") == 0 and \
            (await paused_by_team(oauth_app)).get("T1") is True

    await until(forgotten)
    assert await count(oauth_app, slack_installations, team_id="T1") == 0
    assert await count(oauth_app, slack_bots, team_id="T2") == 1
    assert await paused_by_team(oauth_app) == {"T1": True, "T2": False}
    left = {job.id for job in oauth_app.scheduler.scheduler.get_jobs() if job.id.startswith("daily:")}
    assert len(left) == 1 and left < jobs

    # The posts of T1 stop; T2 carries on as before.
    async with oauth_app.db.read() as session:
        pks = dict((await session.execute(
            select(Workspace.external_id, Channel.id)
            .join(Channel, Channel.workspace_id == Workspace.id))).all())
    assert await oauth_app.daily.fire(pks["T1"]) is None
    assert await oauth_app.daily.fire(pks["T2"]) is not None
    assert [c.data["channel"] for c in oauth_fake.sent("chat.postMessage")] == ["C2DRILLS"]

    # A command from the uninstalled workspace reaches nothing of ours.
    before = len(oauth_fake.calls)
    status, _ = await t1.command("/daily", ANN, "now")
    assert status == 200
    reply = await oauth_fake.wait_for("respond", count=3)
    assert reply.data["text"] == (
        'torchdrill is not installed in this workspace any more. '
        'A workspace admin can add it again with "Add to Slack".')
    assert not [c for c in oauth_fake.calls[before:] if c.team == "T1"]

    # Installed again: it answers with the new token; the schedule waits for /daily resume.
    assert (await browser.install("T1"))[0] == 200
    await t1.command("/daily", ANN, "status")
    status_reply = await oauth_fake.wait_for("respond", count=4)
    assert status_reply.data["text"].startswith("⏸ paused · 09:00 UTC on mon,tue,wed,thu,fri")
    await t1.command("/daily", ANN, "resume")
    resumed = await oauth_fake.wait_for("respond", count=5)
    assert resumed.data["text"] == "Daily questions resumed."
    assert await paused_by_team(oauth_app) == {"T1": False, "T2": False}


async def test_purge_command_removes_one_workspace_and_keeps_the_other(
    oauth_fake: FakeSlack, browser: Browser, oauth_adapter: SlackAdapter, oauth_app: App,
) -> None:
    for team in ("T1", "T2"):
        assert (await browser.install(team))[0] == 200
    t1, t2 = sender(oauth_fake, oauth_adapter, "T1"), sender(oauth_fake, oauth_adapter, "T2")
    for n, (slack, who) in enumerate(((t1, ANN), (t2, EVE)), start=1):
        question = await daily_now(oauth_fake, slack, who, n)
        await slack.click(question, buttons_of(question)[0]["action_id"], who)
        await oauth_fake.wait_for("chat.postEphemeral", user=who.id)
    env = {"DATABASE_URL": oauth_app.settings.database_url}

    done = await asyncio.to_thread(run_cli, ["slack", "purge", "T1", "--yes"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("purged workspace T1: 1 member, 1 channel, 1 answer; "
                                   "2 stored install row(s) removed")
    async with oauth_app.db.read() as session:
        teams = (await session.scalars(select(Workspace.external_id))).all()
        members = (await session.scalars(select(Member.user_id))).all()
    assert teams == ["T2"] and members == [EVE.id]
    assert await count(oauth_app, slack_bots, team_id="T1") == 0
    assert await count(oauth_app, slack_bots, team_id="T2") == 1

    again = await asyncio.to_thread(run_cli, ["slack", "purge", "T1", "--yes"], env)
    assert again.stdout.strip() == ("nothing stored for workspace T1; "
                                    "0 stored install row(s) removed")
    refused = await asyncio.to_thread(run_cli, ["slack", "purge", "T2"], env)  # no --yes, no tty
    assert refused.returncode == 1 and await count(oauth_app, slack_bots, team_id="T2") == 1


def test_distributed_manifest_has_the_redirect_url_scopes_and_uninstall_events() -> None:
    done = run_cli(["slack", "manifest", "--url", "https://drills.example.org", "--distributed"], {})
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    assert manifest["oauth_config"]["redirect_urls"] == [
        "https://drills.example.org/slack/oauth_redirect"]
    assert set(manifest["oauth_config"]["scopes"]["bot"]) >= {
        "commands", "chat:write", "users:read", "channels:history"}
    events = manifest["settings"]["event_subscriptions"]
    assert events == {"request_url": "https://drills.example.org/slack/events",
                      "bot_events": ["app_uninstalled", "tokens_revoked", "app_home_opened"]}
    assert manifest["settings"]["socket_mode_enabled"] is False
    assert {c["url"] for c in manifest["features"]["slash_commands"]} == {
        "https://drills.example.org/slack/events"}
    alone = run_cli(["slack", "manifest", "--distributed"], {})
    assert alone.returncode == 2
    assert alone.stderr.strip() == ("--distributed needs --url https://<host>: Slack sends "
                                    "installs back to https://<host>/slack/oauth_redirect")


async def test_token_keys_rotate_and_a_row_no_key_opens_reads_as_not_installed(
    oauth_app: App,
) -> None:
    from slack_sdk.oauth.installation_store.models.installation import Installation

    from bot.adapters.slack.installs import installation_store

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()

    def store(keys: str) -> Any:
        return installation_store(oauth_app.settings.model_copy(
            update={"slack_token_key": SecretStr(keys)}), oauth_app.db)

    await store(old).async_save(Installation(
        app_id="A0FAKE", team_id="T9", team_name="Nine", user_id="U9",
        bot_token="xoxb-T9-old-token-123456", bot_id="B9", bot_user_id="U9BOT"))
    rotated = store(f"{new},{old}")
    assert await rotated.bot_token("T9") == "xoxb-T9-old-token-123456"  # older rows still open
    await rotated.async_save(Installation(
        app_id="A0FAKE", team_id="T8", team_name="Eight", user_id="U8",
        bot_token="xoxb-T8-new-token-123456", bot_id="B8", bot_user_id="U8BOT"))
    assert await store(new).bot_token("T8") == "xoxb-T8-new-token-123456"  # sealed with the newest
    assert await store(new).bot_token("T9") is None  # the old key dropped: not installed
    with pytest.raises(ConfigError, match="SLACK_TOKEN_KEY is not a Fernet key"):
        store("not-a-key")


@pytest.mark.parametrize(("env", "expected"), [
    ({"SLACK_TOKEN_KEY": ""}, "SLACK_TOKEN_KEY is not set (tokens are stored encrypted; "),
    ({"SLACK_STATE_SECRET": ""}, "SLACK_STATE_SECRET is not set (signs OAuth install states"),
    ({"SLACK_MODE": "socket", "SLACK_APP_TOKEN": "xapp-1-x"},
     "SLACK_CLIENT_ID (OAuth installs) needs SLACK_MODE=http"),
    ({"SLACK_BOT_TOKEN": "xoxb-one-workspace"},
     "set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID (OAuth installs, many workspaces), not both"),
])
def test_serve_names_the_missing_or_conflicting_oauth_setting(
    tmp_path: Path, env: dict[str, str], expected: str,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'ok.db'}"
    migrate(url)
    full = {"DATABASE_URL": url, "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "s" * 32,
            "SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c" * 16,
            "SLACK_STATE_SECRET": "state" * 8, "SLACK_TOKEN_KEY": TOKEN_KEY, **env}
    result = run_cli(["serve"], full)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert expected in result.stderr.replace("\n", " "), result.stderr[-2000:]
