"""/stats and /leaderboard chart:true through the real discord.py client: the PNG travels as
a multipart file, the embed shows it (attachment://) and the file carries its alt text."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

ALICE = User(800_000_000_000_000_001, "alice")


async def test_stats_chart_is_uploaded_and_shown_in_the_embed(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    await fake.original_of(await fake.slash("daily", ALICE, admin=True, sub="now"))
    [question] = [m for m in fake.in_channel(fake.channel_id) if buttons_of(m)]
    await fake.callback_of(await fake.click(int(question["id"]), buttons_of(question)[0]["custom_id"], ALICE))
    token = await fake.slash("stats", ALICE)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert reply["embeds"][0]["image"]["url"] == "attachment://stats.png"
    assert "Active on 1 of the last 84 days" in text_of(reply)
    [edit] = [r for r in fake.requests if r.files and token in r.path]
    [(name, content)] = edit.files
    assert name == "stats.png" and Image.open(io.BytesIO(content)).format == "PNG"
    [meta] = edit.json["attachments"]
    assert meta["filename"] == "stats.png" and "Streak" in meta["description"]
