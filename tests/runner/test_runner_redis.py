"""Redis backend (arq) against the real Redis server, with a real sandboxed worker."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runner.jobs import JobRejected, JobRequest, JobResult, JobState
from runner.pool import NO_GPU_NOTE
from runner.redis_queue import Keys, RedisRunner, run_snippet
from runner.settings import RunnerSettings
from tests.support.redis_runner import REDIS_URL, SUBMITTED, worker
from tests.support.run_desk import Collector

pytestmark = pytest.mark.redis
SLEEPY = "import time\nprint('started', flush=True)\ntime.sleep(30)"


@contextlib.asynccontextmanager
async def bot(conf: RunnerSettings) -> AsyncIterator[tuple[RedisRunner, Collector]]:
    runner = RedisRunner(conf)
    submit = runner.submit

    async def tracked(request: JobRequest):  # remember ids so arq's own keys get cleaned up
        sub = await submit(request)
        SUBMITTED.append(sub.job_id)
        return sub

    runner.submit = tracked  # type: ignore[method-assign]
    results = Collector()
    runner.on_result(results)
    await runner.start()
    try:
        yield runner, results
    finally:
        await runner.close()


def req(code: str, who: str) -> JobRequest:
    return JobRequest(code=code, requester=who, reply_to={"platform": "slack", "channel": "C1",
                                                          "thread_ts": who})


async def test_job_runs_on_a_worker_and_result_comes_back(conf: RunnerSettings) -> None:
    async with worker(conf), bot(conf) as (runner, results):
        sub = await runner.submit(req("import torch\nprint(torch.ones(3).sum().item())", "u:a"))
        assert sub.position >= 0
        result = await results.wait(sub.job_id)
    assert result.state is JobState.DONE
    assert result.stdout == "3.0\n"
    assert (result.device_used, result.device_note) == ("cpu", NO_GPU_NOTE)
    assert result.request.reply_to["thread_ts"] == "u:a"


async def test_results_survive_a_bot_restart(conf: RunnerSettings) -> None:
    # the bot submits, then goes away before any worker exists
    async with bot(conf) as (runner, _):
        sub = await runner.submit(req("print('after restart')", "u:a"))
    async with worker(conf):
        await asyncio.sleep(0)
        # a new bot process re-attaches and delivers the earlier job's result
        async with bot(conf) as (_, results):
            result = await results.wait(sub.job_id)
    assert result.state is JobState.DONE and result.stdout == "after restart\n"
    assert result.request.reply_to == {"platform": "slack", "channel": "C1", "thread_ts": "u:a"}


async def test_positions_cancel_and_fairness_without_workers(conf: RunnerSettings) -> None:
    async with bot(conf) as (runner, results):
        a = await runner.submit(req("print(1)", "u:a"))
        b = await runner.submit(req("print(2)", "u:b"))
        c = await runner.submit(req("print(3)", "u:c"))
        assert (a.position, b.position, c.position) == (1, 2, 3)
        with pytest.raises(JobRejected, match="already have a running job"):
            await runner.submit(req("print(1)", "u:a"))
        with pytest.raises(JobRejected, match=r"queue is full \(3 jobs waiting\)"):
            await runner.submit(req("print(4)", "u:d"))
        with pytest.raises(JobRejected, match="code too large"):
            await runner.submit(req("#" * 20_001, "u:d"))
        assert await runner.cancel(b.job_id)
        cancelled = await results.wait(b.job_id)
        assert cancelled.state is JobState.CANCELLED
        assert await runner.position(c.job_id) == 2
        assert await runner.position(b.job_id) is None
        assert not await runner.cancel("no-such-job")
        # b's member is free again once the cancellation is published
        again = await runner.submit(req("print(5)", "u:b"))
        assert again.position == 3


async def test_rate_limit_is_shared_through_redis(conf: RunnerSettings) -> None:
    conf.rate_per_minute = 1
    async with bot(conf) as (runner, results):
        first = await runner.submit(req("print(1)", "u:a"))
        assert await runner.cancel(first.job_id)
        await results.wait(first.job_id)
        async with bot(conf) as (other_replica, _):
            with pytest.raises(JobRejected) as info:
                await other_replica.submit(req("print(2)", "u:a"))
    assert "rate limit: at most 1 run per minute; try again in" in info.value.message


async def test_cancel_running_job_stops_the_sandbox(conf: RunnerSettings) -> None:
    async with worker(conf), bot(conf) as (runner, results):
        sub = await runner.submit(req(SLEEPY, "u:a"))
        async with asyncio.timeout(30):
            while await runner.position(sub.job_id) != 0:
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        assert await runner.cancel(sub.job_id)
        result = await results.wait(sub.job_id, timeout=15)
        assert result.state is JobState.CANCELLED
        assert result.duration_s < 10
        # the worker keeps serving
        nxt = await runner.submit(req("print('next')", "u:b"))
        assert (await results.wait(nxt.job_id)).stdout == "next\n"


async def test_cancel_mine_reaches_only_the_requesters_own_job(conf: RunnerSettings) -> None:
    async with bot(conf) as (runner, results):  # no worker yet: both jobs wait in the queue
        a = await runner.submit(req("print(1)", "u:a"))
        b = await runner.submit(req("print(2)", "u:b"))
        assert await runner.active_job("u:a") == a.job_id
        assert await runner.cancel_mine("u:c") is None  # nothing of c's: nobody's job stops
        assert [await runner.position(a.job_id), await runner.position(b.job_id)] == [1, 2]
        assert await runner.cancel_mine("u:a") == a.job_id
        assert (await results.wait(a.job_id)).state is JobState.CANCELLED
        assert await runner.active_job("u:a") is None and await runner.cancel_mine("u:a") is None
        assert await runner.cancel_mine("u:b") == b.job_id
        assert (await results.wait(b.job_id)).state is JobState.CANCELLED
    async with worker(conf), bot(conf) as (runner, results):  # and a running one
        sub = await runner.submit(req(SLEEPY, "u:a"))
        async with asyncio.timeout(30):
            while await runner.position(sub.job_id) != 0:
                await asyncio.sleep(0.05)
        assert await runner.cancel_mine("u:b") is None
        assert await runner.cancel_mine("u:a") == sub.job_id
        result = await results.wait(sub.job_id, timeout=15)
        assert result.state is JobState.CANCELLED and result.duration_s < 10
        assert await runner.active_job("u:a") is None


async def test_a_retried_job_is_reported_interrupted_once_and_never_rerun(
        conf: RunnerSettings) -> None:
    async with bot(conf) as (runner, results):
        keys = Keys(conf.key_prefix)
        # arq retries a job whose worker died mid-run; no pool: the code must not run again
        ctx = {"redis": runner.redis, "keys": keys, "pool": None, "job_try": 2}
        request = req("print('would run twice')", "u:a").to_dict()
        SUBMITTED.append("retried-job")
        assert await run_snippet(ctx, "retried-job", request) == "interrupted"
        result = await results.wait("retried-job")
        assert result.state is JobState.INTERRUPTED and result.stdout == ""
        assert await run_snippet(ctx, "retried-job", request) == "already published"
        await asyncio.sleep(0.3)
        assert await runner.redis.llen(keys.results) == 0


async def test_jobs_submitted_in_the_same_millisecond_keep_their_order(conf: RunnerSettings) -> None:
    conf = conf.model_copy(update={"queue_cap": 20})
    async with bot(conf) as (runner, _):
        subs = [await runner.submit(req(f"print({i})", f"u:{i}")) for i in range(12)]
        assert [s.position for s in subs] == list(range(1, 13))
        assert [await runner.position(s.job_id) for s in subs] == list(range(1, 13))
        for s in subs:
            await runner.cancel(s.job_id)


async def test_results_go_to_the_bot_replica_that_submitted(conf: RunnerSettings) -> None:
    """Two bot processes and one worker: each replica delivers exactly its own results."""
    conf = conf.model_copy(update={"queue_cap": 20, "rate_per_minute": 100})
    script = Path(__file__).parents[1] / "support" / "redis_replica.py"
    other = await asyncio.create_subprocess_exec(
        sys.executable, str(script), REDIS_URL, conf.key_prefix, "b", "3",
        stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        async with worker(conf), bot(conf) as (runner, results):
            mine = [(await runner.submit(req(f"print('a-{i}')", f"a:{i}"))).job_id for i in range(3)]
            for job_id in mine:
                assert (await results.wait(job_id)).stdout.startswith("a-")
            out, _ = await asyncio.wait_for(other.communicate(), 90)
            await asyncio.sleep(0.3)  # a stray result would reach us within one poll
            lines = [json.loads(line) for line in out.decode().splitlines()]
            theirs = {line["submitted"] for line in lines if "submitted" in line}
            SUBMITTED.extend(theirs)
            delivered_there = {line["delivered"]: line["stdout"] for line in lines if "delivered" in line}
            assert set(results.results) == set(mine)  # none of b's
            assert set(delivered_there) == theirs and len(theirs) == 3  # none of a's
            assert sorted(delivered_there.values()) == ["b-0\n", "b-1\n", "b-2\n"]
    finally:
        if other.returncode is None:
            other.kill()
            await other.wait()
    assert other.returncode == 0


async def test_results_of_a_vanished_replica_are_delivered_by_another(conf: RunnerSettings) -> None:
    keys = Keys(conf.key_prefix)
    crashed = RedisRunner(conf)
    await crashed.start()
    sub = await crashed.submit(req("print('orphan')", "u:o"))
    SUBMITTED.append(sub.job_id)
    crashed._consumer.cancel()  # the process dies: no hand-over, its heartbeat runs out
    await asyncio.gather(crashed._consumer, return_exceptions=True)
    await crashed.redis.delete(keys.alive(crashed.replica))  # stands in for the TTL expiring
    await crashed.redis.aclose()
    async with worker(conf), bot(conf) as (_, results):
        result = await results.wait(sub.job_id)
    assert result.state is JobState.DONE and result.stdout == "orphan\n"


async def test_a_result_already_routed_to_a_replica_that_died_is_swept_to_the_others(
        conf: RunnerSettings) -> None:
    keys = Keys(conf.key_prefix)
    async with bot(conf) as (runner, results):
        request = req("print('late')", "u:l")
        job = "swept-job"
        SUBMITTED.append(job)
        lost = JobResult(job_id=job, request=request, state=JobState.DONE, stdout="late\n")
        await runner.redis.lpush(keys.results_of("deadreplica"), json.dumps(lost.to_dict()))
        await runner.sweep()
        assert (await results.wait(job)).stdout == "late\n"
        assert await runner.redis.llen(keys.results_of("deadreplica")) == 0
