"""Every code snippet in every bank must run on CPU torch and print what its text promises.

Snippets are shown to people as working answers, so a snippet that crashes or whose stated
output is wrong is a content bug. Each one runs in a fresh interpreter in an empty temporary
directory (snippets may write files there) with CUDA hidden, like the CPU CI machines.
Runs happen once, in a small thread pool, for the snippets selected in this session.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.content import Library, Snippet, load_library

TIMEOUT_S = 120
WORKERS = max(1, min(4, os.cpu_count() or 1))

LIBRARY: Library = load_library()
RUNNABLE: dict[str, Snippet] = {
    f"{q.id}#{n}": snippet
    for q in LIBRARY.questions
    for n, snippet in enumerate(q.code, 1)
    if snippet.runnable
}


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None when the run timed out
    stdout: str
    stderr: str
    seconds: float


def run_snippet(snippet: Snippet) -> Outcome:
    """Run the snippet's full program in a new interpreter inside a fresh temporary directory."""
    env = {
        **os.environ,
        "CUDA_VISIBLE_DEVICES": "",
        # several snippets run at once on a small machine: keep each one to one thread
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="snippet-") as tmp:
        script = Path(tmp) / "snippet.py"
        script.write_text(snippet.program(), encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            return Outcome(None, _text(exc.stdout), _text(exc.stderr), time.monotonic() - started)
    return Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def missing_expectations(stdout: str, expect: list[str]) -> list[str]:
    """The expected strings not found in stdout in the given order (empty when all match)."""
    position = 0
    for index, wanted in enumerate(expect):
        found = stdout.find(wanted, position)
        if found < 0:
            return expect[index:]
        position = found + len(wanted)
    return []


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """Run every snippet selected in this session once, in parallel."""
    selected = [
        item.callspec.params["snippet_id"]
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and getattr(item, "originalname", None) == "test_snippet_runs"
    ]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = pool.map(run_snippet, (RUNNABLE[sid] for sid in selected))
        return dict(zip(selected, results, strict=True))


def test_library_has_no_problems() -> None:
    assert [str(p) for p in LIBRARY.problems] == []
    assert LIBRARY.banks, "no banks were loaded from content/"


def test_every_non_runnable_snippet_says_why() -> None:
    unexplained = [
        f"{q.id}#{n}"
        for q in LIBRARY.questions
        for n, s in enumerate(q.code, 1)
        if not s.runnable and not (s.reason and s.reason.strip())
    ]
    assert unexplained == []


def test_expectations_only_on_runnable_snippets() -> None:
    """An `expect` on a snippet that never runs would be a promise nobody checks."""
    unchecked = [
        f"{q.id}#{n}"
        for q in LIBRARY.questions
        for n, s in enumerate(q.code, 1)
        if not s.runnable and s.expect
    ]
    assert unchecked == []


def test_missing_expectations_checks_order() -> None:
    assert missing_expectations("a 1\nb 2\n", ["a", "b"]) == []
    assert missing_expectations("b 2\na 1\n", ["a", "b"]) == ["b"]
    assert missing_expectations("a", ["a", "a"]) == ["a"]


def test_run_snippet_reports_failure_and_output() -> None:
    outcome = run_snippet(Snippet(code="import os\nprint(os.getcwd())\nraise SystemExit(3)"))
    assert outcome.returncode == 3
    assert "snippet-" in outcome.stdout
    hidden = run_snippet(Snippet(code="import os\nprint(repr(os.environ['CUDA_VISIBLE_DEVICES']))"))
    assert hidden.stdout.strip() == "''"


@pytest.mark.slow
@pytest.mark.parametrize("snippet_id", sorted(RUNNABLE))
def test_snippet_runs(snippet_id: str, outcomes: dict[str, Outcome]) -> None:
    snippet = RUNNABLE[snippet_id]
    outcome = outcomes[snippet_id]
    tail = (
        f" ({outcome.seconds:.1f}s)\n--- stdout ---\n{outcome.stdout[-3000:]}"
        f"\n--- stderr ---\n{outcome.stderr[-3000:]}"
    )
    assert outcome.returncode is not None, f"{snippet_id} timed out after {TIMEOUT_S}s{tail}"
    assert outcome.returncode == 0, f"{snippet_id} exited with {outcome.returncode}{tail}"
    missing = missing_expectations(outcome.stdout, snippet.expect)
    assert missing == [], f"{snippet_id}: expected output not found in order: {missing}{tail}"


def test_deep_dives_cover_every_answer_of_seed_004_once() -> None:
    """The long-form bank is the curated form of seed 004: each of its 27 answers exactly once."""
    bank = next((b for b in LIBRARY.banks if b.id == "deep-dives"), None)
    assert bank is not None, "content/deep-dives.yaml did not load"
    refs = sorted(int(ref.partition("#")[2]) for q in bank.questions for ref in q.sources)
    assert refs == list(range(1, 28))
    assert {q.kind.value for q in bank.questions} == {"deep_dive"}
    ids = {q.id for q in bank.questions}
    assert all(q.id.startswith("dd-") for q in bank.questions)
    assert [(q.id, r) for q in bank.questions for r in q.related if r not in ids or r == q.id] == []
