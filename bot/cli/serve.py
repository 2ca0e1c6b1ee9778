"""`torchdrill serve` and `torchdrill play`: run the bot on the platforms, or the console
playground on a local SQLite file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from bot.cli.common import bot_settings, check_runner_settings, err_console
from bot.config import ConfigError, Settings, load


def serve() -> None:
    """Run the bot: Discord and/or Slack when tokens are configured, else the console playground."""
    import logging

    from bot.app import serve as serve_app
    from bot.lifecycle import run_until_signalled
    from bot.observability import failures
    from bot.observability.logs import setup_logging
    from bot.storage.db import NotMigratedError

    settings = bot_settings()
    check_runner_settings()
    json_logs = False
    if settings.discord_token or settings.slack_bot_token or settings.slack_oauth:  # before banks log
        json_logs = settings.log_json if settings.log_json is not None else not sys.stderr.isatty()
        setup_logging(settings.log_level, json_logs, settings=settings)
    logging.getLogger("alembic").setLevel(logging.WARNING)  # the schema check's chatter
    try:
        asyncio.run(run_until_signalled(serve_app(settings)))  # SIGTERM: clean exit 0
    except (NotMigratedError, ConfigError) as exc:
        err_console.print(str(exc), style="red", markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # unreachable database or platform: one line, exit 1
        if not failures.report(exc, settings, json=json_logs):
            raise
        raise typer.Exit(code=1) from None


def play(
    db: Path = typer.Option(Path("data/playground.db"), "--db", help="SQLite file (created and migrated)"),
    name: str = typer.Option(None, "--name", help="your player name (default: your OS user name)"),
) -> None:
    """Interactive console playground on a local SQLite file: no Discord or Slack token needed."""
    import contextlib

    from bot.app import play as play_app
    from bot.storage.db import migrate

    check_runner_settings()
    if db.exists() and db.is_dir():
        err_console.print(f"--db {db} is a directory; give a file path such as {db / 'playground.db'}",
                          markup=False)
        raise typer.Exit(code=2)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite+aiosqlite:///{db}"
        try:
            playground_settings = load(Settings, database_url=url)
        except ConfigError as exc:
            err_console.print(str(exc), style="red", markup=False, soft_wrap=True)
            raise typer.Exit(code=1) from None
        migrate(url)  # the playground is a local toy: no separate migrate step
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(play_app(playground_settings, db, name))
    except OSError as exc:
        err_console.print(f"cannot open the playground database {db}: {exc}", markup=False)
        raise typer.Exit(code=1) from exc
