"""`torchdrill content`: validate, count, import, verify banks and report question quality."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from bot.cli.common import bot_settings, checked_runner_settings, console, err_console, on_database
from bot.core.content.bank import Kind, Library, Problem, load_library
from bot.core.domain.topics import TOPICS

content_app = typer.Typer(help="Validate, import and count question banks.", no_args_is_help=True)


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
    strict: bool = typer.Option(
        False, "--strict", help="a distractor without a why_not is an error in every bank, not only "
                                "in the content dir's own (extra banks: a warning)"),
) -> None:
    """Validate banks and their content rules; print `path:line: problem`; exit 1 on any error."""
    from bot.core.content.bank import bank_files
    from bot.core.content.lint import lint_library

    settings = bot_settings()
    directory = content_dir or settings.content_dir
    if files:
        library = load_library(directory / "__none__", extra_files=files)
    else:
        library = load_library(directory, extra_files=settings.extra_banks)
    own = {path.resolve() for path in bank_files(directory)} if not files else set()
    problems = [*library.problems, *([] if schema_only else lint_library(
        library, strict=lambda bank: strict or bank.path.resolve() in own))]
    if not files:
        from bot.core.content.challenges import check_challenges

        problems.extend(check_challenges(directory))
        from bot.core.mock.tracks import check_tracks

        problems.extend(check_tracks(directory))
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
            for i, s in enumerate(q.code) if s.runnable and q.cpu_runnable]
    device_only = sum(s.runnable for q in library.questions if not q.cpu_runnable for s in q.code)
    if device_only:
        err_console.print(f"skipped {device_only} snippet(s) of device: cuda questions (run them on a "
                          "GPU with `torchdrill content verify --device cuda`)", markup=False, soft_wrap=True)
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
        RECALL_MAX_SHARE,
        area_figures,
        bank_figures,
        depth_targets,
        library_targets,
        recall_figures,
    )

    settings = bot_settings()
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
    t = Table(title="MCQs per depth area (issue 35)")
    for col in ("area", "mcqs", "difficulty 2-3", "target", "exec", "device: cuda"):
        t.add_column(col, justify="right")
    for area in area_figures(questions):
        t.add_row(area.area.value, str(area.mcqs), str(area.deep), f">= {area.target}",
                  str(area.executable), str(area.device_only))
    console.print(t)
    recall = recall_figures(questions)
    console.print(f"skill: recall: {recall.recall} of {recall.deep} difficulty 2-3 MCQs "
                  f"({recall.share:.1%}; at most {RECALL_MAX_SHARE:.0%})", markup=False,
                  highlight=False)
    t = Table(title="Targets (issues 15 and 35)")
    for col in ("target", "now", "met"):
        t.add_column(col)
    for target in [*library_targets(library), *depth_targets(library)]:
        t.add_row(target.name, target.value, "yes" if target.met else "NO")
    console.print(t)
    challenge_dir = (content_dir or settings.content_dir) / "challenges"
    if challenge_dir.is_dir():
        from bot.core.content.challenges import HARD_CHALLENGES_MIN, load_challenges

        per_difficulty = load_challenges(challenge_dir).per_difficulty()
        t = Table(title="Challenges per difficulty")
        for col in ("difficulty", "challenges"):
            t.add_column(col, justify="right")
        for difficulty, n in per_difficulty.items():
            t.add_row(str(difficulty), str(n))
        console.print(t)
        hard = per_difficulty[3]
        console.print(f"hard challenges (difficulty 3): {hard} of {sum(per_difficulty.values())} "
                      f"(at least {HARD_CHALLENGES_MIN}: {'yes' if hard >= HARD_CHALLENGES_MIN else 'NO'})",
                      markup=False, highlight=False)
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


@content_app.command("quality")
def content_quality(
    export: Path = typer.Option(..., "--export", dir_okay=False, help="write the markdown report here"),
    content_dir: Path = typer.Option(None, help="directory of banks"),
) -> None:
    """Question quality of the built-in banks from every recorded answer (markdown report)."""
    from bot.core.domain.clock import SystemClock
    from bot.core.learning.irt import ItemEstimate
    from bot.core.learning.quality import QualityRules, QuestionStats
    from bot.core.learning.report import items_of, render_markdown, stored_quality_rows
    from bot.core.learning.report_desk import ReportCounts
    from bot.storage.db import Database
    from bot.storage.learning_picks import StoredQualityData
    from bot.storage.question_reports import StoredReports

    settings = bot_settings()
    library = load_library(content_dir or settings.content_dir, extra_files=settings.extra_banks)
    items = items_of(library.questions)
    rules = QualityRules()

    async def read() -> tuple[dict[str, QuestionStats], dict[str, ItemEstimate], dict[str, ReportCounts]]:
        db = Database(settings.database_url)
        try:
            await db.ensure_migrated()
            data = StoredQualityData(db)  # the same reads as /bank quality builtin
            return (await data.stats(items, None, rules.groups), await data.estimates(items, None),
                    await StoredReports(db, SystemClock()).open_counts({q.id for q in library.questions}))
        finally:
            await db.dispose()

    stats, estimates, reported = on_database(read(), "quality report")
    rows = stored_quality_rows(items, stats, estimates, rules)
    answers = sum(s.answers for s in stats.values())
    reports = {q: (r.describe(), r.notes) for q, r in reported.items()}
    export.write_text(render_markdown(rows, {b.id: b.title for b in library.banks}, answers, reports),
                      encoding="utf-8")
    flagged = sum(1 for row in rows if row.flags)
    also = f", {len(reports)} reported by members" if reports else ""
    err_console.print(f"wrote {export}: {len(rows)} questions, {answers:,} answers, {flagged} flagged{also}",
                      markup=False, highlight=False, soft_wrap=True)


@content_app.command("verify")
def content_verify(
    files: list[Path] = typer.Argument(None, help="bank files (default: every bank in the content dir)"),
    sample: int = typer.Option(None, "--sample", min=1, help="run only N snippets, picked at random"),
    seed: int = typer.Option(0, "--seed", help="which random sample"),
    slots: int = typer.Option(None, "--slots", min=1, help="sandbox slots (default: RUNNER_CPU_SLOTS)"),
    device: str = typer.Option("cpu", "--device", help="cpu (every question but device "
                               "claims) or cuda (only `device: cuda` questions, on a GPU)"),
    record: Path = typer.Option(None, "--record", help="where --device cuda records its runs "
                                "(default: verified.yaml in the content dir)"),
) -> None:
    """Run snippets and answer keys through this host's /run sandbox and torch; exit 1 on any
    disagreement (printed as `path:line: id: expected vs actual`)."""
    from bot.core.content import verified
    from bot.snippet_verify import NoCudaError, verify
    from runner.isolation import WeakIsolationError

    if device not in ("cpu", "cuda"):
        err_console.print(f"--device is cpu or cuda, not {device!r}", markup=False)
        raise typer.Exit(code=2)

    settings = bot_settings()
    if files:
        library = load_library(settings.content_dir / "__none__", extra_files=files)
    else:
        library = load_library(settings.content_dir, extra_files=settings.extra_banks)
    for problem in library.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if not library.banks:
        err_console.print("no banks to verify", markup=False)
        raise typer.Exit(code=1)
    runner_settings = checked_runner_settings(**({"cpu_slots": slots} if slots else {}))
    try:
        done = verify(library, runner_settings, sample=sample, seed=seed, device=device)
    except WeakIsolationError as exc:
        err_console.print(str(exc), markup=False)
        raise typer.Exit(code=2) from exc
    except NoCudaError as exc:
        claims = sum(q.device == "cuda" for q in library.questions)
        err_console.print(f"refused: {exc}; {claims} device: cuda question(s) not verified, "
                          "nothing recorded", markup=False, soft_wrap=True)
        raise typer.Exit(code=2) from exc
    if done.runtime is not None:
        console.print(f"sandbox: {done.runtime.describe()}", markup=False, highlight=False,
                      soft_wrap=True)
        if done.runtime.mismatch():
            err_console.print(f"warning: {done.runtime.mismatch()}", markup=False, soft_wrap=True)
    for problem in done.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    summary = f"{done.ran} of {done.runnable} runnable snippet(s) run in the sandbox"
    if done.skipped:
        summary += (f"; {done.skipped} snippet(s) of device: cuda questions skipped (verify them "
                    "on a GPU with --device cuda)")
    if device == "cuda":
        torch_build = done.runtime.torch if done.runtime and done.runtime.torch else "unknown"
        path = record or settings.content_dir / "verified.yaml"
        try:
            verified.record(path, {qid: verified.DeviceRun(done.devices[qid], torch_build)
                                   for qid in done.agreed}, done.disagreeing)
        except verified.VerifiedFileError as exc:
            err_console.print(str(exc), markup=False, soft_wrap=True)
            raise typer.Exit(code=1) from exc
        summary += f"; {len(done.agreed)} question(s) recorded in {path}"
    if done.problems or library.problems:
        err_console.print(f"{len(done.disagreeing)} question(s) disagree "
                          f"({', '.join(done.disagreeing) or 'none'}); {summary}", markup=False,
                          soft_wrap=True)
        raise typer.Exit(code=1)
    console.print(f"ok: {summary}, no disagreement", markup=False, highlight=False)
