"""`/run` end to end: modal or "Run code" shortcut → real embedded runner → output in a thread."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bot.adapters.slack.app import EVENTS_PATH, SlackAdapter
from bot.adapters.slack.handlers import CODE_ACTION_ID, CODE_BLOCK_ID, RUN_SHORTCUT_ID
from bot.app import build_app
from bot.core.runs.desk import RunDesk
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import BOB, CAROL, SIGNING_SECRET, slack_settings

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]

RESULT_TIMEOUT = 60


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


async def test_run_right_after_start_says_the_runner_is_starting(
    fake: FakeSlack, tmp_path: Path, sqlite_template: Path,
) -> None:
    """serve starts the adapters first, then the app (which starts the runner): a /run in
    between is told to wait, not that this deployment has no runner."""
    path = tmp_path / "starting.db"
    shutil.copy(sqlite_template, path)
    app = await build_app(slack_settings(fake, f"sqlite+aiosqlite:///{path}"), with_runner=True)
    adapter = SlackAdapter(app)
    app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    try:
        slack = SlackSender(fake, f"http://127.0.0.1:{adapter.port}{EVENTS_PATH}", SIGNING_SECRET)
        await slack.command("/run", CAROL)
        reply = await fake.wait_for("respond")
        assert reply.data["text"] == "The code runner is starting; try again in a few seconds."
    finally:
        await adapter.close()
        await app.close()


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
    first = await fake.wait_until(lambda: next(
        (m for m in fake.in_channel(thread_ts=target["ts"]) if "queued" in text_of(m)), None))
    [job_id] = re.findall(r"Job `([0-9a-f]+)` queued", text_of(first))
    again = {"ts": "1700000000.000200", "text": "```print(2)```", "user": CAROL.id}
    await slack.message_shortcut(RUN_SHORTCUT_ID, again, CAROL)
    refusal = await fake.wait_for("chat.postEphemeral", user=CAROL.id)
    assert refusal.data["text"] == (  # the same job id as its acknowledgement, and how to cancel it
        f"You already have a job queued or running (`{job_id}`): wait for its result in its thread, "
        "or cancel it with /run cancel.")
    deleted = await fake.wait_for("chat.delete")
    assert not [m for m in fake.in_channel(thread_ts=again["ts"]) if "print(2)" in text_of(m)]
    assert deleted.data["ts"] != again["ts"]  # the acknowledgement, not the member's message


async def test_run_cancel_stops_only_the_members_own_job_and_its_thread_says_so(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk
) -> None:
    target = {"ts": "1700000000.000300", "text": "```import time\ntime.sleep(30)```", "user": CAROL.id}
    await slack.message_shortcut(RUN_SHORTCUT_ID, target, CAROL)
    ack = await fake.wait_until(lambda: next(
        (m for m in fake.in_channel(thread_ts=target["ts"]) if "queued" in text_of(m)), None))
    [job_id] = re.findall(r"Job `([0-9a-f]+)` queued", text_of(ack))
    await slack.command("/run", BOB, "cancel")  # bob has no job: carol's is not his to cancel
    nothing = await fake.wait_for("respond")
    assert nothing.data["response_type"] == "ephemeral"
    assert nothing.data["text"] == "You have no job queued or running, so there is nothing to cancel."
    await slack.command("/run", CAROL, "cancel")
    cancelled = await fake.wait_for("respond", count=2)
    assert cancelled.data["text"] == f"Your job `{job_id}` is cancelled; its thread will say so."
    assert not fake.sent("views.open")  # words, not code: no code box was opened
    result = await fake.wait_until(lambda: next(
        (m for m in fake.in_channel(thread_ts=target["ts"]) if "Cancelled" in text_of(m)), None),
        RESULT_TIMEOUT)
    assert text_of(result) == f"🛑 Cancelled\n🛑 Cancelled\n<@{CAROL.id}>\nCancelled by its author."  # no output
