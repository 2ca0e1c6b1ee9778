"""`torchdrill slack`: the app manifest; purge a workspace's data."""

from __future__ import annotations

import typer

from bot.cli.common import bot_settings, console, err_console, on_database

slack_app = typer.Typer(help="Slack: the app manifest; purge a workspace's data.",
                        no_args_is_help=True)


@slack_app.command("manifest")
def slack_manifest(
    url: str = typer.Option(
        None, "--url", help="HTTP mode: https://<host> or https://<host>/slack/events "
        "(default: Socket Mode)"
    ),
    name: str = typer.Option("torchdrill", "--name", help="app and bot display name"),
    distributed: bool = typer.Option(
        False, "--distributed", help="many workspaces: OAuth installs (needs --url), the "
        "redirect URL and the uninstall events"
    ),
) -> None:
    """Print the Slack app manifest (JSON) with every command, the shortcut and the scopes."""
    import json

    from bot.adapters.slack.manifest import ManifestError, manifest

    try:
        typer.echo(json.dumps(manifest(name, url, distributed=distributed), indent=2))
    except ManifestError as exc:
        err_console.print(str(exc), markup=False, soft_wrap=True)
        raise typer.Exit(code=2) from exc


@slack_app.command("purge")
def slack_purge(
    team_id: str = typer.Argument(..., help="the workspace's team id, T…"),
    yes: bool = typer.Option(False, "--yes", help="do not ask for confirmation"),
) -> None:
    """Delete everything stored for one Slack workspace: members, channels, posts, answers,
    boards, groups, schedules and its installation (tokens). Other workspaces are untouched."""

    from bot.adapters.slack.installs import forget_tokens
    from bot.storage.db import Database
    from bot.storage.workspaces import purge_workspace

    team_id = team_id.strip()
    if not team_id:
        err_console.print("give the workspace's team id, e.g. T0123ABCD", markup=False)
        raise typer.Exit(code=2)
    if not yes and not typer.confirm(f"Delete all torchdrill data of Slack workspace {team_id}?"):
        raise typer.Exit(code=1)

    async def purge() -> str:
        db = Database(bot_settings().database_url)
        try:
            await db.ensure_migrated()
            purged = await purge_workspace(db, "slack", team_id)
            tokens = await forget_tokens(db, team_id)
        finally:
            await db.dispose()
        return f"{purged.describe()}; {tokens} stored install row(s) removed"

    console.print(on_database(purge(), "purge"), markup=False, highlight=False, soft_wrap=True)
