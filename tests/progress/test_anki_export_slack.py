"""`/review export` on Slack: the reply is ephemeral and the package lands in the member's
direct messages with the bot (a response_url cannot carry files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.anki import open_package, seed_due
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE

pytestmark = pytest.mark.platform("slack")


async def test_export_lands_in_direct_messages(
    fake: FakeSlack, slack: SlackSender, adapter, app: App, slack_clock: FakeClock, tmp_path: Path
) -> None:
    await slack.command("/stats", ALICE, "")
    await fake.wait_for("respond")
    await seed_due(app, ALICE.id, 3, slack_clock.now())
    status, _ = await slack.command("/review", ALICE, "export")
    assert status == 200
    told = await fake.wait_for("respond", count=2)
    assert "3 cards: 0 you missed, 3 due for review." in text_of(told.data)
    assert told.data["response_type"] == "ephemeral"
    done = await fake.wait_for("files.completeUploadExternal")
    assert done.data["channel_id"] == f"D{ALICE.id}"
    [package] = fake.uploads.values()
    con = open_package(package, tmp_path)
    assert [t.split()[-1] for (t,) in con.execute("SELECT tags FROM notes")] == ["due"] * 3
