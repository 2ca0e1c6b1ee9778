"""A workspace whose token is gone (uninstalled while a reply was on its way): the Slack
handlers log one line and carry on. ``NotInstalledError`` carries no ``response``, so a handler
that read Slack's error code from it raised instead (issue 31)."""

from __future__ import annotations

import logging

import pytest

from bot.adapters.slack.app import SlackAdapter
from bot.adapters.slack.handlers import _ChannelAck
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Attachment, Message
from tests.support.fake_slack import FakeSlack

GONE = "T9GONE"  # a team with no install row: its token lookup raises NotInstalledError


async def test_attaching_a_file_for_an_uninstalled_workspace_logs_one_line(
    oauth_fake: FakeSlack, oauth_adapter: SlackAdapter, caplog: pytest.LogCaptureFixture,
) -> None:
    message = Message(attachments=[Attachment("chart.png", b"\x89PNG")])
    with caplog.at_level(logging.WARNING, logger="bot.adapters.slack.handlers"):
        await oauth_adapter.handlers.attach(message, Who("slack", GONE, "U9", "nine"), None)
    assert [r.getMessage() for r in caplog.records] == [
        f"could not attach 1 file(s): torchdrill is not installed in Slack workspace {GONE}"]
    assert not [c for c in oauth_fake.calls if c.team == GONE]


async def test_retracting_a_run_acknowledgement_for_an_uninstalled_workspace_logs_one_line(
    oauth_fake: FakeSlack, oauth_adapter: SlackAdapter, caplog: pytest.LogCaptureFixture,
) -> None:
    ack = _ChannelAck(oauth_adapter.handlers, Where("slack", GONE, "C9", "drills"), None)
    with caplog.at_level(logging.WARNING, logger="bot.adapters.slack.handlers"):
        await ack.retract("C9:1700000000.000100")
    assert [r.getMessage() for r in caplog.records] == [
        "could not delete a refused /run acknowledgement: "
        f"torchdrill is not installed in Slack workspace {GONE}"]
    assert not [c for c in oauth_fake.calls if c.team == GONE]
