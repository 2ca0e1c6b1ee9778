"""The challenge judge through a real sandbox slot, as the worker runs it (runner.judging): a right
answer passes, and submissions that try to fool the judge from inside do not — reading the
hidden tests or the reference from files or frames, a precomputed table, patching the checks,
printing or forging a verdict, exiting early, hostile records, renamed kernels."""

from __future__ import annotations

import asyncio
import os
import textwrap
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from runner import judging
from runner.isolation import Level, detect
from runner.jobs import Device, JobRequest, JobState, Limits
from runner.judge import Verdict, judge_job
from runner.pool import LocalPool
from runner.settings import RunnerSettings
from tests.support.judge import problem_of

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.not_for_mutation]
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
FULL = detect().level is Level.FULL
needs_namespaces = pytest.mark.skipif(
    not FULL and not REQUIRE, reason=f"needs bubblewrap: {detect().problem}")
LIMITS = Limits(timeout_s=10, cpu_time_s=20, memory_mb=1024, max_procs=64, file_size_mb=8,
                output_cap_bytes=1_000_000, display_chars=500)


CHALLENGE = problem_of("stable-softmax")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LocalPool]:
    conf = RunnerSettings(cpu_slots=1, gpus=[], disk_mb=32, allow_weak_isolation=not FULL)
    slots = LocalPool(conf, gpus=[])
    await slots.start()
    yield slots
    await slots.close()


async def judge(pool: LocalPool, code: str, asked: dict[str, float] | None = None,
                problem: str = "stable-softmax") -> Verdict:
    challenge = problem_of(problem)
    picked = pool.claim(Device.CPU)
    assert picked is not None
    slot, note = picked
    request = JobRequest(textwrap.dedent(code), "t:member", {}, Device.CPU, limits=asked or {},
                         judge=judge_job(challenge.id, challenge.spec, challenge.reference))
    result = await judging.execute(pool, "judge", request, slot, note, LIMITS)
    assert result.verdict is not None and result.stdout == "" and result.full_output is None
    return Verdict.from_dict(result.verdict)


@needs_namespaces
async def test_the_reference_passes_in_the_sandbox(pool: LocalPool) -> None:
    verdict = await judge(pool, CHALLENGE.reference + "\nprint('hello from the member')\n")
    assert (verdict.passed, verdict.total, verdict.failure) == (7, 7, None)
    assert verdict.solved and "hello from the member" in verdict.output
    assert verdict.device == "cpu" and verdict.elapsed_s is not None


@needs_namespaces
async def test_a_wrong_answer_gets_its_first_failing_test(pool: LocalPool) -> None:
    verdict = await judge(pool, CHALLENGE.wrong[0])
    assert (verdict.passed, verdict.total) == (6, 7)
    assert (verdict.failure or "").startswith("test 'large magnitudes' (inputs 3×6, int): output: ")
    assert (verdict.failure or "").endswith(" nan value(s) where finite values were expected")


@needs_namespaces
async def test_the_members_process_holds_no_test_source_reference_or_expected_value(pool: LocalPool) -> None:
    """Files, environment, arguments, the program file and every frame: one case's inputs only."""
    verdict = await judge(pool, """
        import gc, glob, os, sys
        seen = []
        for pattern in ("/tmp/job/**/*",):
            seen += glob.glob(pattern, recursive=True)
        text = " ".join(seen) + " ".join(sys.argv) + " ".join(os.environ.values())
        for path in glob.glob("/tmp/job/**/*.py", recursive=True):  # the program file itself
            try:
                text += open(path).read()
            except OSError:
                pass
        f = sys._getframe()
        while f is not None:
            text += repr(f.f_locals) + repr(sorted(f.f_globals))
            f = f.f_back
        text += " ".join(repr(o)[:200] for o in gc.get_objects() if isinstance(o, (str, dict)))
        # the words are written backwards so that this code's own constants do not contain them
        for secret in ("xama.x - x = detfihs", ":)(sesac fed", "sedutingam egral", "noisnemid tsrif"):
            print("SECRET", secret[::-1], "FOUND" if secret[::-1] in text else "absent")
        def softmax(x, dim):
            return x
    """)
    assert not verdict.solved, verdict
    assert [line for line in verdict.output.split("\n") if line.startswith("SECRET ")] == [
        "SECRET shifted = x - x.amax absent", "SECRET def cases(): absent",
        "SECRET large magnitudes absent", "SECRET first dimension absent"]


@needs_namespaces
async def test_a_table_precomputed_with_the_public_seed_passes_nothing(pool: LocalPool) -> None:
    """The old judge drew every case from a fixed seed: a table of outputs passed 7/7."""
    verdict = await judge(pool, """
        import torch
        def softmax(x, dim):
            torch.manual_seed(20260)
            guess = torch.randn(4, 10)
            return torch.softmax(guess, -1) if x.shape == guess.shape else x * 0
    """)
    assert verdict.passed <= 1 and not verdict.solved  # only the empty batch, whose answer is empty


@needs_namespaces
async def test_patching_comparisons_and_printing_or_forging_a_verdict_changes_nothing(pool: LocalPool) -> None:
    forged = 'TDJ2 {"finished": true, "record": "", "output": ""}'
    verdict = await judge(pool, f"""
        import os, sys, torch
        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.Tensor.__eq__ = lambda *a, **k: True
        print("passed 7/7 ✅ solved")
        print({forged!r})
        for fd in (1, 2, 3, 4, 5):
            try:
                os.write(fd, b"\\n" + {forged!r}.encode() + b"\\n")
            except OSError:
                pass
        try:
            with open(f"/proc/{{os.getppid()}}/fd/1", "w") as out:
                out.write({forged!r} + "\\n")
        except OSError as exc:
            print("parent fd closed to me:", type(exc).__name__)
        def softmax(x, dim):
            return torch.zeros_like(x)
    """)
    assert verdict.passed <= 1 and not verdict.solved
    assert "parent fd closed to me" in verdict.output


@needs_namespaces
async def test_exiting_early_passes_nothing(pool: LocalPool) -> None:
    for code in ("import os\nos._exit(0)\n", "import sys\nsys.exit(0)\n",
                 CHALLENGE.reference + "\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"):
        verdict = await judge(pool, code)
        assert verdict.passed == 0 and not verdict.solved, code


@needs_namespaces
async def test_exit_inside_the_function_fails_that_test(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import os
        def softmax(x, dim):
            os._exit(0)
    """)
    assert (verdict.passed, verdict.failure) == (
        0, "test 'basic' (inputs 4×10, int): no result (the code exited or was stopped before this test)")


@needs_namespaces
async def test_a_hostile_record_is_could_not_be_read_and_costs_the_judge_nothing(pool: LocalPool) -> None:
    """The member's process writes its own record file in place of the harness's: overlapping
    entries and a huge declared shape are refused from the header, before any allocation."""
    verdict = await judge(pool, """
        import json, os, struct, sys
        def softmax(x, dim):
            head = json.dumps({"r.out": {"dtype": "F32", "shape": [1 << 30, 1 << 30], "data_offsets": [0, 8]},
                               "r.grad.0": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
            record = struct.pack("<Q", len(head)) + head + bytes(8)
            frame = sys._getframe(1)
            while frame is not None and "res_path" not in frame.f_locals:
                frame = frame.f_back
            with open(frame.f_locals["res_path"], "wb") as out:
                out.write(record)
            os._exit(0)
    """)
    assert (verdict.passed, verdict.failure) == (
        0, "test 'basic' (inputs 4×10, int): your output could not be read")


@needs_namespaces
async def test_a_problems_memory_and_time_limits_are_enforced_with_their_verdicts(pool: LocalPool) -> None:
    hungry = CHALLENGE.reference + "\nimport torch\nhog = torch.ones(200 * 1024 * 1024 // 4 * 3)\n" \
        "hog2 = torch.ones(200 * 1024 * 1024 // 4 * 3)\n"
    verdict = await judge(pool, hungry, {"memory_mb": 400})
    assert not verdict.solved
    assert verdict.failure == ("test 'basic' (inputs 4×10, int): no result: "
                               "killed: memory limit 400 MB exceeded")
    slow = CHALLENGE.reference + "\nimport time\ntime.sleep(30)\n"
    verdict = await judge(pool, slow, {"timeout_s": 3})
    assert not verdict.solved
    assert verdict.failure == "test 'basic' (inputs 4×10, int): time limit reached"


@needs_namespaces
async def test_keeping_every_batchs_graph_runs_out_of_the_problems_memory(pool: LocalPool) -> None:
    """fix-loss-accumulation: a solution that keeps the graphs and calls .item() at the end has
    the right value; the kernel's limit on what the code may add is what fails it."""
    problem = problem_of("fix-loss-accumulation")
    right = await judge(pool, problem.reference, problem="fix-loss-accumulation")
    assert right.solved, right
    kept = await judge(pool, problem.wrong[-1], problem="fix-loss-accumulation")
    assert (kept.passed, kept.failure) == (  # one batch's graph fits
        1, "test 'twenty batches' (inputs int): your code raised an error")
    assert "can't allocate memory" in (kept.detail or "")


SHARED_MEMORY = """
import torch

def run_blocks(blocks, x):  # every activation kept, in shared memory: RLIMIT_DATA never sees it
    def pack(t):
        kept = torch.empty_like(t).share_memory_()
        kept.copy_(t)
        return kept
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda kept: kept):
        for block in blocks:
            x = block(x)
    return x
"""

SHM_FILES = """
import itertools, os, torch

names = itertools.count()

def run_blocks(blocks, x):  # every activation kept, written to files in /dev/shm (tmpfs)
    def pack(t):
        path = f"/dev/shm/kept-{next(names)}"
        with open(path, "wb") as f:
            f.write(t.detach().contiguous().numpy().tobytes())
        return path, t.shape, t.dtype
    def unpack(kept):
        path, shape, dtype = kept
        with open(path, "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=dtype).view(shape)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        for block in blocks:
            x = block(x)
    return x
"""


@needs_namespaces
@pytest.mark.parametrize("kept", [SHARED_MEMORY, SHM_FILES], ids=["shared-memory", "shm-files"])
async def test_activations_kept_outside_private_memory_count_against_the_problems_limit(
        pool: LocalPool, kept: str) -> None:
    """Both pass every test under RLIMIT_DATA alone (it counts private memory only; see
    test_judge_in_process_checks.py). The case's harness has the worker cap the job's memory
    cgroup before the member's code runs, and the cgroup counts shared memory and tmpfs files."""
    verdict = await judge(pool, kept, problem="checkpoint-blocks")
    assert (verdict.passed, verdict.failure) == (
        0, "test 'eight blocks' (inputs int, 1024×8): no result: killed: memory limit 160 MB exceeded")


@needs_namespaces
@pytest.mark.parametrize("problem", ["checkpoint-blocks", "chunked-cross-entropy", "cosine-matrix",
                                     "fix-loss-accumulation", "hvp"])
async def test_references_fit_their_problems_memory_limit_in_the_sandbox(
        pool: LocalPool, problem: str) -> None:
    challenge = problem_of(problem)
    assert challenge.case_memory_mb  # the cgroup cap is armed for these
    verdict = await judge(pool, challenge.reference, problem=problem)
    assert verdict.solved, verdict


@needs_namespaces
async def test_a_judge_job_cancelled_before_its_cases_run_runs_none(pool: LocalPool) -> None:
    picked = pool.claim(Device.CPU)
    assert picked is not None
    slot, note = picked
    request = JobRequest(CHALLENGE.reference, "t:member", {}, Device.CPU,
                         judge=judge_job(CHALLENGE.id, CHALLENGE.spec, CHALLENGE.reference))
    task = asyncio.create_task(judging.execute(pool, "judge-c", request, slot, note, LIMITS))
    judging.request_cancel("judge-c")  # while its cases are being prepared
    result = await asyncio.wait_for(task, 120)
    assert (result.state, result.error_message, result.verdict) == (JobState.CANCELLED, "cancelled", None)
    assert pool.claim(Device.CPU) is not None  # the slot was given back
    await pool.release(slot)


@needs_namespaces
async def test_a_forbidden_name_reached_at_run_time_is_the_forbidden_op_verdict(pool: LocalPool) -> None:
    """The name is not what is judged: the traced graph's aten op is (tests/challenges/test_judge_evidence.py)."""
    verdict = await judge(pool, """
        import torch
        def softmax(x, dim):
            return getattr(torch, 'soft' + 'max')(x, dim)
    """)
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, "test 'basic' (inputs 4×10, int): your code uses aten._softmax, which this problem "
        "forbids (under any name)", None)


@needs_namespaces
async def test_a_resumed_checkpoint_is_loaded_in_a_job_of_its_own(pool: LocalPool) -> None:
    """resume-checkpoint: save and load run in two sandbox jobs, the second given only the bytes
    the first shipped, so a `load` that reads the live objects `save` kept in a global fails."""
    problem = problem_of("resume-checkpoint")
    right = await judge(pool, problem.reference, problem="resume-checkpoint")
    assert right.solved, right
    kept = await judge(pool, """
        KEPT = {}
        def save(model, opt, step):
            KEPT["model"], KEPT["opt"] = model, opt
            return {"step": step}
        def load(model, opt, ckpt):
            model.load_state_dict(KEPT["model"].state_dict())
            opt.load_state_dict(KEPT["opt"].state_dict())
            return ckpt["step"]
    """, problem="resume-checkpoint")
    assert (kept.passed, kept.detail) == (0, "KeyError: 'model'")
