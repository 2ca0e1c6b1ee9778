"""The Discord adapter: a discord.py client (sharded when configured) wired to the core.

Slash commands are only synced by ``torchdrill discord sync``: syncing on every start burns
Discord's daily command-create limit. Answer buttons are registered as dynamic items in
``setup_hook`` so clicks on old messages keep working after restarts.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

import discord
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.adapters.discord.commands import add_commands
from bot.adapters.discord.interactions import PLATFORM, WORDS, Handlers
from bot.adapters.discord.publisher import adapter_publisher
from bot.adapters.discord.views import ActionButton
from bot.config import ConfigError, Settings
from bot.core.commands import replies
from bot.core.domain.actions import ACTION_PATTERN

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 120.0
ACTION_RE = re.compile(ACTION_PATTERN)


class DiscordConfigError(ConfigError):
    pass


def apply_endpoints(settings: Settings) -> None:
    """Point discord.py at ``DISCORD_API_BASE_URL`` / ``DISCORD_GATEWAY_URL`` (REST proxies).

    discord.py keeps both as class attributes, so this is process-wide: one bot per process.
    """
    Route.BASE = settings.discord_api_base_url.rstrip("/")
    if settings.discord_gateway_url:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.discord_gateway_url)


def token_of(settings: Settings) -> str:
    if settings.discord_token is None or not settings.discord_token.get_secret_value().strip():
        raise DiscordConfigError("DISCORD_TOKEN is not set")
    return settings.discord_token.get_secret_value().strip()


class _Drill(discord.Client):
    """Behaviour shared by the plain and the sharded client (it comes first in their MRO)."""

    handlers: Handlers | None
    tree: app_commands.CommandTree[Any]

    def _init_drill(self, handlers: Handlers | None) -> None:
        self.handlers = handlers
        self.tree = app_commands.CommandTree(self)
        self.tree.error(self._on_tree_error)
        add_commands(self.tree)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(ActionButton)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Components that no view of ours can route still get an answer within 3 s."""
        if interaction.type is not discord.InteractionType.component or self.handlers is None:
            return
        data = interaction.data
        custom_id = "" if data is None else str(data.get("custom_id", ""))
        if not ACTION_RE.fullmatch(custom_id):
            await self.handlers.on_foreign_component(interaction)

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        if isinstance(error, app_commands.CommandNotFound):  # e.g. a command from an older sync
            log.warning("unknown command", extra={"command": error.name})
            text = replies.unknown_command(WORDS, error.name).plain()
        else:
            log.error("slash command failed", exc_info=error)
            text = replies.SORRY
        try:
            if interaction.response.is_done():
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.response.send_message(text, ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell the member about the failure")


class DrillClient(_Drill):
    def __init__(self, handlers: Handlers | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._init_drill(handlers)


class ShardedDrillClient(_Drill, discord.AutoShardedClient):
    def __init__(self, handlers: Handlers | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._init_drill(handlers)


def make_client(
    settings: Settings, handlers: Handlers | None = None
) -> DrillClient | ShardedDrillClient:
    """A sharded client when shard settings are given; slash commands need no privileged intents."""
    intents = discord.Intents.none()
    intents.guilds = True
    if settings.discord_shard_ids is not None and settings.discord_shard_count is None:
        raise DiscordConfigError(
            "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the total number of shards)"
        )
    if settings.discord_shard_count is not None or settings.discord_shard_ids is not None:
        return ShardedDrillClient(
            handlers,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),  # nothing we send pings by default
            shard_count=settings.discord_shard_count,
            shard_ids=settings.discord_shard_ids,
        )
    return DrillClient(handlers, intents=intents, allowed_mentions=discord.AllowedMentions.none())


class DiscordAdapter:
    platform = PLATFORM

    def __init__(self, app: App) -> None:
        self.app = app
        self.token = token_of(app.settings)
        apply_endpoints(app.settings)
        self.client = make_client(app.settings)
        self.publisher = adapter_publisher(self.client)
        self.handlers = Handlers(app, self.publisher)
        self.client.handlers = self.handlers
        self._gateway: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Log in (the publisher works from here on), connect the gateway, wait for READY."""
        await self.client.login(self.token)
        self._gateway = asyncio.create_task(self.client.connect(), name="discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait(
            {self._gateway, ready}, timeout=READY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
        )
        if ready not in done:
            ready.cancel()
            if self._gateway in done:
                self._gateway.result()  # raise the connection error
                raise ConnectionError("the Discord gateway closed before READY")
            raise TimeoutError(f"no READY from the Discord gateway within {READY_TIMEOUT_S:.0f} s")

    async def run_forever(self) -> None:
        if self._gateway is None:
            raise RuntimeError("start() the Discord adapter first")
        await self._gateway

    async def close(self) -> None:
        await self.publisher.flush()  # the last answer counts reach the messages
        await self.client.close()
        if self._gateway is not None:
            await asyncio.gather(self._gateway, return_exceptions=True)


async def sync_commands(settings: Settings, guild_id: int | None = None) -> list[str]:
    """Register the slash commands with Discord (globally, or instantly in one guild)."""
    apply_endpoints(settings)
    client = make_client(settings)
    async with client:
        await client.login(token_of(settings))
        guild = discord.Object(id=guild_id) if guild_id else None
        if guild is not None:
            client.tree.copy_global_to(guild=guild)
        synced = await client.tree.sync(guild=guild)
    return [command.name for command in synced]
