"""What every `torchdrill` command shares: the consoles, the checked settings and the
database runner that turns an unmigrated or unreachable database into one line and exit 1."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.console import Console

from bot.config import ConfigError, Settings, get_settings, load

if TYPE_CHECKING:
    from runner.settings import RunnerSettings

console = Console()
err_console = Console(stderr=True)


def bot_settings() -> Settings:
    """The bot's settings, or one line naming the bad variable and exit 1."""
    try:
        return get_settings()
    except ConfigError as exc:
        err_console.print(str(exc), style="red", markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from None


def check_runner_settings() -> None:
    """serve and play start the runner in the background: check its settings first."""
    try:
        import runner.settings  # noqa: F401 - the runner extra may not be installed
    except ImportError:
        return
    checked_runner_settings()


def checked_runner_settings(**overrides: object) -> RunnerSettings:
    """The runner's RUNNER_* settings, checked the same way (a bad RUNNER_TIMEOUT_S is one
    line at start, not a runner that "is not available" later)."""
    from runner.settings import RunnerSettings

    try:
        return load(RunnerSettings, **overrides)
    except ConfigError as exc:
        err_console.print(str(exc), style="red", markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from None


T = TypeVar("T")


def on_database(task: Coroutine[Any, Any, T], what: str) -> T:
    """Run a command's database work: an unmigrated or unreachable database is one line and
    exit 1 (the error redacted: never the password)."""
    from bot.observability.logs import redact
    from bot.storage.db import NotMigratedError

    try:
        return asyncio.run(task)
    except NotMigratedError as exc:
        err_console.print(str(exc), markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    except Exception as exc:
        err_console.print(f"{what} failed: {redact(str(exc))}", markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
