"""/challenge and /submit end to end through real discord.py against the fake Discord: the
problem arrives privately, /submit opens a modal prefilled with its stub, and the verdict (with
first-solve points) lands in the acknowledgement's thread."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.identity import Who
from bot.core.runs.desk import RunDesk
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    MODAL,
    FakeDiscord,
    User,
    text_of,
)

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

RESULT_TIMEOUT = 60
DANA = User(800_000_000_000_000_004, "dana")


def _discord_who(fake: FakeDiscord, user: User) -> Who:
    return Who("discord", str(fake.guild_id), str(user.id), user.name)


async def test_open_then_submit_in_the_prefilled_modal(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk, app: App
) -> None:
    await start_adapter()
    token = await fake.slash("submit", DANA)
    refused = await fake.callback_of(token)
    assert refused.json["data"]["flags"] & EPHEMERAL
    assert "You have no open challenge. Start one with /challenge." in str(refused.json)

    token = await fake.slash("challenge", DANA, topic="autograd", difficulty=2)
    shown = await fake.original_of(token)
    assert shown["flags"] & EPHEMERAL
    challenge = await app.commands.services.challenges.current(_discord_who(fake, DANA))
    assert challenge is not None and challenge.topic == "autograd"
    assert challenge.title in text_of(shown) and "/submit" in text_of(shown)

    token = await fake.slash("submit", DANA)
    opened = await fake.callback_of(token)
    assert opened.json["type"] == MODAL
    modal = opened.json["data"]
    assert modal["title"] == "Submit your solution"
    field = modal["components"][0]["components"][0]
    assert field["value"] == challenge.stub[:3000]

    token = await fake.submit_modal(modal, {field["custom_id"]: challenge.reference}, DANA)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    ack = await fake.wait_until(
        lambda: (m := fake.messages.get(fake.originals.get(token, 0))) and "Judging" in text_of(m) and m)
    assert "dana submitted a solution" in text_of(ack)
    assert challenge.reference.splitlines()[-1].strip() not in text_of(ack)  # the code stays private
    await fake.wait_for("POST", f"/channels/{int(ack['id'])}/messages", timeout=RESULT_TIMEOUT)
    [verdict] = fake.in_channel(int(ack["id"]))
    assert f"✅ Solved: {challenge.title}" in text_of(verdict)
    assert f"+{challenge.points} points (first solve)" in text_of(verdict)
    assert f"<@{DANA.id}>" in text_of(verdict)

    # the first solve is on the server's board, not on the channel's (no question answered)
    token = await fake.slash("leaderboard", DANA, scope="server", period="all")
    board = text_of(await fake.original_of(token))
    assert f"🥇 **dana** — {challenge.points} pts · coding challenges" in board
    token = await fake.slash("leaderboard", DANA)
    assert "dana" not in text_of(await fake.original_of(token))


