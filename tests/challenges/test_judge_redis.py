"""/submit end to end with the bot unable to import torch: the bot (tests/support/judge_bot_process.py,
built through bot/app.py with the Redis runner, torch and safetensors blocked) submits, a real
Redis worker judges in the sandbox where torch lives, and the verdicts come back as small JSON;
and a result whose delivery keeps failing does not stay in the delivering list forever."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from runner.jobs import JobRequest, JobResult, JobState
from runner.redis_queue import DELIVERY_TRIES, Keys, RedisRunner
from runner.settings import RunnerSettings
from tests.support.judge import problem_of
from tests.support.redis_runner import worker

pytestmark = pytest.mark.redis
ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = problem_of("stable-softmax")
MARKUP = "def softmax(x, dim):\n    raise ValueError('<!channel> [win](https://evil.example) @everyone')\n"
SPARSE = "def softmax(x, dim):\n    return (x * 0).to_sparse()\n"


async def test_submit_works_with_the_bot_unable_to_import_torch(conf: RunnerSettings,
                                                                 tmp_path: Path,
                                                                 sqlite_template: Path) -> None:
    db = tmp_path / "bot.db"
    shutil.copy(sqlite_template, db)
    codes = [SOFTMAX.reference, SOFTMAX.wrong[0], MARKUP, SPARSE]
    async with worker(conf):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "tests" / "support" / "judge_bot_process.py"), str(db), conf.redis_url,
            conf.key_prefix, SOFTMAX.id, cwd=ROOT, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        async with asyncio.timeout(240):
            out, err = await proc.communicate(json.dumps(codes).encode())
    assert proc.returncode == 0, err.decode()[-3000:]
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert report["loaded"] == []  # neither torch nor safetensors was imported by the bot
    right, wrong, markup, sparse = report["verdicts"]
    assert right["title"] == "✅ Solved: Numerically stable softmax"
    assert "Passed 7/7 tests." in right["plain"] and "🏅 +10 points (first solve)" in right["plain"]
    assert wrong["title"] == "❌ 6/7 tests passed: Numerically stable softmax"
    assert "First failure: test 'large magnitudes' (inputs 3×6, int): output: " in wrong["plain"]
    assert "nan value(s) where finite values were expected" in wrong["plain"]
    assert markup["plain"].splitlines()[1:5] == [
        "First failure: test 'basic' (inputs 4×10, int): your code raised an error",
        "```text", "ValueError: <!channel> [win](https://evil.example) @everyone", "```"]
    assert sparse["plain"].splitlines()[1] == (
        "First failure: test 'basic' (inputs 4×10, int): output is a sparse tensor; "
        "return a dense (strided) one")


async def test_a_result_whose_delivery_keeps_failing_is_dropped_after_a_few_tries(
        conf: RunnerSettings) -> None:
    runner = RedisRunner(conf)
    calls: list[str] = []

    async def broken(result: JobResult) -> None:
        calls.append(result.job_id)
        raise RuntimeError("a verdict that raises")

    runner.on_result(broken)
    keys = Keys(conf.key_prefix)
    client = aioredis.from_url(conf.redis_url)
    poison = JobResult("poison1", JobRequest("x", "t:m", {}), JobState.DONE, verdict={"passed": 1})
    await runner.start()
    try:
        await client.lpush(keys.results, b"{not json")
        await client.lpush(keys.results, json.dumps(poison.to_dict()))
        async with asyncio.timeout(30):
            while True:
                await runner._hand_over(runner.replica)  # what a restart or another replica does
                left = await client.llen(keys.delivering_of(runner.replica)) + await client.llen(keys.results)
                if len(calls) >= DELIVERY_TRIES and left == 0:
                    break
                await asyncio.sleep(0.05)
    finally:
        await runner.close()
        await client.aclose()
    assert calls == ["poison1"] * DELIVERY_TRIES


async def test_a_result_is_delivered_once_even_when_it_arrives_twice(conf: RunnerSettings) -> None:
    """A worker retried after a crash, or a hand-over during delivery, can queue one result twice."""
    runner = RedisRunner(conf)
    calls: list[str] = []

    async def record(result: JobResult) -> None:
        calls.append(result.job_id)

    runner.on_result(record)
    keys = Keys(conf.key_prefix)
    client = aioredis.from_url(conf.redis_url)
    once = JobResult("twice1", JobRequest("x", "t:m", {}), JobState.DONE, verdict={"passed": 1})
    marker = JobResult("after1", JobRequest("x", "t:m", {}), JobState.DONE, verdict={"passed": 1})
    await runner.start()
    try:
        for result in (once, once, marker):  # the list is consumed first in, first out
            await client.lpush(keys.results, json.dumps(result.to_dict()))
        async with asyncio.timeout(30):
            while "after1" not in calls:
                await asyncio.sleep(0.05)
    finally:
        await runner.close()
        await client.aclose()
    assert calls == ["twice1", "after1"]
