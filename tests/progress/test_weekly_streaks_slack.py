"""Weekly-streak mode on Slack: `/daily streak weekly 2` typed as text, the streak line in the
private feedback after an answer, and the Home tab's progress line, in Slack's mrkdwn."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE, BOB, correct_position, post_id_of
from tests.support.slack_home import home_lines, open_home
from tests.support.weekly_streaks import DAYS, RESTART, WEEKS

pytestmark = pytest.mark.platform("slack")


def mrkdwn(text: str) -> str:
    return text.replace("**", "*")


async def _told(fake: FakeSlack, slack: SlackSender, text: str, count: int) -> str:
    status, _ = await slack.command("/daily", ALICE, text)
    assert status == 200
    told = await fake.wait_for("respond", count=count)
    assert told.data["response_type"] == "ephemeral"
    return text_of(told.data)


async def test_weekly_streaks_on_slack(
    fake: FakeSlack, slack: SlackSender, app: App, adapter, slack_clock: FakeClock
) -> None:
    assert mrkdwn(DAYS) in await _told(fake, slack, "streak", 1)
    assert mrkdwn(WEEKS + RESTART) in await _told(fake, slack, "streak weekly 2", 2)
    assert "Posted today's question" in await _told(fake, slack, "now", 3)
    [question] = [m for m in fake.in_channel() if buttons_of(m)]
    post_id = post_id_of(buttons_of(question)[0])
    wrong = (await correct_position(app, post_id) + 1) % 4
    await slack.click(question, buttons_of(question)[wrong]["action_id"], BOB)
    feedback = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert "🔥 Weekly streak: 0 · 1 of 2 this week" in text_of(feedback.data).splitlines()

    slack_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    published = len(fake.sent("views.publish", user_id=BOB.id))  # after the answer, if any
    lines = home_lines(await open_home(fake, slack, BOB, count=published + 1))
    assert lines[lines.index("📈 Your progress") + 1] == "🔥 Weekly streak: *0* (best 0) · 1 of 2 this week"
