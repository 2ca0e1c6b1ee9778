"""`torchdrill discord`: register the slash commands."""

from __future__ import annotations

import asyncio

import typer

from bot.cli.common import bot_settings, console, err_console

discord_app = typer.Typer(help="Discord: register slash commands.", no_args_is_help=True)


@discord_app.command("sync")
def discord_sync(
    guild: int = typer.Option(None, "--guild", help="one server only (instant; for testing)"),
) -> None:
    """Register the slash commands with Discord (the bot never syncs on start)."""

    import discord

    from bot.adapters.discord.bot import DiscordConfigError, sync_commands

    try:
        names = asyncio.run(sync_commands(bot_settings(), guild))
    except (DiscordConfigError, discord.DiscordException, OSError) as exc:
        err_console.print(f"discord sync failed: {exc}", markup=False)
        raise typer.Exit(code=1) from exc
    where = f"server {guild}" if guild else "all servers (global commands may take a while to appear)"
    console.print(f"synced {len(names)} commands to {where}: {', '.join(names)}", markup=False)
