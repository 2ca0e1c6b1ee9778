"""`/run` where a member installed torchdrill to their own account, in a server without the
bot: nothing public there; the acknowledgement and the output come in the member's DMs."""

from __future__ import annotations

import pytest

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

pytestmark = pytest.mark.platform("discord")

CARA = User(800_000_000_000_000_031, "cara")
FOREIGN_GUILD, FOREIGN_CHANNEL = 900_000_000_000_000_777, 900_000_000_000_000_778
RESULT_TIMEOUT = 60


async def test_run_in_a_server_without_the_bot_answers_in_dms(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    place = fake.user_install_in(CARA, FOREIGN_GUILD, FOREIGN_CHANNEL)
    token = await fake.slash("run", CARA, place=place)
    opened = await fake.callback_of(token)
    assert opened.json["type"] == MODAL
    modal = opened.json["data"]
    field = modal["components"][0]["components"][0]
    token = await fake.submit_modal(modal, {field["custom_id"]: "print(1 + 1)"}, CARA, place=place)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert text_of(reply).strip() == "Your code runs privately here: the output comes in our direct messages."

    def result() -> dict | None:
        found = [m for m in fake.direct_messages(CARA) if "Finished" in text_of(m)]
        return found[0] if found else None

    output = await fake.wait_until(result, timeout=RESULT_TIMEOUT)
    assert "```text\n2\n```" in text_of(output)
    [ack] = [m for m in fake.direct_messages(CARA) if "print(1 + 1)" in text_of(m)]
    assert not fake.sent("POST", f"/channels/{fake.dm_channels[str(CARA.id)]}/messages/{ack['id']}/threads")
    assert not [m for m in fake.messages.values() if int(m["channel_id"]) == FOREIGN_CHANNEL
                and not m["flags"] & EPHEMERAL]
