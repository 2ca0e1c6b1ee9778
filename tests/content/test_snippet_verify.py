"""The snippet verifier behind `torchdrill content verify` (bot/snippet_verify.py), in-process:
reading tracebacks, turning the sandbox's raw view into the judge's terms, sampling, and
verify() on a fake pool. tests/content/test_content_verify.py runs the real command on a real sandbox;
mutmut cannot see tests that run in a subprocess (issue 21), so these call it directly."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from bot import snippet_verify
from bot.core.content.bank import Bank, Library, Question, Snippet, load_bank
from bot.core.content.keys import Outcome
from runner.jobs import Device, Limits
from runner.sandbox import Gpu, RawOutcome
from runner.settings import RunnerSettings
from runner.versions import Runtime
from tests.conftest import make_library
from tests.support.content_verify import line_of

BANK = Path(__file__).parents[1] / "fixtures" / "verify" / "one_wrong_key.yaml"
TB = "Traceback (most recent call last):"


def raw(exit_code: int | None, killed: str | None = None, *, stdout: bytes = b"",
        stderr: bytes = b"", duration: float = 0.5) -> RawOutcome:
    return RawOutcome(exit_code, killed, duration, stdout, stderr, False, None, None)


# ---- traceback_facts -------------------------------------------------------------------------


def test_the_last_traceback_gives_the_error_and_the_deepest_snippet_frame() -> None:
    stderr = "\n".join([
        TB,
        '  File "snippet.py", line 2, in <module>',
        "KeyError: 'first'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        TB,
        '  File "/tmp/job/snippet.py", line 7, in <module>',
        "    f(x)",
        '  File "/tmp/job/snippet.py", line 4, in f',
        "    return g(x)",
        '  File "/usr/lib/python3/torch/functional.py", line 99, in g',
        "",
        "RuntimeError: shapes differ",
        "more text",
    ])
    assert snippet_verify.traceback_facts(stderr) == ("RuntimeError: shapes differ", 4)


def test_the_first_frame_right_after_the_header_counts() -> None:
    stderr = f'{TB}\n  File "snippet.py", line 3, in <module>\nValueError: bad\n'
    assert snippet_verify.traceback_facts(stderr) == ("ValueError: bad", 3)


def test_a_syntax_error_starts_at_the_last_snippet_frame() -> None:
    stderr = "\n".join([
        '  File "snippet.py", line 2',
        "Note: an earlier report",
        '  File "snippet.py", line 4',
        "Note: a later report",
        '  File "snippet.py", line 5',
        "    x = (",
        "        ^",
        "SyntaxError: '(' was never closed",
    ])
    assert snippet_verify.traceback_facts(stderr) == ("SyntaxError: '(' was never closed", 5)


def test_no_traceback_and_no_snippet_frame_gives_nothing() -> None:
    assert snippet_verify.traceback_facts("") == (None, None)
    assert snippet_verify.traceback_facts('  File "other.py", line 2\nSyntaxError: x\n') == (None, None)
    assert snippet_verify.traceback_facts("Segmentation fault\n") == (None, None)


def test_a_traceback_without_an_exception_line_keeps_the_frame() -> None:
    assert snippet_verify.traceback_facts(f'{TB}\n  File "snippet.py", line 9, in <module>\n    x()\n') == (
        None, 9)
    assert snippet_verify.traceback_facts(f"{TB}\n") == (None, None)


def test_the_error_line_is_clipped_to_300_characters() -> None:
    message = "E" * 350
    error, line = snippet_verify.traceback_facts(f"{TB}\n{message}\n")
    assert (error, line) == ("E" * 300, None)


# ---- to_outcome ------------------------------------------------------------------------------


LIMITS = Limits(timeout_s=20.0, memory_mb=300)


def test_a_killed_run_has_no_returncode_and_says_why() -> None:
    outcome = snippet_verify.to_outcome(raw(None, "memory", stdout=b"so far\xff\n", duration=1.25), LIMITS)
    assert outcome == Outcome(None, "so far\ufffd\n", "", 1.25,
                              note="in the sandbox: killed: memory limit 300 MB exceeded")


def test_a_run_that_did_not_finish_without_a_verdict_quotes_its_last_stderr_line() -> None:
    outcome = snippet_verify.to_outcome(raw(None, stderr=b"first\nthe last words  \n\n"), LIMITS)
    assert outcome.returncode is None
    assert outcome.note == "in the sandbox: the last words"
    silent = snippet_verify.to_outcome(raw(None), LIMITS)
    assert silent.note == "in the sandbox: the run did not finish"
    assert (silent.error, silent.error_line) == (None, None)


def test_a_signal_is_a_run_that_did_not_finish() -> None:
    outcome = snippet_verify.to_outcome(raw(-9, stderr=b"bye\n"), LIMITS)
    assert (outcome.returncode, outcome.note) == (None, "in the sandbox: killed by signal SIGKILL")


def test_a_failed_sandbox_setup_is_not_the_snippets_exit() -> None:
    outcome = snippet_verify.to_outcome(raw(126, stderr=b"sandbox setup failed: cannot mount /tmp\n"), LIMITS)
    assert outcome == Outcome(None, "", "sandbox setup failed: cannot mount /tmp\n", 0.5,
                              note="in the sandbox: sandbox setup failed: cannot mount /tmp")
    own = snippet_verify.to_outcome(raw(126, stderr=f"{TB}\nSystemExit: 126\n".encode()), LIMITS)
    assert (own.returncode, own.note, own.error) == (126, None, "SystemExit: 126")


def test_an_exit_reads_the_traceback_only_when_it_failed() -> None:
    stderr = f'{TB}\n  File "snippet.py", line 3, in <module>\nValueError: bad\n'.encode()
    failed = snippet_verify.to_outcome(raw(1, stdout=b"out\n", stderr=stderr + b"\xff", duration=0.75), LIMITS)
    assert failed == Outcome(1, "out\n", stderr.decode() + "\ufffd", 0.75, error="ValueError: bad",
                             error_line=3)
    fine = snippet_verify.to_outcome(raw(0, stderr=stderr), LIMITS)
    assert fine == Outcome(0, "", stderr.decode(), 0.5)


# ---- pick ------------------------------------------------------------------------------------


def two_banks() -> Library:
    first = make_library().banks[0]
    extra = Question(id="t-two-snippets", bank="more", kind=first.questions[0].kind, topic="tensors",
                     difficulty=1, prompt="Two?", choices=["a", "b"], answer="a", explanation="A.",
                     code=[Snippet(code="print(1)"), Snippet(code="x", runnable=False, reason="sketch"),
                           Snippet(code="print(3)")])
    return Library(banks=[first, Bank(id="more", title="More", path=Path("more.yaml"), questions=[extra])])


def ids(jobs: list[tuple[Bank, Question, int]]) -> list[tuple[str, str, int]]:
    return [(bank.id, q.id, i) for bank, q, i in jobs]


def test_pick_takes_every_runnable_snippet_in_bank_order() -> None:
    everything = [("test", f"t-mcq-{i}", 0) for i in range(12)]
    everything += [("more", "t-two-snippets", 0), ("more", "t-two-snippets", 2)]
    library = two_banks()
    assert ids(snippet_verify.pick(library, None, 0)) == everything
    assert ids(snippet_verify.pick(library, 14, 0)) == everything
    assert ids(snippet_verify.pick(library, 99, 0)) == everything


def test_pick_samples_with_the_seed_and_keeps_bank_order() -> None:
    library = two_banks()
    everything = ids(snippet_verify.pick(library, None, 0))
    for seed in (1, 2, 3):
        chosen = sorted(random.Random(seed).sample(range(14), 5))
        assert ids(snippet_verify.pick(library, 5, seed)) == [everything[n] for n in chosen]
    assert snippet_verify.pick(library, 5, 1) != snippet_verify.pick(library, 5, 2)
    assert ids(snippet_verify.pick(library, 13, 4)) == [everything[n] for n in
                                                sorted(random.Random(4).sample(range(14), 13))]
    assert snippet_verify.pick(library, 0, 0) == []
    assert snippet_verify.pick(library, -3, 0) == []


# ---- verify with a fake pool -----------------------------------------------------------------


RUNTIME = Runtime("2.13.0+cpu", None, ("cpu",), "2.13.0")


class FakeSlot:
    gpu = None  # a CPU slot, as verify's default device asks
    device_label = "cpu"

    def __init__(self, pool: FakePool) -> None:
        self.pool = pool

    async def run(self, job_id: str, program: str, limits: Limits) -> RawOutcome:
        self.pool.events.append(("run", job_id))
        self.pool.programs.append(program)
        self.pool.limits.append(limits)
        answer = self.pool.answers[program]
        if isinstance(answer, Exception):
            raise answer
        await asyncio.sleep(0)
        return answer


class FakePool:
    made: list[FakePool] = []
    answers: dict[str, RawOutcome | Exception] = {}

    def __init__(self, settings: RunnerSettings, *, gpus: list[Gpu]) -> None:
        self.settings = settings
        self.gpus = gpus
        self.events: list[Any] = []
        self.limits: list[Limits] = []
        self.programs: list[str] = []
        self.runtime: Runtime | None = None
        self.slot = FakeSlot(self)
        FakePool.made.append(self)

    async def start(self) -> None:
        self.events.append("start")
        self.runtime = RUNTIME

    async def acquire(self, device: Device) -> tuple[FakeSlot, str | None]:
        self.events.append(("acquire", device))
        return self.slot, None

    async def release(self, slot: FakeSlot) -> None:
        assert slot is self.slot
        self.events.append("release")

    async def close(self) -> None:
        self.events.append("close")


@pytest.fixture
def fake_pool(monkeypatch: pytest.MonkeyPatch) -> type[FakePool]:
    FakePool.made = []
    monkeypatch.setattr(snippet_verify, "LocalPool", FakePool)
    return FakePool


def fixture_library() -> tuple[Library, Bank]:
    bank, problems = load_bank(BANK)
    assert bank is not None and problems == []
    return Library(banks=[bank]), bank


def answers_for(library: Library) -> dict[str, RawOutcome | Exception]:
    right, raises, wrong = (library[q].code[0].program() for q in (
        "verify-right-stdout", "verify-right-raises", "verify-wrong-dtype"))
    return {
        right: raw(0, stdout=b"torch.Size([6])\n"),
        raises: raw(1, stderr=(f'{TB}\n  File "snippet.py", line 4, in <module>\n'
                               "RuntimeError: view size is not compatible\n").encode()),
        wrong: raw(0, stdout=b"torch.float32\n"),
    }


def settings() -> RunnerSettings:
    return RunnerSettings(_env_file=None, timeout_s=7.5, memory_mb=512, cpu_slots=2)  # type: ignore[call-arg]


def test_verify_reports_the_wrong_key_alone_with_its_line(fake_pool: type[FakePool]) -> None:
    library, bank = fixture_library()
    fake_pool.answers = answers_for(library)
    config = settings()
    result = snippet_verify.verify(library, config)
    assert [str(p) for p in result.problems] == [
        f"{BANK}:{line_of('verify-wrong-dtype')}: verify-wrong-dtype: check stdout: keyed choice "
        "'`torch.float64`' but the snippet printed 'torch.float32'",
        f"{BANK}:{line_of('verify-wrong-dtype')}: verify-wrong-dtype: check stdout: distractor "
        "'`torch.float32`' is what the snippet printed",
    ]
    assert (result.disagreeing, result.ran, result.runnable, result.runtime) == (
        ["verify-wrong-dtype"], 3, 3, RUNTIME)
    [pool] = fake_pool.made
    assert pool.settings is config and pool.gpus == []
    assert pool.limits == [config.limits()] * 3
    assert pool.events[0] == "start" and pool.events[-1] == "close"
    assert sorted(e for e in pool.events if isinstance(e, tuple) and e[0] == "run") == [
        ("run", "verify-0"), ("run", "verify-1"), ("run", "verify-2")]
    assert pool.events.count(("acquire", Device.CPU)) == 3 and pool.events.count("release") == 3


def test_verify_of_a_sample_counts_what_ran_and_what_could(fake_pool: type[FakePool]) -> None:
    """Seed 1 picks the first snippet (a right key), seed 5 the third (the wrong one)."""
    library, _ = fixture_library()
    fake_pool.answers = answers_for(library)
    right = snippet_verify.verify(library, settings(), sample=1, seed=1)
    assert (right.ran, right.runnable, right.disagreeing, right.problems) == (1, 3, [], [])
    wrong = snippet_verify.verify(library, settings(), sample=1, seed=5)
    assert (wrong.ran, wrong.runnable, wrong.disagreeing) == (1, 3, ["verify-wrong-dtype"])
    assert len(wrong.problems) == 2
    default = snippet_verify.verify(library, settings(), sample=1)  # seed 0: the second snippet
    assert fake_pool.made[-1].programs == [library["verify-right-raises"].code[0].program()]
    assert (default.ran, default.disagreeing) == (1, [])


def test_verify_names_each_disagreeing_question_once_in_bank_order(fake_pool: type[FakePool]) -> None:
    library, _ = fixture_library()
    answers = answers_for(library)
    right = library["verify-right-stdout"].code[0].program()
    answers[right] = raw(None, "timeout")
    fake_pool.answers = answers
    result = snippet_verify.verify(library, settings())
    assert result.disagreeing == ["verify-right-stdout", "verify-wrong-dtype"]
    assert result.problems[0].message == (
        "verify-right-stdout: check stdout: in the sandbox: killed: wall-time limit 7.5 s")


def test_a_failing_slot_is_released_and_the_pool_closed(fake_pool: type[FakePool]) -> None:
    library, _ = fixture_library()
    answers = answers_for(library)
    answers[library["verify-right-raises"].code[0].program()] = OSError("slot lost")
    fake_pool.answers = answers
    with pytest.raises(OSError, match="slot lost"):
        snippet_verify.verify(library, settings())
    [pool] = fake_pool.made
    assert pool.events.count("release") == pool.events.count(("acquire", Device.CPU))
    assert pool.events[-1] == "close"
