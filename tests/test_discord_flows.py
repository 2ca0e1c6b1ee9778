"""End to end: the real discord.py client against a local fake Discord, a real app on SQLite."""

from __future__ import annotations

from bot.adapters.discord.bot import DiscordAdapter
from tests.discord_fixtures import StartAdapter, app, discord_clock, fake, start_adapter  # noqa: F401
from tests.fake_discord import DEFERRED_CHANNEL_MESSAGE, EPHEMERAL, FakeDiscord, User

ALICE = User(800_000_000_000_000_001, "alice")
BOB = User(800_000_000_000_000_002, "bob")


def text_of(message: dict) -> str:
    parts = [message.get("content") or ""]
    for embed in message.get("embeds", []):
        parts += [embed.get("title") or "", embed.get("description") or "",
                  (embed.get("footer") or {}).get("text") or ""]
    return "\n".join(parts)


async def test_connects_and_identifies_through_configured_urls(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    adapter: DiscordAdapter = await start_adapter()
    assert adapter.client.is_ready()
    assert fake.identifies and fake.identifies[0]["token"] == fake.token
    assert fake.sent("GET", "/users/@me")
    assert not fake.sent("PUT", "/applications/"), "commands must not be synced on start"


async def test_help_is_an_ephemeral_reply(fake: FakeDiscord, start_adapter: StartAdapter) -> None:
    await start_adapter()
    token = await fake.slash("help", ALICE)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == 4
    assert callback.json["data"]["flags"] & EPHEMERAL
    assert "/quiz" in text_of(callback.json["data"])


async def test_quiz_defers_privately_then_shows_the_first_question(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash("quiz", ALICE, count=2)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "Quiz 1/2" in text_of(reply)
    buttons = [b for row in reply["components"] for b in row["components"]]
    assert buttons and all(b["custom_id"].startswith("td:") for b in buttons)
