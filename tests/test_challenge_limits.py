"""Per-problem limits: a challenge may tighten its judging job's limits (never loosen them), the
schema bounds them with file:line problems, and the sandbox enforces them with a verdict that
says which limit was hit."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.core.content.challenges import CHALLENGE_DIR, load_challenge, load_challenges
from runner.jobs import Device, JobRequest, Limits
from runner.judge import build_program, frame_of, verdict_of
from tests.test_judge_sandbox import CHALLENGE, EXPECTED, LIMITS, needs_namespaces, pool  # noqa: F401

pytestmark = pytest.mark.asyncio(loop_scope="module")


def test_a_request_tightens_the_limits_and_never_loosens_them() -> None:
    base = Limits(timeout_s=20, memory_mb=2048, max_procs=64)
    tight = base.tightened({"timeout_s": 5, "memory_mb": 512.0, "max_procs": 1000, "nonsense": 1})
    assert (tight.timeout_s, tight.memory_mb, tight.max_procs) == (5, 512, 64)
    assert isinstance(tight.memory_mb, int)
    assert base.tightened({"timeout_s": 60, "memory_mb": -1, "cpu_time_s": 0}) == base
    request = JobRequest("print(1)", "t:m", {}, Device.CPU, limits={"memory_mb": 512})
    assert JobRequest.from_dict(request.to_dict()).limits == {"memory_mb": 512.0}
    assert JobRequest.from_dict({"code": "", "requester": "r"}).limits == {}


def test_the_shipped_problem_with_limits_and_the_schema_bounds(tmp_path: Path) -> None:
    limited = [c for c in load_challenges().challenges if c.job_limits]
    assert "stable-softmax" in [c.id for c in limited]
    assert CHALLENGE.job_limits == {"timeout_s": 10.0, "memory_mb": 1024.0}
    text = (CHALLENGE_DIR / "stable-softmax.yaml").read_text()
    bad = tmp_path / "tiny.yaml"
    bad.write_text(text.replace("memory_mb: 1024", "memory_mb: 16"))
    challenge, problems = load_challenge(bad)
    assert challenge is None
    line = next(n for n, row in enumerate(bad.read_text().splitlines(), 1) if row.startswith("memory_mb:"))
    assert [(p.line, "memory_mb" in p.message) for p in problems] == [(line, True)]


async def judge_with(pool, code: str, asked: dict[str, float], deadline_s: float):  # noqa: F811
    picked = pool.claim(Device.CPU)
    assert picked is not None
    slot, note = picked
    program = build_program(CHALLENGE.spec, textwrap.dedent(code), deadline_s=deadline_s)
    request = JobRequest(program, "t:member", {}, limits=asked)
    result = await pool.execute("judge", request, slot, note, LIMITS)
    return verdict_of(EXPECTED, frame_of(result.stdout), CHALLENGE.spec, device=result.device_used,
                      sandbox_error=result.error_message)


@needs_namespaces
async def test_a_problems_memory_limit_is_enforced_with_its_verdict(pool) -> None:  # noqa: F811
    hungry = CHALLENGE.reference + "\nimport torch\nhog = torch.ones(200 * 1024 * 1024 // 4 * 3)\n" \
        "hog2 = torch.ones(200 * 1024 * 1024 // 4 * 3)\n"
    verdict = await judge_with(pool, hungry, {"memory_mb": 400}, deadline_s=8)
    assert not verdict.solved
    assert "memory limit 400 MB exceeded" in (verdict.failure or "")


@needs_namespaces
async def test_a_problems_time_limit_is_enforced_with_its_verdict(pool) -> None:  # noqa: F811
    slow = CHALLENGE.reference + "\nimport time\ntime.sleep(30)\n"
    verdict = await judge_with(pool, slow, {"timeout_s": 3}, deadline_s=8)
    assert not verdict.solved
    assert "wall-time limit 3 s" in (verdict.failure or "")
