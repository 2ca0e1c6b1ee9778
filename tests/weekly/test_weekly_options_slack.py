"""The weekly options of /daily on Slack (slash text), the same steps and core texts as on
Discord and the console (tests/weekly/test_weekly_options_platforms.py); non-admins are refused."""

from __future__ import annotations

import pytest

from bot.app import App
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE, BOB
from tests.support.weekly_options import STEPS, _flat, _text

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]


async def test_slack_admin_sets_and_stops_the_weekly_posts(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    for n, (sub, options, expected) in enumerate(STEPS, start=1):
        status, _ = await slack.command("/daily", ALICE, _text(sub, options))
        assert status == 200
        reply = await fake.wait_for("respond", count=n)
        assert expected in _flat(text_of(reply.data)), (sub, options)
    await slack.command("/daily", BOB, "digest day:mon time:09:00")
    reply = await fake.wait_for("respond", count=len(STEPS) + 1)
    refused = _flat(text_of(reply.data))
    assert "Only workspace admins (or the bot's configured admins) can use /daily digest." in refused
    assert "Weekly digest:" not in refused
