"""`torchdrill content verify`: bank snippets and keys run through the /run sandbox (issue 20).

The real command as a process, on a real sandbox pool: a bank with one deliberately wrong
key is reported for that key alone, with its file:line and what was keyed vs what ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

from runner.isolation import Level, detect
from runner.jobs import Limits
from runner.sandbox import RawOutcome
from runner.verify import to_outcome

TORCHDRILL = str(Path(sys.executable).with_name("torchdrill"))
BANK = Path(__file__).parent / "fixtures" / "verify" / "one_wrong_key.yaml"
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    weak = not REQUIRE and detect().level is Level.WEAK
    env = {**os.environ, "RUNNER_ALLOW_WEAK_ISOLATION": "true" if weak else "false",
           "RUNNER_CPU_SLOTS": "1", "COLUMNS": "400"}
    return subprocess.run([TORCHDRILL, "content", "verify", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def line_of(question_id: str) -> int:
    """The line of the question's `code:` field in the fixture."""
    lines = BANK.read_text().splitlines()
    start = lines.index(f"  - id: {question_id}")
    return next(n for n in range(start, len(lines)) if lines[n].strip() == "code:") + 2


def test_verify_reports_exactly_the_wrong_key_with_where_and_what() -> None:
    done = verify(str(BANK))
    assert done.returncode == 1, done.stderr
    where = f"{BANK}:{line_of('verify-wrong-dtype')}"
    assert done.stderr.splitlines() == [
        f"{where}: verify-wrong-dtype: check stdout: keyed choice '`torch.float64`' but the "
        "snippet printed 'torch.float32'",
        f"{where}: verify-wrong-dtype: check stdout: distractor '`torch.float32`' is what the "
        "snippet printed",
        "1 question(s) disagree (verify-wrong-dtype); 3 of 3 runnable snippet(s) run in the sandbox",
    ]
    cuda = torch.version.cuda or "none"
    assert done.stdout.splitlines() == [
        f"sandbox: torch {torch.__version__} (CUDA {cuda}), devices: cpu; banks verified with "
        "torch 2.13.0"]


def test_a_sample_runs_only_that_many_snippets() -> None:
    """Seed 4 picks the two right keys, seed 5 a right one and the wrong one."""
    without, with_wrong = (verify(str(BANK), "--sample", "2", "--seed", s) for s in ("4", "5"))
    assert without.returncode == 0, without.stderr
    assert without.stdout.splitlines()[-1] == (
        "ok: 2 of 3 runnable snippet(s) run in the sandbox, no disagreement")
    assert with_wrong.returncode == 1
    assert with_wrong.stderr.splitlines()[-1] == (
        "1 question(s) disagree (verify-wrong-dtype); 2 of 3 runnable snippet(s) run in the "
        "sandbox")


def test_a_run_the_sandbox_stopped_is_a_disagreement_saying_why() -> None:
    killed = RawOutcome(None, "timeout", 20.0, b"started\n", b"", False, None, None)
    outcome = to_outcome(killed, Limits())
    assert outcome.returncode is None and outcome.stdout == "started\n"
    assert outcome.note == "in the sandbox: killed: wall-time limit 20 s"
    raised = RawOutcome(1, None, 0.1, b"", b'Traceback (most recent call last):\n  File '
                        b'"snippet.py", line 3, in <module>\nValueError: bad\n', False, 100, None)
    outcome = to_outcome(raised, Limits())
    assert (outcome.returncode, outcome.error, outcome.error_line) == (1, "ValueError: bad", 3)


def test_no_bank_to_verify_says_so_and_fails(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    done = verify(str(missing))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{missing}:1: cannot read file: [Errno 2] No such file or directory: '{missing}'",
        "no banks to verify"]
