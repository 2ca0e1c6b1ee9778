"""`torchdrill learning`: refit the stored ability and difficulty estimates."""

from __future__ import annotations

from pathlib import Path

import typer

from bot.cli.common import bot_settings, err_console, on_database
from bot.core.content.bank import load_library

learning_app = typer.Typer(help="Calibration: refit the stored ability and difficulty estimates.",
                           no_args_is_help=True)


@learning_app.command("refit")
def learning_refit(content_dir: Path = typer.Option(None, help="directory of banks")) -> None:
    """Batch-fit every revealed answer (Rasch / 2PL) and overwrite the stored estimates that the
    click path updates online; run it periodically (e.g. nightly from cron)."""
    from datetime import UTC, datetime

    from bot.storage.db import Database
    from bot.storage.estimates import RefitSummary, refit

    settings = bot_settings()
    library = load_library(content_dir or settings.content_dir, extra_files=settings.extra_banks)

    async def run() -> RefitSummary:
        db = Database(settings.database_url)
        try:
            await db.ensure_migrated()
            return await refit(db, library, datetime.now(UTC))
        finally:
            await db.dispose()

    done = on_database(run(), "refit")
    err_console.print(f"refit {done.questions} questions in {done.scopes} bank scopes and {done.abilities} "
                      f"member abilities from {done.answers:,} answers", markup=False, highlight=False,
                      soft_wrap=True)
