"""The challenge judge through a real sandbox slot: a right answer passes, and submissions that
try to fool the judge from inside (read the reference, inspect frames, patch torch.allclose,
print a fake verdict, exit early, forge the result line) do not."""

from __future__ import annotations

import os
import textwrap
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.core.content.challenges import load_challenges
from runner.isolation import Level, detect
from runner.jobs import Device, JobRequest, Limits
from runner.judge import Verdict, build_program, frame_of, reference_locally, verdict_of
from runner.pool import LocalPool
from runner.settings import RunnerSettings

pytestmark = pytest.mark.asyncio(loop_scope="module")
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
FULL = detect().level is Level.FULL
needs_namespaces = pytest.mark.skipif(
    not FULL and not REQUIRE, reason=f"needs bubblewrap: {detect().problem}")
LIMITS = Limits(timeout_s=10, cpu_time_s=20, memory_mb=1024, max_procs=64, file_size_mb=8,
                output_cap_bytes=1_000_000, display_chars=500)
CHALLENGE = load_challenges().get("stable-softmax")
assert CHALLENGE is not None
EXPECTED = reference_locally(CHALLENGE.spec, CHALLENGE.reference)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LocalPool]:
    conf = RunnerSettings(cpu_slots=1, gpus=[], disk_mb=32, allow_weak_isolation=not FULL)
    slots = LocalPool(conf, gpus=[])
    await slots.start()
    yield slots
    await slots.close()


async def judge(pool: LocalPool, code: str) -> Verdict:
    picked = pool.claim(Device.CPU)
    assert picked is not None
    slot, note = picked
    program = build_program(CHALLENGE.spec, textwrap.dedent(code), deadline_s=8)
    result = await pool.execute("judge", JobRequest(program, "t:member", {}), slot, note, LIMITS)
    text = (result.full_output or b"").decode(errors="replace") if result.output_truncated \
        else result.stdout
    return verdict_of(EXPECTED, frame_of(text), CHALLENGE.spec, device=result.device_used,
                      peak_memory_mb=result.peak_rss_mb, sandbox_error=result.error_message)


@needs_namespaces
async def test_the_reference_passes_in_the_sandbox(pool: LocalPool) -> None:
    verdict = await judge(pool, CHALLENGE.reference + "\nprint('hello from the member')\n")
    assert (verdict.passed, verdict.total, verdict.failure) == (7, 7, None)
    assert verdict.solved
    assert "hello from the member" in verdict.output
    assert verdict.device == "cpu" and verdict.elapsed_s is not None


@needs_namespaces
async def test_a_wrong_answer_gets_its_first_failing_test(pool: LocalPool) -> None:
    verdict = await judge(pool, CHALLENGE.wrong[0])
    assert (verdict.passed, verdict.total) == (6, 7)
    assert verdict.failure is not None
    assert verdict.failure == ("test 'large magnitudes' (inputs 3×6, int): output: "
                               "8 nan value(s) where finite values were expected")


@needs_namespaces
async def test_reading_the_reference_and_tests_finds_nothing(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import glob, os
        found = []
        for pattern in ("/work/**/stable-softmax.yaml", "/**/challenges/*.yaml", "/tmp/**/*"):
            found += glob.glob(pattern, recursive=True)
        print("FOUND", found)
        def softmax(x, dim):
            return x
    """)
    assert not verdict.solved
    assert "stable-softmax.yaml" not in verdict.output


@needs_namespaces
async def test_inspecting_the_callers_frames_gives_no_expected_values(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import gc, sys, torch
        def softmax(x, dim):
            seen = []
            f = sys._getframe(1)
            while f is not None:
                seen += list(f.f_locals.values()) + list(f.f_globals.values())
                f = f.f_back
            seen += gc.get_objects()
            for obj in seen:
                if isinstance(obj, torch.Tensor) and obj is not x and obj.shape == x.shape:
                    return obj.detach().clone().requires_grad_()
            return x
    """)
    # only the empty batch passes: any 0×5 tensor is the right answer there
    assert (verdict.passed, verdict.solved) == (1, False)


@needs_namespaces
async def test_patching_allclose_and_equal_changes_nothing(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import torch
        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.Tensor.__eq__ = lambda *a, **k: True
        def softmax(x, dim):
            return torch.zeros_like(x)
    """)
    assert verdict.passed == 0 and not verdict.solved


@needs_namespaces
async def test_printing_a_fake_verdict_or_a_fake_result_line_fails(pool: LocalPool) -> None:
    forged = 'TDJ1 {"finished": true, "records": "", "output": ""}'
    verdict = await judge(pool, f"""
        import os, sys
        print("passed 7/7 ✅ solved")
        print({forged!r})
        sys.__stdout__.write({forged!r} + "\\n")
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
            return x
    """)
    assert verdict.passed == 0 and not verdict.solved
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
    assert verdict.passed == 0
    assert verdict.failure == ("test 'basic' (inputs 4×10, int): no result "
                               "(the code exited or was stopped before this test)")


@needs_namespaces
async def test_a_forbidden_function_is_caught_at_run_time(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import torch
        def softmax(x, dim):
            return getattr(torch, 'soft' + 'max')(x, dim)
    """)
    assert verdict.passed == 0
    assert "torch.softmax is not allowed in this challenge" in (verdict.failure or "")
