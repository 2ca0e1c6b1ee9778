"""`torchdrill migrate`: move the database schema up or down."""

from __future__ import annotations

import typer

from bot.cli.common import bot_settings, console, err_console


def migrate(
    revision: str = typer.Option(
        "head", help="Alembic revision to move to: head, base (empty schema) or an id; up or down"
    ),
) -> None:
    """Upgrade (or downgrade) the database schema (DATABASE_URL); safe to run on every deploy."""
    import logging

    from sqlalchemy.engine import make_url

    from bot.observability.logs import redact, setup_logging
    from bot.storage.db import UnknownRevisionError, head_revision, migrate_to

    settings = bot_settings()
    setup_logging(settings.log_level, settings.log_json, settings=settings)
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    logging.getLogger("alembic.runtime.migration").setLevel(logging.WARNING)
    where = make_url(settings.database_url).render_as_string(hide_password=True)
    try:
        done = migrate_to(settings.database_url, revision)
    except UnknownRevisionError as exc:
        err_console.print(str(exc), markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    except Exception as exc:  # any driver error: say what failed, never the password
        err_console.print(f"migration of {where} failed: {redact(str(exc))}", markup=False,
                          soft_wrap=True)
        raise typer.Exit(code=1) from exc
    note = "" if done.after == head_revision() else f" (head is {head_revision()})"
    console.print(done.describe(where) + note, markup=False, highlight=False, soft_wrap=True)
