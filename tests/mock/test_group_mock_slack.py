"""Group mocks on Slack end to end: the real adapter in HTTP mode and the fake Slack API. An
admin schedules with the text grammar (a member may not), lists and cancels; the tick posts
the announcement once; a member presses Start and gets their private session; the board goes
into the post's thread once at the close. Tracks by name, and an unknown one listed."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE, BOB

pytestmark = pytest.mark.platform("slack")


def twice(text: str) -> str:
    """A reply's fallback text, then its block: text_of shows both."""
    return f"{text}\n{text}"


async def said(fake: FakeSlack, slack: SlackSender, user, text: str, count: int) -> str:
    status, _ = await slack.command("/mock", user, text)
    assert status == 200
    reply = await fake.wait_for("respond", count=count)
    assert reply.data["response_type"] == "ephemeral"
    return text_of(reply.data)


async def test_a_group_mock_on_slack(fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock) -> None:
    assert await said(fake, slack, BOB, "schedule 09:30", 1) == twice(
        "Only workspace admins (or the bot's configured admins) can use /mock schedule.")
    assert await said(fake, slack, ALICE, "schedule 09:30 systems 15", 2) == twice(
        "Group mock #1 scheduled: Training/infra engineer · 15 min · Wed 04 Mar 09:30 UTC. At that time I "
        "post it here with a Start button; everyone who presses it gets the same 10 questions (8 MCQs, "
        "1 explain-it question (self-graded), 1 coding challenge), and the board goes up when it closes at "
        "Wed 04 Mar 09:45 UTC. `/mock cancel 1` cancels it.")
    assert (await said(fake, slack, ALICE, "schedule 10:00 mle", 3)).startswith(
        "Group mock #2 scheduled: ML engineer · 30 min · Wed 04 Mar 10:00 UTC.")
    assert await said(fake, slack, BOB, "cancel 2", 4) == twice(
        "Only workspace admins (or the bot's configured admins) can use /mock cancel.")
    assert await said(fake, slack, ALICE, "cancel 2", 5) == twice(
        "Group mock #2 (Wed 04 Mar 10:00 UTC) is cancelled; nothing will be posted.")
    assert await said(fake, slack, ALICE, "schedule", 6) == twice(
        "*Group mocks in this channel*\n#1 · Wed 04 Mar 09:30 UTC · Training/infra engineer · 15 min · "
        "scheduled\n`/mock cancel ID` cancels one before it starts.")
    assert await said(fake, slack, BOB, "vision 20", 7) == twice(
        "There is no track 'vision'. Tracks here: ml (ML engineer), research (Research engineer), "
        "infra (Training/infra engineer).")
    slack_clock.advance(30 * 60)
    await app.scheduler.tick()
    await app.scheduler.tick()
    [post] = fake.in_channel()  # once
    assert text_of(post) == (
        "🎤 Group mock #1 · Training/infra engineer · 15 min\n🎤 Group mock #1 · Training/infra engineer · "
        "15 min\nEveryone gets the same 10 questions: 8 MCQs, 1 explain-it question (self-graded), 1 coding "
        "challenge. Press *Start* for your own private session; every session ends at Wed 04 Mar 09:45 UTC.\n"
        "The board of this mock appears in this post's thread when it closes.\nStart")
    [start] = buttons_of(post)
    await slack.click(post, start["action_id"], BOB)
    mine = text_of((await fake.wait_for("chat.postEphemeral", user=BOB.id)).data)
    assert mine.startswith("Mock · MCQ 1/8 · ")
    assert mine.endswith("⏱ 15:00 left · ends 09:45 UTC · item 1/10 · Training/infra engineer\nA\nB\nC\nD")
    slack_clock.advance(15 * 60)
    await app.scheduler.tick()
    await app.scheduler.tick()
    [board] = fake.in_channel(thread_ts=post["ts"])  # in the post's thread, once
    assert text_of(board) == (
        "🏁 Group mock #1 closed · Training/infra engineer · 15 min\n🏁 Group mock #1 closed · "
        "Training/infra engineer · 15 min\n1 member took part · ranked by score, then time:\n"
        "🥇 *bob* — 0/10 (0%) · 15 min")
    report = text_of((await fake.wait_for("chat.postMessage", channel=BOB.id)).data)
    assert "📋 Mock interview report · Training/infra engineer · 15 min" in report  # as a direct message
