"""Slack has no roles: `/daily rewards` says what stands in for them there."""

from __future__ import annotations

import pytest

from bot.core.progress.rewards import NO_ROLES
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE

pytestmark = pytest.mark.platform("slack")


async def test_rewards_on_slack_point_to_the_digest(fake: FakeSlack, slack: SlackSender, adapter) -> None:
    status, _ = await slack.command("/daily", ALICE, "rewards add streak:7 role:regulars")
    assert status == 200
    told = await fake.wait_for("respond")
    assert NO_ROLES.replace("**", "*") == (  # Slack mrkdwn bold
        "Role rewards give Discord roles, and there are none here (Slack has no roles): the weekly "
        "digest's 🔥 *Longest streaks* line is the shout-out (/daily digest).")
    assert NO_ROLES.replace("**", "*") in text_of(told.data)
    assert told.data["response_type"] == "ephemeral"
