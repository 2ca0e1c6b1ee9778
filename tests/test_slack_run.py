"""`/run` end to end: modal or "Run code" shortcut → real embedded runner → output in a thread."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.slack.handlers import CODE_ACTION_ID, CODE_BLOCK_ID, RUN_SHORTCUT_ID
from bot.app import App
from bot.core.play.runs import RunDesk
from tests.fake_slack import FakeSlack, SlackSender, text_of
from tests.run_desk import embedded_run_desk
from tests.slack_fixtures import (  # noqa: F401 - fixtures
    BOB,
    CAROL,
    adapter_fixture,
    app_fixture,
    fake_fixture,
    sender_fixture,
    slack_clock_fixture,
)

RESULT_TIMEOUT = 60


@pytest.fixture
async def runs(app: App, tmp_path: Path) -> AsyncIterator[RunDesk]:
    async with embedded_run_desk(app, tmp_path) as desk:
        yield desk


async def open_modal(fake: FakeSlack, slack: SlackSender) -> dict:
    status, _ = await slack.command("/run", CAROL)
    assert status == 200
    opened = await fake.wait_for("views.open")
    assert opened.data["trigger_id"].startswith("trigger.")
    view = opened.data["view"]
    assert view["type"] == "modal"
    [block] = view["blocks"]
    assert block["element"]["multiline"] and block["element"]["max_length"] <= 3000
    return view


async def test_run_modal_output_arrives_in_the_thread(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    view = await open_modal(fake, slack)
    status, body = await slack.submit_view(
        view, {CODE_BLOCK_ID: {CODE_ACTION_ID: "print(1 + 1)"}}, CAROL
    )
    assert status == 200 and body == ""  # a plain ack closes the modal
    ack = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if "queued" in text_of(m)), None)
    )
    assert "/run by carol" in text_of(ack) and "print(1 + 1)" in text_of(ack)

    result = await fake.wait_until(
        lambda: next(iter(fake.in_channel(thread_ts=ack["ts"])), None), RESULT_TIMEOUT
    )
    text = text_of(result)
    assert "Finished" in text and "```\n2\n```" in text
    assert f"<@{CAROL.id}>" in text


async def test_empty_modal_submission_keeps_the_modal_open(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    view = await open_modal(fake, slack)
    status, body = await slack.submit_view(view, {CODE_BLOCK_ID: {CODE_ACTION_ID: "  \n"}}, CAROL)
    assert status == 200
    answer = json.loads(body)
    assert answer["response_action"] == "errors" and CODE_BLOCK_ID in answer["errors"]
    assert not fake.sent("chat.postMessage")


async def test_run_code_shortcut_answers_in_the_message_thread_and_uploads_long_output(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    # Slack escapes < and writes ```code``` without a newline after the fence.
    text = "Why is this long?\n```print(1 &lt; 2)\nprint('x' * 3000)```"
    target = {"type": "message", "ts": "1699999999.000100", "user": CAROL.id, "text": text}
    status, _ = await slack.message_shortcut(RUN_SHORTCUT_ID, target, BOB)
    assert status == 200
    ack = await fake.wait_until(
        lambda: next(
            (m for m in fake.in_channel(thread_ts=target["ts"]) if "queued" in text_of(m)), None
        )
    )
    assert "Why is this long" not in text_of(ack)  # the preview shows only the fenced code
    assert "print(1 &lt; 2)" in text_of(ack)  # escaped again for Slack, as Slack requires

    done = await fake.wait_for("files.completeUploadExternal", timeout=RESULT_TIMEOUT)
    assert done.data["thread_ts"] == target["ts"] and done.data["channel_id"] == fake.channel_id
    assert any(b"x" * 3000 in content for content in fake.uploads.values())
    replies = [text_of(m) for m in fake.in_channel(thread_ts=target["ts"])]
    assert any("Finished" in r and "True" in r for r in replies)


async def test_run_refusal_is_private(fake: FakeSlack, slack: SlackSender, runs: RunDesk) -> None:
    target = {"type": "message", "ts": "1699999999.000200", "user": CAROL.id, "text": ""}
    await slack.message_shortcut(RUN_SHORTCUT_ID, target, BOB)
    refusal = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert "no code" in text_of(refusal.data).lower()
    assert not fake.sent("chat.postMessage")


async def test_run_without_runner_says_so(fake: FakeSlack, slack: SlackSender) -> None:
    await slack.command("/run", CAROL)
    reply = await fake.wait_for("respond")
    assert "not available" in text_of(reply.data)
    assert not fake.sent("views.open")


async def test_run_in_a_channel_without_the_bot_tells_the_member(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    fake.not_member_of.add(fake.channel_id)
    view = await open_modal(fake, slack)
    await slack.submit_view(view, {CODE_BLOCK_ID: {CODE_ACTION_ID: "print(3)"}}, CAROL)
    dm = await fake.wait_for("chat.postMessage", channel=CAROL.id)
    assert "/invite" in text_of(dm.data)


async def test_two_open_run_modals_are_told_apart_and_both_run(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    first = await open_modal(fake, slack)
    await slack.command("/run", BOB)
    second = (await fake.wait_for("views.open", count=2)).data["view"]
    assert first["external_id"] != second["external_id"]
    await slack.submit_view(second, {CODE_BLOCK_ID: {CODE_ACTION_ID: "print(6 * 7)"}}, BOB)
    await slack.submit_view(first, {CODE_BLOCK_ID: {CODE_ACTION_ID: "print(2 + 2)"}}, CAROL)
    for expected in ("42", "4"):
        ack = await fake.wait_until(
            lambda e=expected: next(
                (m for m in fake.in_channel() if "queued" in text_of(m)
                 and ("6 * 7" if e == "42" else "2 + 2") in text_of(m)), None)
        )
        result = await fake.wait_until(
            lambda a=ack: next(iter(fake.in_channel(thread_ts=a["ts"])), None), RESULT_TIMEOUT
        )
        assert f"```\n{expected}\n```" in text_of(result)


async def test_a_run_refused_by_the_queue_leaves_no_public_message(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    """The second job of a member with one still running is refused after the acknowledgement
    was posted: the acknowledgement is deleted and the refusal is private."""
    target = {"ts": "1700000000.000100", "text": "```import time\ntime.sleep(8)\nprint(1)```", "user": CAROL.id}
    await slack.message_shortcut(RUN_SHORTCUT_ID, target, CAROL)
    await fake.wait_until(lambda: next(
        (m for m in fake.in_channel(thread_ts=target["ts"]) if "queued" in text_of(m)), None))
    again = {"ts": "1700000000.000200", "text": "```print(2)```", "user": CAROL.id}
    await slack.message_shortcut(RUN_SHORTCUT_ID, again, CAROL)
    refusal = await fake.wait_for("chat.postEphemeral", user=CAROL.id)
    assert "you already have a running job" in text_of(refusal.data)
    deleted = await fake.wait_for("chat.delete")
    assert not [m for m in fake.in_channel(thread_ts=again["ts"]) if "print(2)" in text_of(m)]
    assert deleted.data["ts"] != again["ts"]  # the acknowledgement, not the member's message
