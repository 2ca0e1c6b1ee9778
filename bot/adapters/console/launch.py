"""`torchdrill play`: the playground on its own local SQLite file, migrated on the spot.

As in `serve`, the code runner starts in the background: the prompt is usable at once, and
a host where the sandbox cannot start still plays (``run`` then says why it is unavailable).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from bot.adapters.console.play import ConsoleAdapter
from bot.app import App, build_app
from bot.config import Settings
from bot.storage.db import migrate

DEFAULT_DB = Path("data/playground.db")
RUNNER_JOURNAL = "playground-runner-journal.sqlite3"


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def prepare(db_path: Path) -> str:
    """Create and migrate the playground's SQLite file (a local toy: no separate step)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    url = sqlite_url(db_path)
    migrate(url)
    return url


async def start_runner(app: App, journal: Path) -> str | None:
    """Start the playground's embedded runner, journal next to its DB; returns why not."""
    app.runner_overrides["journal_path"] = journal
    return await app.start_runner()


async def play(settings: Settings, db_path: Path, name: str | None) -> None:
    app = await build_app(settings, with_runner=False)
    try:
        adapter = ConsoleAdapter(app, name=name, files_dir=db_path.parent / "playground-files")
    except BaseException:
        await app.close()
        raise
    try:
        app.publisher.register(adapter.platform, adapter.publisher)
        await adapter.start()
        app.runner_task = asyncio.create_task(
            start_runner(app, db_path.parent / RUNNER_JOURNAL), name="playground runner"
        )
        await app.start()
        await adapter.run_forever()
    finally:
        await adapter.close()
        await app.close()


def main(db_path: Path, name: str | None) -> None:
    url = prepare(db_path)
    settings = Settings(database_url=url)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(play(settings, db_path, name))
