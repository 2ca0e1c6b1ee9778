"""/bank quality through the real slack-bolt app and the fake Slack: refused to members, the
admin's private reply word for word, the table uploaded as a file to the admin's DM."""

from __future__ import annotations

import pytest

from bot.core.content.bank import load_library
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE, BOB

pytestmark = pytest.mark.platform("slack")

NOTE = "flags need 30 answers to a question"


async def test_bank_quality_for_admins_with_the_table_as_a_file(fake: FakeSlack, slack: SlackSender, adapter) -> None:
    status, _ = await slack.command("/bank", BOB, "quality")
    assert status == 200
    refused = await fake.wait_for("respond")
    assert "Only workspace admins (or the bot's configured admins) can use /bank quality." in text_of(refused.data)
    status, _ = await slack.command("/bank", ALICE, "quality builtin autograd")
    assert status == 200
    reply = await fake.wait_for("respond", count=2)
    assert reply.data["response_type"] == "ephemeral"
    n = sum(1 for q in load_library().questions if q.kind.value == "mcq" and q.topic == "autograd")
    assert text_of(reply.data).splitlines()[1:] == [
        "Question quality: built-in banks · Autograd",
        f"{n} multiple-choice questions · 0 answers · 0 flagged ({NOTE})",
        "No question is flagged.",
        "Every question's share right, discrimination, pick rates and calibrated difficulty: "
        "quality-builtin-autograd.md",
    ]
    url = await fake.wait_for("files.getUploadURLExternal")
    assert url.data["filename"] == "quality-builtin-autograd.md"
    await fake.wait_for("files.completeUploadExternal")
    [table] = fake.uploads.values()
    assert table.startswith(b"# Question quality\n\n")
    status, _ = await slack.command("/bank", ALICE, "quality nosuch")
    nothing = await fake.wait_for("respond", count=3)
    assert ("There is no community bank 'nosuch' here; /bank list shows them, and builtin means the built-in "
            "banks.") in text_of(nothing.data)
