"""The `torchdrill` command. Sub-commands import their heavy dependencies lazily."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from bot.config import ConfigError, get_settings
from bot.core.content.bank import Kind, Library, Problem, load_library
from bot.core.model.topics import TOPICS

app = typer.Typer(help="torchdrill: daily PyTorch interview drills for Discord and Slack.", no_args_is_help=True)
content_app = typer.Typer(help="Validate, import and count question banks.", no_args_is_help=True)
app.add_typer(content_app, name="content")

console = Console()
err_console = Console(stderr=True)


@content_app.command("check")
def content_check(
    files: list[Path] = typer.Argument(None, help="bank files to check (default: every bank in the content dir)"),
    content_dir: Path = typer.Option(None, help="directory of banks"),
    run: bool = typer.Option(False, "--run", help="also run every snippet and executable key"),
    warnings: bool = typer.Option(True, "--warnings/--no-warnings", help="print warnings"),
    workers: int = typer.Option(2, help="warm interpreters for --run"),
    schema_only: bool = typer.Option(
        False, "--schema-only", help="only the schema (e.g. an import draft before curation)"
    ),
) -> None:
    """Validate banks and their content rules; print `path:line: problem`; exit 1 on any error."""
    from bot.core.content.lint import lint_library

    settings = get_settings()
    directory = content_dir or settings.content_dir
    if files:
        library = load_library(directory / "__none__", extra_files=files)
    else:
        library = load_library(directory, extra_files=settings.extra_banks)
    problems = [*library.problems, *([] if schema_only else lint_library(library))]
    if not files:
        from bot.core.content.challenges import check_challenges

        problems.extend(check_challenges(directory))
    if run:
        problems.extend(_run_problems(library, workers))
    errors = [p for p in problems if not p.warning]
    for problem in problems:
        if warnings or not problem.warning:
            err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    n_banks = len(library.banks)
    n_warnings = len(problems) - len(errors)
    if errors:
        err_console.print(f"{len(errors)} problem(s), {n_warnings} warning(s); "
                          f"{len(library.skipped)} bank(s) skipped")
        raise typer.Exit(code=1)
    if n_banks == 0:
        err_console.print(f"no banks found in {directory}")
        raise typer.Exit(code=1)
    ran = " (snippets and keys run)" if run else ""
    console.print(f"ok: {n_banks} bank(s), {len(library)} questions, {n_warnings} warning(s){ran}")


def _run_problems(library: Library, workers: int) -> list[Problem]:
    """Run every runnable snippet in warm interpreters; a wrong key or failing run is an error."""
    from bot.core.content.keys import snippet_failures
    from bot.snippet_pool import run_all

    jobs = [(bank, q, i) for bank in library.banks for q in bank.questions
            for i, s in enumerate(q.code) if s.runnable]
    outcomes = run_all([q.code[i] for _, q, i in jobs], workers=workers)
    problems = []
    for (bank, q, i), outcome in zip(jobs, outcomes, strict=True):
        for failure in snippet_failures(q, i, outcome):
            problems.append(Problem(bank.path, bank.line_of(q.id, "code", i), failure))
    return problems


@content_app.command("stats")
def content_stats(content_dir: Path = typer.Option(None, help="directory of banks")) -> None:
    """Counts per bank, kind, topic and difficulty, balance figures, targets and coverage."""
    from bot.core.content.coverage import source_coverage
    from bot.core.content.lint import (
        KEY_LENGTH_MAX_RATIO,
        KEY_LONGEST_MAX_SHARE,
        bank_figures,
        library_targets,
    )

    settings = get_settings()
    library = load_library(content_dir or settings.content_dir, extra_files=settings.extra_banks)
    for problem in library.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)

    def table(title: str, counts: Counter[str]) -> None:
        t = Table(title=title)
        t.add_column(title.split()[-1])
        t.add_column("questions", justify="right")
        for key, n in sorted(counts.items()):
            t.add_row(str(key), str(n))
        console.print(t)

    questions = library.questions
    table("Questions per bank", Counter(q.bank for q in questions))
    table("Questions per kind", Counter(q.kind.value for q in questions))
    table("Questions per topic", Counter(q.topic for q in questions))
    table("Questions per difficulty", Counter(str(q.difficulty) for q in questions))
    t = Table(title="MCQs per bank")
    for col in ("bank", "mcqs", "hard", "exec", "key longest", "key/other len", "abs. tells"):
        t.add_column(col, justify="right")
    for bank in library.banks:
        fig = bank_figures(bank.questions)
        if not fig.mcqs:
            continue
        mcqs = [q for q in bank.questions if q.kind is Kind.MCQ]
        t.add_row(bank.id, str(fig.mcqs), str(sum(q.difficulty == 3 for q in mcqs)),
                  str(sum(q.check is not None for q in mcqs)),
                  f"{fig.key_longest_share:.0%} (max {KEY_LONGEST_MAX_SHARE:.0%})",
                  f"{fig.key_length_ratio:.2f} (max {KEY_LENGTH_MAX_RATIO})",
                  f"{fig.absolute_flagged} ({fig.absolute_share:.0%})")
    console.print(t)
    t = Table(title="MCQs per topic")
    for col in ("topic", "mcqs", "flashcards"):
        t.add_column(col, justify="right")
    for topic in TOPICS:
        t.add_row(topic, str(sum(q.topic == topic and q.kind is Kind.MCQ for q in questions)),
                  str(sum(q.topic == topic and q.kind is Kind.FLASHCARD for q in questions)))
    console.print(t)
    snippets = [s for q in questions for s in q.code]
    runnable = sum(s.runnable for s in snippets)
    console.print(f"snippets: {len(snippets)} ({runnable} runnable, {len(snippets) - runnable} not runnable)")
    console.print(f"total: {len(questions)} questions in {len(library.banks)} banks "
                  f"({sum(q.kind is Kind.MCQ for q in questions)} mcq)")
    t = Table(title="Targets (issue 15)")
    for col in ("target", "now", "met"):
        t.add_column(col)
    for target in library_targets(library):
        t.add_row(target.name, target.value, "yes" if target.met else "NO")
    console.print(t)
    t = Table(title="Source coverage")
    for col in ("source", "source questions", "covered", "missing"):
        t.add_column(col)
    for row in source_coverage(library):
        t.add_row(row.source, str(row.total), str(row.covered), ", ".join(map(str, row.missing)) or "-")
    console.print(t)


@content_app.command("import")
def content_import(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="raw source document"),
    format: str = typer.Option(..., "--format", help="mcq, numbered, qa or longform"),
    bank: str = typer.Option(None, help="bank id for the draft (default: from the file name)"),
    output: Path = typer.Option(None, "-o", "--output", help="write YAML here (default: stdout)"),
) -> None:
    """Turn a raw document into a draft YAML bank for a person to curate."""
    from bot.core.content.importers import ImportFormatError, import_file

    try:
        text = import_file(file, format, bank_id=bank)
    except ImportFormatError as exc:
        err_console.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    if output:
        output.write_text(text, encoding="utf-8")
        err_console.print(f"wrote {output}")
    else:
        typer.echo(text)


@content_app.command("verify")
def content_verify(
    files: list[Path] = typer.Argument(None, help="bank files (default: every bank in the content dir)"),
    sample: int = typer.Option(None, "--sample", min=1, help="run only N snippets, picked at random"),
    seed: int = typer.Option(0, "--seed", help="which random sample"),
    slots: int = typer.Option(None, "--slots", min=1, help="sandbox slots (default: RUNNER_CPU_SLOTS)"),
) -> None:
    """Run snippets and answer keys through this host's /run sandbox and torch; exit 1 on any
    disagreement (printed as `path:line: id: expected vs actual`)."""
    from runner.isolation import WeakIsolationError
    from runner.settings import RunnerSettings
    from runner.verify import verify

    settings = get_settings()
    if files:
        library = load_library(settings.content_dir / "__none__", extra_files=files)
    else:
        library = load_library(settings.content_dir, extra_files=settings.extra_banks)
    for problem in library.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if not library.banks:
        err_console.print("no banks to verify", markup=False)
        raise typer.Exit(code=1)
    runner_settings = RunnerSettings(**({"cpu_slots": slots} if slots else {}))
    try:
        done = verify(library, runner_settings, sample=sample, seed=seed)
    except WeakIsolationError as exc:
        err_console.print(str(exc), markup=False)
        raise typer.Exit(code=2) from exc
    if done.runtime is not None:
        console.print(f"sandbox: {done.runtime.describe()}", markup=False, highlight=False,
                      soft_wrap=True)
        if done.runtime.mismatch():
            err_console.print(f"warning: {done.runtime.mismatch()}", markup=False, soft_wrap=True)
    for problem in done.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    summary = f"{done.ran} of {done.runnable} runnable snippet(s) run in the sandbox"
    if done.problems or library.problems:
        err_console.print(f"{len(done.disagreeing)} question(s) disagree "
                          f"({', '.join(done.disagreeing) or 'none'}); {summary}", markup=False,
                          soft_wrap=True)
        raise typer.Exit(code=1)
    console.print(f"ok: {summary}, no disagreement", markup=False, highlight=False)


runner_app = typer.Typer(help="Sandboxed snippet runner: workers and isolation report.",
                         no_args_is_help=True)
app.add_typer(runner_app, name="runner")


@runner_app.command("worker")
def runner_worker(
    gpus: str = typer.Option(None, help="GPU indexes to serve, e.g. 0,1 (default: all; '' for none)"),
    cpu_slots: int = typer.Option(None, "--cpu-slots", help="CPU slots (default: RUNNER_CPU_SLOTS)"),
    redis_url: str = typer.Option(None, help="default: REDIS_URL"),
) -> None:
    """Serve the Redis job queue: one slot per GPU plus CPU slots, each a warm sandbox."""

    from runner.isolation import WeakIsolationError
    from runner.settings import RunnerSettings
    from runner.worker import run_worker

    overrides: dict[str, object] = {}
    if gpus is not None:
        overrides["gpus"] = [int(g) for g in gpus.split(",") if g.strip()]
    if cpu_slots is not None:
        overrides["cpu_slots"] = cpu_slots
    if redis_url:
        overrides["redis_url"] = redis_url
    from bot.observability import failures
    from bot.observability.logs import setup_logging

    settings = get_settings()
    if redis_url:
        settings.redis_url = redis_url
    setup_logging(settings.log_level, settings.log_json, settings=settings)
    try:
        run_worker(RunnerSettings(**overrides))
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
    from runner.settings import RunnerSettings

    isolation = detect()
    console.print(isolation.describe(), markup=False, highlight=False)
    if isolation.level is Level.WEAK and not RunnerSettings().allow_weak_isolation:
        console.print("workers will refuse to start here (RUNNER_ALLOW_WEAK_ISOLATION is off)",
                      markup=False)


discord_app = typer.Typer(help="Discord: register slash commands.", no_args_is_help=True)
app.add_typer(discord_app, name="discord")


@discord_app.command("sync")
def discord_sync(
    guild: int = typer.Option(None, "--guild", help="one server only (instant; for testing)"),
) -> None:
    """Register the slash commands with Discord (the bot never syncs on start)."""
    import asyncio

    import discord

    from bot.adapters.discord.bot import DiscordConfigError, sync_commands

    try:
        names = asyncio.run(sync_commands(get_settings(), guild))
    except (DiscordConfigError, discord.DiscordException, OSError) as exc:
        err_console.print(f"discord sync failed: {exc}", markup=False)
        raise typer.Exit(code=1) from exc
    where = f"server {guild}" if guild else "all servers (global commands may take a while to appear)"
    console.print(f"synced {len(names)} commands to {where}: {', '.join(names)}", markup=False)


slack_app = typer.Typer(help="Slack: the app manifest; purge a workspace's data.",
                        no_args_is_help=True)
app.add_typer(slack_app, name="slack")


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
    import asyncio

    from bot.adapters.slack.installs import forget_tokens
    from bot.core.play.installs import purge_workspace
    from bot.observability.logs import redact
    from bot.storage.db import Database, NotMigratedError

    team_id = team_id.strip()
    if not team_id:
        err_console.print("give the workspace's team id, e.g. T0123ABCD", markup=False)
        raise typer.Exit(code=2)
    if not yes and not typer.confirm(f"Delete all torchdrill data of Slack workspace {team_id}?"):
        raise typer.Exit(code=1)

    async def purge() -> str:
        db = Database(get_settings().database_url)
        try:
            await db.ensure_migrated()
            purged = await purge_workspace(db, "slack", team_id)
            tokens = await forget_tokens(db, team_id)
        finally:
            await db.dispose()
        return f"{purged.describe()}; {tokens} stored install row(s) removed"

    try:
        console.print(asyncio.run(purge()), markup=False, highlight=False, soft_wrap=True)
    except NotMigratedError as exc:
        err_console.print(str(exc), markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    except Exception as exc:  # the database is unreachable: say so, never the password
        err_console.print(f"purge failed: {redact(str(exc))}", markup=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc


@app.command()
def serve() -> None:
    """Run the bot: Discord and/or Slack when tokens are configured, else the console playground."""
    import asyncio
    import logging

    from bot.app import serve as serve_app
    from bot.lifecycle import run_until_signalled
    from bot.observability import failures
    from bot.observability.logs import setup_logging
    from bot.storage.db import NotMigratedError

    settings = get_settings()
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


@app.command()
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

    settings = get_settings()
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


@app.command()
def play(
    db: Path = typer.Option(Path("data/playground.db"), "--db", help="SQLite file (created and migrated)"),
    name: str = typer.Option(None, "--name", help="your player name (default: your OS user name)"),
) -> None:
    """Interactive console playground on a local SQLite file: no Discord or Slack token needed."""
    import asyncio
    import contextlib

    from bot.app import play as play_app
    from bot.config import Settings
    from bot.storage.db import migrate

    if db.exists() and db.is_dir():
        err_console.print(f"--db {db} is a directory; give a file path such as {db / 'playground.db'}",
                          markup=False)
        raise typer.Exit(code=2)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite+aiosqlite:///{db}"
        migrate(url)  # the playground is a local toy: no separate migrate step
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(play_app(Settings(database_url=url), db, name))
    except OSError as exc:
        err_console.print(f"cannot open the playground database {db}: {exc}", markup=False)
        raise typer.Exit(code=1) from exc


if __name__ == "__main__":
    app()
