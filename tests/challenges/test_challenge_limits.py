"""Per-problem limits: a challenge may tighten its judging job's limits (never loosen them), the
schema bounds them with file:line problems; tests/challenges/test_judge_sandbox.py proves the sandbox
enforces them with a verdict that says which limit was hit."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.content.challenges import CHALLENGE_DIR, load_challenge, load_challenges
from runner.jobs import Device, JobRequest, Limits

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

CHALLENGE = load_challenges().get("stable-softmax")
assert CHALLENGE is not None


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
