"""Every code snippet in every bank runs on CPU torch and shows what its question promises.

Snippets are shown to people as working answers, and an executable MCQ's key is what its
snippet actually does: a snippet that crashes, an ``expect`` that is not printed, or a key
that is not what happens is a content bug and fails here, naming the question.
Snippets run once per session in a few warm interpreters (bot/snippet_pool.py); each gets a
clean namespace and an empty temporary directory with CUDA hidden, like the CPU CI machines.
A question marked ``device: cuda`` claims what only CUDA does: its snippets are skipped here
(pytest counts them as skipped) and run on a GPU by ``torchdrill content verify --device cuda``.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from bot.core.content.bank import Library, Question, Snippet, load_library
from bot.core.content.keys import Outcome, missing_expectations, snippet_failures
from bot.snippet_pool import needs_own_process, run_all, run_isolated

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

WORKERS = max(1, min(3, os.cpu_count() or 1))
WRONG_KEYS = Path(__file__).parents[1] / "fixtures" / "keys" / "wrong_keys.yaml"

LIBRARY: Library = load_library()
RUNNABLE: dict[str, tuple[Question, int]] = {
    f"{q.id}#{n}": (q, n - 1)
    for q in LIBRARY.questions
    for n, snippet in enumerate(q.code, 1)
    if snippet.runnable
}


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """Run every snippet selected in this session once, in warm interpreters."""
    selected = [
        item.callspec.params["snippet_id"]
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and getattr(item, "originalname", None) == "test_snippet_runs"
    ]
    selected = [sid for sid in selected if RUNNABLE[sid][0].cpu_runnable]
    snippets = [RUNNABLE[sid][0].code[RUNNABLE[sid][1]] for sid in selected]
    return dict(zip(selected, run_all(snippets, workers=WORKERS), strict=True))


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


def test_every_executable_key_is_run_here() -> None:
    executable = [q for q in LIBRARY.questions if q.check is not None]
    assert all(f"{q.id}#1" in RUNNABLE for q in executable)


def test_missing_expectations_checks_order() -> None:
    assert missing_expectations("a 1\nb 2\n", ["a", "b"]) == []
    assert missing_expectations("b 2\na 1\n", ["a", "b"]) == ["b"]
    assert missing_expectations("a", ["a", "a"]) == ["a"]


def code(text: str, **extra: object) -> Snippet:
    return Snippet(code=textwrap.dedent(text), **extra)


def test_warm_jobs_are_as_clean_as_a_new_interpreter() -> None:
    jobs = [
        code("""
            import os, sys, torch
            open("mod_written.py", "w").write("VALUE = 1\\n")
            import mod_written
            leaked = 42
            torch.set_default_dtype(torch.float64)
            torch.set_grad_enabled(False)
            torch.manual_seed(0)
            torch.set_flush_denormal(True)
            os.environ["LEAK"] = "1"
            print(os.path.basename(os.getcwd()).startswith("snippet-"), sorted(os.listdir(".")))
        """),
        code("""
            import os, sys, torch
            print("leaked" in globals(), "mod_written" in sys.modules, sorted(os.listdir(".")))
            print(torch.get_default_dtype(), torch.is_grad_enabled(), torch.initial_seed())
            print(repr(os.environ.get("LEAK")), repr(os.environ["CUDA_VISIBLE_DEVICES"]), __name__)
            print(torch.tensor([1e-320], dtype=torch.float64).item() > 0)  # denormals kept
        """),
    ]
    first, second = run_all(jobs, workers=1)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "True ['mod_written.py', 'snippet.py']"
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "False False ['snippet.py']",
        "torch.float32 True 67280421310721",
        "None '' __main__",
        "True",
    ]


def test_classes_of_a_warm_snippet_pickle_like_in_a_script() -> None:
    """pickle (torch.save, DataLoader) finds a snippet's classes through ``__main__``."""
    pickling = code("""
        import io, pickle, torch
        class Config:
            size = 3
        buffer = io.BytesIO()
        torch.save({"config": Config()}, buffer)
        buffer.seek(0)
        print(torch.load(buffer, weights_only=False)["config"].size, __name__)
        print(pickle.loads(pickle.dumps(Config())).size)
    """)
    outcome = run_all([pickling], workers=1)[0]
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stdout.splitlines() == ["3 __main__", "3"]


def test_errors_are_located_in_the_shown_code_not_the_setup() -> None:
    failing = Snippet(setup="import torch\nx = torch.zeros(2, 3)", code="print('before')\ny = x.t()\ny.view(-1)")
    warm, cold = run_all([failing], workers=1)[0], run_isolated(failing)
    for outcome in (warm, cold):
        assert outcome.returncode == 1
        assert outcome.stdout == "before\n"
        assert outcome.error and outcome.error.startswith("RuntimeError: view size is not compatible")
        assert outcome.shown_line(failing) == 3
        assert "Traceback (most recent call last)" in outcome.stderr


def test_a_hanging_or_dying_snippet_costs_one_job() -> None:
    jobs = [code("import time\ntime.sleep(30)"), code("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
            code("raise SystemExit(3)"), code("print(repr(input()))"), code("print('still serving')")]
    started = time.monotonic()
    hung, killed, exited, reads, after = run_all(jobs, workers=1, timeout=3)
    assert time.monotonic() - started < 25
    assert hung.returncode is None and hung.note == "timed out after 3s"
    assert killed.returncode is None and killed.note and "died" in killed.note
    assert exited.returncode == 3 and exited.error is None
    assert reads.error == "EOFError: EOF when reading a line"  # stdin is empty, never the jobs
    assert after.returncode == 0 and after.stdout == "still serving\n"


def test_threads_and_processes_get_an_interpreter_of_their_own() -> None:
    assert needs_own_process(code("import torch.distributed as dist"))
    assert needs_own_process(code("DataLoader(ds, num_workers=2)"))
    assert needs_own_process(code("print(1)", isolate=True))
    assert needs_own_process(code("@torch.library.custom_op('demo::f', mutates_args=())"))
    assert not needs_own_process(code("DataLoader(ds, num_workers=0)"))


def test_wrong_keys_fail_naming_the_question_and_what_happened() -> None:
    library = load_library(WRONG_KEYS.parent / "__none__", extra_files=[WRONG_KEYS])
    assert library.problems == [] and len(library.questions) == 6
    jobs = [(q, i) for q in library.questions for i, s in enumerate(q.code) if s.runnable]
    outcomes = run_all([q.code[i] for q, i in jobs], workers=WORKERS)
    failures = {q.id: snippet_failures(q, i, o) for (q, i), o in zip(jobs, outcomes, strict=True)}
    view_error = "RuntimeError: view size is not compatible with input tensor's size and stride"
    assert failures["wrong-stdout-key"] == [
        "wrong-stdout-key: check stdout: keyed choice '`torch.Size([2, 3])`' but the snippet printed "
        "'torch.Size([6])'",
        "wrong-stdout-key: check stdout: distractor '`torch.Size([6])`' is what the snippet printed",
    ]
    line, distractor = failures["wrong-raises-line"]
    assert line.startswith(f"wrong-raises-line: check raises_at: keyed 'Line 2' but the snippet raised {view_error}")
    assert line.endswith(" at line 3")
    assert distractor == ("wrong-raises-line: check raises_at: distractor 'Line 3: the `view` call' "
                          "is where it raised (Line 3)")
    clean = failures["wrong-runs-clean"][0]
    assert clean.startswith("wrong-runs-clean: check raises_at: keyed 'It runs without an error' but "
                            "the snippet raised RuntimeError: inconsistent tensor size")
    assert failures["wrong-said-raises"] == [
        "wrong-said-raises: check raises_at: keyed 'Line 2' but the snippet ran without an error"]
    crash = failures["wrong-crashes"]
    assert len(crash) == 1 and crash[0].startswith(f"wrong-crashes: check stdout: the snippet raised {view_error}")
    assert crash[0].endswith(" at line 2")
    assert failures["wrong-expect"] == ["wrong-expect#1: expected output not found in order: ['7']"]


@pytest.mark.slow
@pytest.mark.parametrize("snippet_id", sorted(RUNNABLE))
def test_snippet_runs(snippet_id: str, outcomes: dict[str, Outcome]) -> None:
    question, index = RUNNABLE[snippet_id]
    if not question.cpu_runnable:
        pytest.skip(f"device: {question.device}: its claim holds on that device only; "
                    f"`torchdrill content verify --device {question.device}` runs it there")
    outcome = outcomes[snippet_id]
    failures = snippet_failures(question, index, outcome)
    tail = (
        f" ({outcome.seconds:.1f}s)\n--- stdout ---\n{outcome.stdout[-3000:]}"
        f"\n--- stderr ---\n{outcome.stderr[-3000:]}"
    )
    assert failures == [], f"{failures}{tail}"


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
