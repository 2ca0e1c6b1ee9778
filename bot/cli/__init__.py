"""The `torchdrill` command: one module per command group, assembled here into ``app`` (the
console script ``bot.cli:app``). Sub-commands import their heavy dependencies lazily."""

from __future__ import annotations

import typer

from bot.cli.content import content_app
from bot.cli.discord import discord_app
from bot.cli.learning import learning_app
from bot.cli.migrate import migrate
from bot.cli.runner import runner_app
from bot.cli.serve import play, serve
from bot.cli.slack import slack_app

app = typer.Typer(help="torchdrill: daily PyTorch interview drills for Discord and Slack.", no_args_is_help=True)
app.add_typer(content_app, name="content")
app.add_typer(learning_app, name="learning")
app.add_typer(runner_app, name="runner")
app.add_typer(discord_app, name="discord")
app.add_typer(slack_app, name="slack")
app.command()(serve)
app.command()(migrate)
app.command()(play)

__all__ = ["app"]
