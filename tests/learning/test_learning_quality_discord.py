"""/bank quality for admins through the real discord.py adapter and the fake Discord, word for
word: refused to members, answered privately with the table attached."""

from __future__ import annotations

import pytest

from tests.support.community_banks import GOOD
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    FakeDiscord,
    FileOption,
    User,
    text_of,
)

pytestmark = pytest.mark.platform("discord")

ADMIN = User(800_000_000_000_000_020, "ada")
MEMBER = User(800_000_000_000_000_021, "mia")
NOTE = "flags need 30 answers to a question"


async def test_discord_bank_quality_for_admins_only(fake: FakeDiscord, start_adapter: StartAdapter) -> None:
    await start_adapter()
    refused = await fake.original_of(await fake.slash("bank", MEMBER, sub="quality"))
    assert "Only members with the **Manage Server** permission can use /bank quality." in text_of(refused)
    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.yaml", GOOD))
    assert "Bank our-loop stored: 2 questions" in text_of(await fake.original_of(token))
    token = await fake.slash("bank", ADMIN, admin=True, sub="quality", bank="our-loop")
    first = await fake.callback_of(token)  # acknowledged first (deferred, privately): the 3 s are met
    assert first.json["type"] == DEFERRED_CHANNEL_MESSAGE and first.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert text_of(reply) == (
        f"\nQuestion quality: our-loop\n2 multiple-choice questions · 0 answers · 0 flagged ({NOTE})\n\n"
        "No question is flagged.\n\nEvery question's share right, discrimination, pick rates and calibrated "
        "difficulty: quality-our-loop.md\n")
    assert [a["filename"] for a in reply["attachments"]] == ["quality-our-loop.md"]
