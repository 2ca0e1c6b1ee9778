"""Slash commands are registered by an explicit CLI step, and sharding follows the settings."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from bot.adapters.discord.bot import ShardedDrillClient, sync_commands
from bot.app import App
from bot.cli import app as cli
from bot.config import get_settings
from tests.support.discord_fixtures import StartAdapter, discord_settings
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, text_of

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

EXPECTED = {
    "quiz",
    "review",
    "round",
    "stats",
    "leaderboard",
    "group",
    "daily",
    "run",
    "challenge",
    "submit",
    "bank",
    "suggest",
    "help",
    "mock",
    "report",
    "Run code",
    "Ask as a question",
}


async def test_sync_to_one_guild_registers_every_command_without_the_gateway(
    fake: FakeDiscord,
) -> None:
    names = await sync_commands(
        discord_settings(fake, "sqlite+aiosqlite:///unused.db"), fake.guild_id
    )
    assert set(names) == EXPECTED
    [put] = fake.sent("PUT", f"/applications/{fake.app_id}/guilds/{fake.guild_id}/commands")
    by_name = {c["name"]: c for c in put.json}
    assert by_name["Run code"]["type"] == 3  # message context menu
    assert by_name["Ask as a question"]["type"] == 3  # for admins, where the bot is
    assert int(by_name["Ask as a question"]["default_member_permissions"]) == 1 << 5
    assert by_name["Ask as a question"]["integration_types"] == [0]
    assert int(by_name["daily"]["default_member_permissions"]) == 1 << 5  # Manage Server
    subcommands = {o["name"] for o in by_name["daily"]["options"]}
    assert subcommands == {"schedule", "pause", "resume", "now", "status", "challenge", "digest", "rewards",
                           "streak"}
    topic = next(o for o in by_name["quiz"]["options"] if o["name"] == "topic")
    assert topic["autocomplete"] is True
    assert not fake.identifies


def invoke(fake: FakeDiscord, *args: str, token: str | None = None) -> object:
    env = {
        "DISCORD_TOKEN": fake.token if token is None else token,
        "DISCORD_API_BASE_URL": fake.api_base_url,
    }
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, ["discord", "sync", *args], env=env)
    finally:
        get_settings.cache_clear()


async def test_cli_sync_global_and_clear_errors(fake: FakeDiscord) -> None:
    result = await asyncio.to_thread(invoke, fake)
    assert result.exit_code == 0, result.output
    assert f"synced {len(EXPECTED)} commands" in result.output
    [put] = fake.sent("PUT", f"/applications/{fake.app_id}/commands")
    assert {c["name"] for c in put.json} == EXPECTED

    bad = await asyncio.to_thread(invoke, fake, token="wrong-token")
    assert bad.exit_code == 1
    assert "discord sync failed" in bad.output and "token" in bad.output.lower()
    missing = await asyncio.to_thread(invoke, fake, token="")
    assert missing.exit_code == 1 and "DISCORD_TOKEN is not set" in missing.output
    assert len(fake.sent("PUT", "/applications/")) == 1


async def test_shard_settings_start_one_gateway_session_per_shard(
    fake: FakeDiscord, app: App, start_adapter: StartAdapter
) -> None:
    app.settings = app.settings.model_copy(update={"discord_shard_count": 2})
    adapter = await start_adapter()
    assert isinstance(adapter.client, ShardedDrillClient)
    await fake.wait_until(lambda: len(fake.identifies) == 2)
    assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 2), (1, 2)]
    token = await fake.slash("stats", User(800_000_000_000_000_009, "dana"))
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL and "No answers yet" in text_of(reply)
