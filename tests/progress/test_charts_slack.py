"""/stats through real slack-bolt: a response_url cannot carry files, so the chart goes up
through Slack's upload flow (files.getUploadURLExternal + completeUploadExternal) into the
member's direct messages, with its alt text; the reply carries the same figures as text."""

from __future__ import annotations

import json

import pytest

from bot.app import App
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]


async def test_stats_chart_is_uploaded_to_the_members_dm(fake: FakeSlack, slack: SlackSender, app: App) -> None:
    await slack.command("/daily", ALICE, "now")
    await fake.wait_for("respond")
    [question] = [m for m in fake.in_channel() if buttons_of(m)]
    await slack.click(question, buttons_of(question)[0]["action_id"], ALICE)
    await fake.wait_for("chat.postEphemeral")
    status, _ = await slack.command("/stats", ALICE)
    assert status == 200
    reply = await fake.wait_for("respond", count=2)
    assert reply.data["response_type"] == "ephemeral"
    assert "Active on 1 of the last 84 days" in text_of(reply.data)
    opened = await fake.wait_for("conversations.open")
    assert opened.data["users"] == ALICE.id
    url = await fake.wait_for("files.getUploadURLExternal")
    assert url.data["filename"] == "stats.png" and "Streak" in url.data["alt_txt"]
    done = await fake.wait_for("files.completeUploadExternal")
    assert done.data["channel_id"] == f"D{ALICE.id}"
    [uploaded] = json.loads(done.data["files"])
    assert fake.uploads[uploaded["id"]][:8] == b"\x89PNG\r\n\x1a\n"
