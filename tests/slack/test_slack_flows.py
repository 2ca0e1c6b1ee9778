"""End to end: the real adapter in HTTP mode, a fake Slack Web API, real signed requests,
a real app on SQLite."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest
from sqlalchemy import func, select

from bot.adapters.slack.app import SlackAdapter
from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.storage.models import Answer, Post
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, sign, text_of
from tests.support.slack_fixtures import (
    ALICE,
    BOB,
    SIGNING_SECRET,
    correct_position,
    post_daily_now,
    post_id_of,
)

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]


async def rows(app: App, model: type) -> int:
    async with app.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def test_help_command_is_acked_and_answered_privately(
    fake: FakeSlack, slack: SlackSender
) -> None:
    status, _ = await slack.command("/drill-help", BOB)
    assert status == 200
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral"
    assert "/quiz" in text_of(reply.data) and "/drill-help" in text_of(reply.data)


async def test_bad_signature_and_stale_timestamp_get_401_and_change_nothing(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    body = slack.command_body("/daily", ALICE, "now")
    now = int(time.time())
    bad = sign("not-the-secret", str(now), body)
    status, _ = await slack.post(body, "application/x-www-form-urlencoded", signature=bad)
    assert status == 401
    stale = now - 10 * 60  # Slack's replay window is 5 minutes
    status, _ = await slack.post(body, "application/x-www-form-urlencoded", timestamp=stale)
    assert status == 401
    tampered = body.replace("now", "status")
    status, _ = await slack.post(
        tampered, "application/x-www-form-urlencoded", signature=sign(SIGNING_SECRET, str(now), body)
    )
    assert status == 401
    assert fake.calls == [], "a rejected request must not reach Slack's API"
    assert await rows(app, Post) == 0

    # The same body, correctly signed, does post (so the rejections were about the signature).
    status, _ = await slack.post(body, "application/x-www-form-urlencoded")
    assert status == 200
    await fake.wait_for("chat.postMessage")
    assert await rows(app, Post) == 1


async def test_daily_click_twice_reveal_and_leaderboard(
    fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock
) -> None:
    question = await post_daily_now(fake, slack)
    buttons = buttons_of(question)
    assert len(buttons) == 4 and "0 answered" in text_of(question)
    post_id = post_id_of(buttons[0])
    right = await correct_position(app, post_id)

    # Alice answers: feedback via chat.postEphemeral, the public message only shows the count.
    status, body = await slack.click(question, buttons[right]["action_id"], ALICE)
    assert status == 200 and body == ""
    feedback = await fake.wait_for("chat.postEphemeral", user=ALICE.id)
    assert "Correct" in text_of(feedback.data)
    await fake.wait_for("chat.update", ts=question["ts"])
    public = text_of(question)  # the fake edits the stored message in place
    assert "1 answered" in public and "Correct" not in public
    assert len(buttons_of(question)) == 4

    # The second click: "already answered", nothing recorded twice.
    await slack.click(question, buttons[(right + 1) % 4]["action_id"], ALICE)
    again = await fake.wait_for("chat.postEphemeral", count=2, user=ALICE.id)
    assert "already" in text_of(again.data).lower()
    assert await rows(app, Answer) == 1

    # Bob answers wrong.
    await slack.click(question, buttons[(right + 1) % 4]["action_id"], BOB)
    wrong = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert "Correct" not in text_of(wrong.data)
    await fake.wait_until(lambda: "2 answered" in text_of(question))

    # The reveal: results replace the question (buttons gone), explanation in its thread.
    slack_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    assert [b["text"]["text"] for b in buttons_of(question)] == ["🚩 Report"]  # the answers' buttons gone
    assert "2 answered" in text_of(question) and "50% correct" in text_of(question)
    [explanation] = fake.in_channel(thread_ts=question["ts"])
    assert "Why:" in text_of(explanation)

    # The leaderboard is public (in_channel) and lists both members, Alice first.
    await slack.command("/leaderboard", BOB, "channel all")
    board = await fake.wait_for("respond", count=2)
    assert board.data["response_type"] == "in_channel"
    text = text_of(board.data)
    assert text.index("alice") < text.index("bob")


async def test_daily_needs_a_workspace_admin(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    await slack.command("/daily", BOB, "now")
    reply = await fake.wait_for("respond")
    assert "admins" in text_of(reply.data)
    assert fake.sent("users.info", user=BOB.id)
    assert not fake.sent("chat.postMessage")
    assert await rows(app, Post) == 0


async def test_ack_comes_back_before_the_slow_work(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    """The HTTP answer (Slack's 3 s ack) must not wait for Slack's API or the database."""
    release = fake.hold("users.info")
    status, body = await asyncio.wait_for(slack.command("/daily", ALICE, "now"), 2.5)
    assert status == 200 and body == ""
    await fake.wait_until(lambda: fake.waiting("users.info"))
    assert not fake.sent("respond") and await rows(app, Post) == 0  # the work is still pending
    release.set()
    reply = await fake.wait_for("respond")
    assert "Posted today's question" in text_of(reply.data)


async def test_configured_admin_list_is_enough(fake: FakeSlack, app: App) -> None:
    app.settings.slack_admin_user_ids = [BOB.id]
    adapter = SlackAdapter(app)
    app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    try:
        sender = SlackSender(fake, f"http://127.0.0.1:{adapter.port}/slack/events", SIGNING_SECRET)
        await sender.command("/daily", BOB, "status")
        reply = await fake.wait_for("respond")
        assert "No daily question here yet" in text_of(reply.data)
        assert not fake.sent("users.info"), "a configured admin needs no lookup"
    finally:
        await adapter.close()


async def test_bad_command_input_gets_a_clear_private_message(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    cases = [
        ("/quiz", "count=five", "count must be a whole number (got 'five')"),
        ("/quiz", "nosuchtopic", "nosuchtopic"),
        ("/round", "99", "count must be between"),
        ("/daily", "schedule 09:00 Mars/Olympus", "unknown timezone 'Mars/Olympus'"),
        ("/daily", "sometimes", "use /daily schedule|pause|resume|now|status"),
        ("/leaderboard", "scope:galaxy", "unknown scope 'galaxy'; choose one of: channel, workspace, group"),
        ("/leaderboard", "galaxy", "there is no study group called 'galaxy'"),
        ("/review", "count:-5", "count must be between 1 and 50 (got -5)"),
        ("/review", "100000", "count must be between 1 and 50 (got 100000)"),
        ("/drill-help", "extra", "/help takes no arguments (got 'extra')"),
    ]
    for n, (command, text, expected) in enumerate(cases, start=1):
        status, _ = await slack.command(command, ALICE, text)
        assert status == 200
        reply = await fake.wait_for("respond", count=n)
        assert reply.data["response_type"] == "ephemeral", command
        assert expected in text_of(reply.data), (command, text, text_of(reply.data))
    assert await rows(app, Post) == 0
    assert not fake.sent("chat.postMessage")


async def test_private_quiz_buttons_answer_in_private(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    await slack.command("/quiz", BOB, "2")
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral" and "Quiz 1/2" in text_of(reply.data)
    buttons = buttons_of(reply.data)
    assert buttons and all(b["action_id"].startswith("td:") for b in buttons)
    message = {"ts": None, "text": reply.data["text"], "blocks": reply.data["blocks"]}
    await slack.click(message, buttons[0]["action_id"], BOB, ephemeral=True)
    feedback = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    if buttons[0]["text"]["text"] == "Show answer":  # a flashcard: grade it yourself
        [good] = [b for b in buttons_of(feedback.data) if b["text"]["text"] == "Good"]
        card = {"ts": None, "text": feedback.data["text"], "blocks": feedback.data["blocks"]}
        await slack.click(card, good["action_id"], BOB, ephemeral=True)
        feedback = await fake.wait_for("chat.postEphemeral", count=2, user=BOB.id)
    assert await rows(app, Answer) == 1
    [step] = [b for b in buttons_of(feedback.data) if b["text"]["text"] == "Next question"]
    sent = len(fake.sent("chat.postEphemeral", user=BOB.id))
    await slack.click({"ts": None, "blocks": feedback.data["blocks"]}, step["action_id"], BOB, True)
    second = await fake.wait_for("chat.postEphemeral", count=sent + 1, user=BOB.id)
    assert "Quiz 2/2" in text_of(second.data)
    assert not fake.sent("chat.update"), "an ephemeral quiz has no public message to refresh"


async def test_round_question_is_revealed_in_place_with_results_in_thread(
    fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock
) -> None:
    await slack.command("/round", ALICE, "1 10")
    ack = await fake.wait_for("respond")
    assert ack.data["response_type"] == "ephemeral" and "Round started" in text_of(ack.data)
    question = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if buttons_of(m)), None)
    )
    right = await correct_position(app, post_id_of(buttons_of(question)[0]))
    await slack.click(question, buttons_of(question)[right]["action_id"], BOB)
    await fake.wait_until(lambda: "1 answered" in text_of(question))

    await fake.wait_until(lambda: slack_clock.sleepers == 1)
    slack_clock.advance(seconds=10)
    final = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if "final standings" in text_of(m)), None)
    )
    assert "bob" in text_of(final)
    assert [b["text"]["text"] for b in buttons_of(question)] == ["🚩 Report"] and "100% correct" in text_of(question)
    in_thread = [text_of(m) for m in fake.in_channel(thread_ts=question["ts"])]
    assert any("Why:" in t for t in in_thread)
    assert any("after question 1/1" in t for t in in_thread)


async def test_rate_limited_post_is_retried(fake: FakeSlack, slack: SlackSender) -> None:
    fake.rate_limits["chat.postMessage"] = [0, 1]
    await post_daily_now(fake, slack)
    attempts = [c.status for c in fake.calls if c.method == "chat.postMessage"]
    assert attempts == [429, 429, 200]
    assert len(fake.in_channel()) == 1


async def test_health_routes_share_the_events_port(adapter: SlackAdapter) -> None:
    assert adapter.serves_http
    base = f"http://127.0.0.1:{adapter.port}"
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/healthz") as response:
            assert response.status == 200
        async with session.get(f"{base}/readyz") as response:
            body = json.loads(await response.text())
            assert response.status == 200, body
            assert body["checks"]["database"] == "ok"


async def test_every_declared_command_is_served(fake: FakeSlack, slack: SlackSender) -> None:
    """The manifest tells Slack which commands exist; each must be acked and answered."""
    from bot.adapters.slack.listeners import served_commands
    from bot.adapters.slack.manifest import manifest

    declared = [c["command"] for c in manifest()["features"]["slash_commands"]]
    assert sorted(declared) == sorted(served_commands())
    texts = {"/round": "0", "/group": "list", "/suggest": "prompt:x"}  # answers without side effects (an empty /suggest opens its form)
    for n, command in enumerate(declared, start=1):
        status, _ = await slack.command(command, BOB, texts.get(command, ""))
        assert status == 200, command
        reply = await fake.wait_for("respond", count=n)
        assert text_of(reply.data).strip(), command


def test_manifest_modes() -> None:
    from bot.adapters.slack.manifest import manifest

    socket = manifest()
    assert socket["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in socket["settings"]["interactivity"]
    url = "https://drills.example.org/slack/events"
    http = manifest(request_url=url)
    assert http["settings"]["socket_mode_enabled"] is False
    assert http["settings"]["interactivity"]["request_url"] == url
    assert {c["url"] for c in http["features"]["slash_commands"]} == {url}
    run, ask = http["features"]["shortcuts"]
    assert run["type"] == "message" and run["callback_id"] == "td-run-code"
    assert (ask["name"], ask["type"], ask["callback_id"]) == ("Ask as a question", "message", "td-ask-question")


async def test_feedback_falls_back_to_the_response_url_where_the_bot_is_not_a_member(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    fake.not_member_of.add(fake.channel_id)  # e.g. a private channel or a DM with the bot
    await slack.command("/quiz", BOB, "1")
    quiz = await fake.wait_for("respond")
    message = {"ts": None, "text": quiz.data["text"], "blocks": quiz.data["blocks"]}
    await slack.click(message, buttons_of(quiz.data)[0]["action_id"], BOB, ephemeral=True)
    feedback = await fake.wait_for("respond", count=2)
    assert feedback.data["response_type"] == "ephemeral"
    assert feedback.data["replace_original"] is False
    assert text_of(feedback.data).strip()
    assert not fake.sent("chat.postEphemeral")


async def test_the_slack_app_leaves_our_loggers_alone(adapter: SlackAdapter) -> None:
    """bolt sets the level of its app logger; it must not be the parent of torchdrill.* loggers."""
    import logging

    assert logging.getLogger("torchdrill").level == logging.NOTSET
    assert adapter.bolt.logger.name != "torchdrill"
