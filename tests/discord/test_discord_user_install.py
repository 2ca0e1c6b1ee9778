"""The Discord user-installable app: practice commands where a member installed torchdrill
to their own account (DMs, servers without the bot), through the real discord.py client."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from bot.adapters.discord.bot import sync_commands
from bot.app import App
from bot.storage.models import Answer, Member, Workspace
from tests.support.discord_fixtures import StartAdapter, discord_settings
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    FakeDiscord,
    User,
    buttons_of,
    text_of,
)

pytestmark = pytest.mark.platform("discord")

CARA = User(800_000_000_000_000_031, "cara")
FOREIGN_GUILD = 900_000_000_000_000_777  # a server that has not added the bot
FOREIGN_CHANNEL = 900_000_000_000_000_778
GUILD, USER = 0, 1  # integration types
IN_GUILD, BOT_DM, PRIVATE_CHANNEL = 0, 1, 2  # contexts


async def test_sync_declares_integration_types_and_contexts_per_command(fake: FakeDiscord) -> None:
    await sync_commands(discord_settings(fake, "sqlite+aiosqlite:///unused.db"), fake.guild_id)
    [put] = fake.sent("PUT", f"/applications/{fake.app_id}/guilds/{fake.guild_id}/commands")
    by_name = {c["name"]: c for c in put.json}
    for name in ("quiz", "review", "stats", "challenge", "submit", "run", "Run code"):
        assert by_name[name]["integration_types"] == [GUILD, USER], name
        assert by_name[name]["contexts"] == [IN_GUILD, BOT_DM, PRIVATE_CHANNEL], name
    for name in ("daily", "round", "leaderboard", "group", "bank", "suggest"):
        assert by_name[name]["integration_types"] == [GUILD], name
        assert by_name[name]["contexts"] == [IN_GUILD], name
    assert by_name["help"]["integration_types"] == [GUILD]
    assert by_name["help"]["contexts"] == [IN_GUILD, BOT_DM]


async def members_of(app: App, user: User) -> list[str]:
    async with app.db.read() as session:
        rows = await session.execute(
            select(Workspace.external_id).join(Member, Member.workspace_id == Workspace.id)
            .where(Member.user_id == str(user.id)))
        return [r[0] for r in rows]


async def test_quiz_in_a_server_without_the_bot_is_private_and_progress_follows_to_dms(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App
) -> None:
    await start_adapter()
    place = fake.user_install_in(CARA, FOREIGN_GUILD, FOREIGN_CHANNEL)
    token = await fake.slash("quiz", CARA, place=place, count=1)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    question = await fake.original_of(token)
    assert question["flags"] & EPHEMERAL and "Quiz 1/1" in text_of(question)
    assert int(question["channel_id"]) == FOREIGN_CHANNEL  # the interaction's own response

    # Answering with its buttons, still in that server (a flashcard: show, then grade).
    message = question
    for _ in range(2):
        click = await fake.click(int(message["id"]), buttons_of(message)[0]["custom_id"], CARA,
                                 place=place)
        message = await fake.original_of(click)
        assert message["flags"] & EPHEMERAL
        async with app.db.read() as session:
            if await session.scalar(select(func.count()).select_from(Answer)) == 1:
                break
    else:
        raise AssertionError("no answer recorded")

    # The same member in the DM with the bot: one progress across both.
    dm = fake.user_install_dm(CARA)
    token = await fake.slash("stats", CARA, place=dm)
    stats = await fake.original_of(token)
    assert stats["flags"] & EPHEMERAL
    assert "Stats for cara\n**1** answered" in text_of(stats)
    assert await members_of(app, CARA) == [f"dm-{CARA.id}"]
    assert not [r for r in fake.requests if r.method == "POST" and r.path.startswith("/channels/")]


async def test_channel_features_say_they_need_a_server_that_added_the_bot(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    place = fake.user_install_in(CARA, FOREIGN_GUILD, FOREIGN_CHANNEL)
    token = await fake.slash("leaderboard", CARA, place=place)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert text_of(reply).strip() == (
        "/leaderboard is a channel feature: it works in servers that added torchdrill. Here you "
        "use torchdrill as your own app: /quiz, /review, /stats, /run, /challenge, /submit, /mock work, "
        "with replies only you see.")
    token = await fake.slash("daily", CARA, admin=True, sub="now", place=place)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL and text_of(reply).strip().startswith("/daily now is a channel feature")
    assert not [r for r in fake.requests if r.method == "POST" and r.path.startswith("/channels/")]
