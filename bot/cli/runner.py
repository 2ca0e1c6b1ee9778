"""`torchdrill runner`: the sandboxed snippet runner's workers and isolation report."""

from __future__ import annotations

import sys
from typing import Any

import typer

from bot.cli.common import bot_settings, checked_runner_settings, console, err_console

runner_app = typer.Typer(help="Sandboxed snippet runner: workers and isolation report.",
                         no_args_is_help=True)


@runner_app.command("worker")
def runner_worker(
    gpus: str = typer.Option(None, help="GPU indexes to serve, e.g. 0,1 (default: all; '' for none)"),
    cpu_slots: int = typer.Option(None, "--cpu-slots", help="CPU slots (default: RUNNER_CPU_SLOTS)"),
    redis_url: str = typer.Option(None, help="default: REDIS_URL"),
) -> None:
    """Serve the Redis job queue: one slot per GPU plus CPU slots, each a warm sandbox."""

    from runner.isolation import WeakIsolationError
    from runner.worker import run_worker

    overrides: dict[str, Any] = {}  # RunnerSettings validates each value
    if gpus is not None:
        overrides["gpus"] = [int(g) for g in gpus.split(",") if g.strip()]
    if cpu_slots is not None:
        overrides["cpu_slots"] = cpu_slots
    if redis_url:
        overrides["redis_url"] = redis_url
    from bot.observability import failures
    from bot.observability.logs import setup_logging

    settings = bot_settings()
    if redis_url:
        settings.redis_url = redis_url
    setup_logging(settings.log_level, settings.log_json, settings=settings)
    try:
        run_worker(checked_runner_settings(**overrides))
    except WeakIsolationError as exc:
        err_console.print(str(exc), markup=False)
        raise typer.Exit(code=2) from exc
    except Exception as exc:  # e.g. no Redis there: one line, exit 1
        json_logs = settings.log_json if settings.log_json is not None else not sys.stderr.isatty()
        if not failures.report(exc, settings, json=json_logs):
            raise
        raise typer.Exit(code=1) from None


@runner_app.command("isolation")
def runner_isolation() -> None:
    """Print the sandbox isolation this host gives /run snippets (probed, not assumed)."""
    from runner.isolation import Level, detect

    isolation = detect()
    # soft_wrap: each feature, problem and warning stays one line (greppable, not cut at 80)
    console.print(isolation.describe(), markup=False, highlight=False, soft_wrap=True)
    if isolation.level is Level.WEAK and not checked_runner_settings().allow_weak_isolation:
        console.print("workers will refuse to start here (RUNNER_ALLOW_WEAK_ISOLATION is off)",
                      markup=False)
