"""`torchdrill content verify`: bank snippets and keys run through the /run sandbox (issue 20).

The real command as a process, on a real sandbox pool: a bank with one deliberately wrong
key is reported for that key alone, with its file:line and what was keyed vs what ran.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bot.core.content import verified
from bot.snippet_verify import to_outcome
from runner.gpus import detect_gpus
from runner.isolation import Level, detect
from runner.jobs import Limits
from runner.sandbox import RawOutcome
from runner.versions import verified_torch
from tests.support.content_verify import BANK, line_of

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

TORCHDRILL = str(Path(sys.executable).with_name("torchdrill"))
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    weak = not REQUIRE and detect().level is Level.WEAK
    env = {**os.environ, "RUNNER_ALLOW_WEAK_ISOLATION": "true" if weak else "false",
           "RUNNER_CPU_SLOTS": "1", "COLUMNS": "400"}
    return subprocess.run([TORCHDRILL, "content", "verify", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


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


DEVICE_BANK = Path(__file__).parents[1] / "fixtures" / "verify" / "device_claim.yaml"


def test_cpu_verify_skips_device_claims_and_says_how_many() -> None:
    done = verify(str(DEVICE_BANK))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "ok: 1 of 1 runnable snippet(s) run in the sandbox; 1 snippet(s) of device: cuda "
        "questions skipped (verify them on a GPU with --device cuda), no disagreement")


@pytest.mark.skipif(bool(detect_gpus()), reason="this host has a GPU: --device cuda would run")
def test_device_cuda_without_a_gpu_is_refused_and_records_nothing(tmp_path: Path) -> None:
    record = tmp_path / "verified.yaml"
    done = verify(str(DEVICE_BANK), "--device", "cuda", "--record", str(record))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "refused: this host has no CUDA GPU (nvidia-smi lists none); device: cuda claims are "
        "verified on a GPU, never on CPU instead; 1 device: cuda question(s) not verified, "
        "nothing recorded"]
    assert not record.exists()


def test_an_unknown_device_is_one_line() -> None:
    done = verify(str(DEVICE_BANK), "--device", "mps")
    assert (done.returncode, done.stderr) == (2, "--device is cpu or cuda, not 'mps'\n")


def test_device_runs_are_recorded_per_question_next_to_the_pin(tmp_path: Path) -> None:
    """What --device cuda writes: agreed questions get the GPU and torch that ran them, a
    disagreeing one loses its old record, and the runner still reads the pin."""
    path = tmp_path / "verified.yaml"
    path.write_text("torch: 2.13.0\n")
    h200 = verified.DeviceRun("NVIDIA H200", "2.13.0+cu128")
    verified.record(path, {"q-b": h200, "q-a": h200}, [])
    verified.record(path, {"q-c": verified.DeviceRun("NVIDIA A100-SXM4-80GB", "2.13.0+cu126")}, ["q-b"])
    assert path.read_text() == verified.HEADER + "torch: 2.13.0\n\n" + verified.DEVICE_HEADER + (
        "cuda_runs:\n"
        "  q-a:\n    device: NVIDIA H200\n    torch: 2.13.0+cu128\n"
        "  q-c:\n    device: NVIDIA A100-SXM4-80GB\n    torch: 2.13.0+cu126\n")
    assert verified_torch(path) == "2.13.0"
    assert verified.load(path).runs == {"q-a": h200, "q-c": verified.DeviceRun(
        "NVIDIA A100-SXM4-80GB", "2.13.0+cu126")}
    path.write_text("torch: 2.13.0\ncuda_runs:\n  q-a: {device: NVIDIA H200}\n")
    with pytest.raises(verified.VerifiedFileError, match=re.escape("cuda_runs.q-a needs 'device' and 'torch'")):
        verified.record(path, {}, [])


def test_the_shipped_verified_file_is_what_the_recorder_writes() -> None:
    """content/verified.yaml round-trips through the recorder unchanged (comments included)."""
    shipped = Path(__file__).resolve().parents[2] / "content" / "verified.yaml"
    assert verified.render(verified.load(shipped)) == shipped.read_text()
