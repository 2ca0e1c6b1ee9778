"""Embedded runner: real sandboxed slots, the in-process queue, fairness and the journal."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_asyncio

from runner.embedded import EmbeddedRunner
from runner.factory import make_runner
from runner.isolation import Isolation, Level, WeakIsolationError, detect
from runner.jobs import Device, JobRejected, JobRequest, JobState
from runner.pool import NO_GPU_NOTE, LocalPool
from runner.settings import RunnerSettings
from tests.support.run_desk import Collector

REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
pytestmark = pytest.mark.asyncio(loop_scope="module")
SLEEPY = "import time\nprint('started', flush=True)\ntime.sleep(30)"


def settings(tmp_path: Path, **overrides: object) -> RunnerSettings:
    base: dict[str, object] = dict(
        cpu_slots=1, gpus=[], timeout_s=10, cpu_time_s=10, memory_mb=512, max_procs=64,
        queue_cap=10, rate_per_minute=30, journal_path=tmp_path / "journal.sqlite3",
        allow_weak_isolation=not REQUIRE and detect().level is Level.WEAK)
    base.update(overrides)
    return RunnerSettings(**base)


def request(code: str, who: str = "discord:g:alice", device: Device = Device.AUTO) -> JobRequest:
    return JobRequest(code=code, requester=who, reply_to={"platform": "discord", "channel": "42",
                                                          "who": who}, device=device)


async def started(runner: EmbeddedRunner, job_id: str) -> None:
    async with asyncio.timeout(30):
        while await runner.position(job_id) != 0:
            await asyncio.sleep(0.02)


async def printed(runner: EmbeddedRunner, job_id: str, text: str) -> None:
    """Bounded: the running job's output, as its slot collects it, holds ``text`` (a claimed
    slot may not have forked the job yet, so "running" alone does not mean it printed)."""
    async with asyncio.timeout(30):
        while True:
            running = runner._running.get(job_id)
            job = getattr(running[1], "_job", None) if running else None
            if job is not None and text.encode() in job.out:
                return
            await asyncio.sleep(0.02)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runner(tmp_path_factory: pytest.TempPathFactory):
    """One warm runner for the tests that share it (each uses its own members)."""
    service = EmbeddedRunner(settings(tmp_path_factory.mktemp("shared")))
    results = Collector()
    service.on_result(results)
    await service.start()
    service.results = results  # type: ignore[attr-defined]
    yield service
    await service.close()


async def test_trivial_torch_snippet_runs_and_reports_device_and_memory(runner) -> None:
    sub = await runner.submit(request("import torch\nprint(torch.arange(4).sum().item())"))
    assert sub.position == 1
    result = await runner.results.wait(sub.job_id)
    assert result.state is JobState.DONE, result
    assert result.stdout.strip() == "6"
    assert result.exit_code == 0
    assert result.device_used == "cpu"
    assert result.device_note == NO_GPU_NOTE
    assert result.peak_rss_mb and result.peak_rss_mb > 1
    assert result.gpu_max_allocated_mb is None
    assert result.request.reply_to["channel"] == "42"


async def test_gpu_request_without_gpu_runs_on_cpu_and_says_so(runner) -> None:
    sub = await runner.submit(request("print('hi')", device=Device.GPU))
    result = await runner.results.wait(sub.job_id)
    assert result.state is JobState.DONE
    assert (result.device_used, result.device_note) == ("cpu", NO_GPU_NOTE)


async def test_python_error_keeps_traceback_without_sandbox_verdict(runner) -> None:
    sub = await runner.submit(request("import torch\ntorch.ones(2, 3) @ torch.ones(2, 3)"))
    result = await runner.results.wait(sub.job_id)
    assert result.state is JobState.FAILED
    assert result.exit_code == 1
    assert "RuntimeError" in result.stderr and "snippet.py" in result.stderr
    assert result.error_message is None
    # the colleague's catalogue explains it, attached where the result is delivered
    assert result.explanation is not None
    assert "mat1 and mat2 shapes cannot be multiplied" in result.explanation.matched


async def test_code_too_large_is_rejected_with_sizes(runner) -> None:
    with pytest.raises(JobRejected) as info:
        await runner.submit(request("x = 1\n" * 5000))
    assert "30,000 bytes" in info.value.message and "20,000" in info.value.message


async def test_one_active_job_per_member_queue_position_and_cancel(runner) -> None:
    first = await runner.submit(request(SLEEPY, "m:alice"))
    with pytest.raises(JobRejected, match="already have a running job"):
        await runner.submit(request("print(1)", "m:alice"))
    await started(runner, first.job_id)
    second = await runner.submit(request("print('b')", "m:bob"))
    third = await runner.submit(request("print('c')", "m:carol"))
    assert (second.position, third.position) == (1, 2)
    assert await runner.position(second.job_id) == 1
    assert await runner.cancel(second.job_id)
    cancelled = await runner.results.wait(second.job_id)
    assert cancelled.state is JobState.CANCELLED
    assert await runner.position(third.job_id) == 1
    await printed(runner, first.job_id, "started")
    assert await runner.cancel(first.job_id)
    stopped = await runner.results.wait(first.job_id)
    assert stopped.state is JobState.CANCELLED and "started" in stopped.stdout
    done = await runner.results.wait(third.job_id)
    assert done.state is JobState.DONE and done.stdout == "c\n"
    assert await runner.position(third.job_id) is None
    assert not await runner.cancel(third.job_id)
    # alice's job is over, so she may run again
    again = await runner.submit(request("print(2)", "m:alice"))
    assert (await runner.results.wait(again.job_id)).stdout == "2\n"


async def test_cancel_mine_reaches_only_the_requesters_own_job(runner) -> None:
    running = await runner.submit(request(SLEEPY, "m:dan"))
    await started(runner, running.job_id)
    queued = await runner.submit(request("print('e')", "m:erin"))
    assert await runner.active_job("m:dan") == running.job_id
    assert await runner.cancel_mine("m:frank") is None  # nothing of frank's: nobody's job stops
    assert await runner.position(running.job_id) == 0 and await runner.position(queued.job_id) == 1
    assert await runner.cancel_mine("m:erin") == queued.job_id  # waiting in the queue
    assert (await runner.results.wait(queued.job_id)).state is JobState.CANCELLED
    assert await runner.cancel_mine("m:dan") == running.job_id  # running in a sandbox
    stopped = await runner.results.wait(running.job_id)
    assert stopped.state is JobState.CANCELLED and stopped.duration_s < 10
    assert await runner.active_job("m:dan") is None
    assert await runner.cancel_mine("m:dan") is None


async def test_queue_cap_and_rate_limit(tmp_path: Path) -> None:
    service = EmbeddedRunner(settings(tmp_path, queue_cap=1, rate_per_minute=2))
    results = Collector()
    service.on_result(results)
    await service.start()
    try:
        running = await service.submit(request(SLEEPY, "m:a"))
        await started(service, running.job_id)
        await service.submit(request("print(1)", "m:b"))
        with pytest.raises(JobRejected, match=r"^the queue is full \(1 job waiting\); please try again in a minute$"):
            await service.submit(request("print(1)", "m:c"))
        await service.cancel(running.job_id)
        await results.wait(running.job_id)
        # m:a has used 1 of 2 runs this minute
        second = await service.submit(request("print(2)", "m:a"))
        await results.wait(second.job_id)
        with pytest.raises(JobRejected) as info:
            await service.submit(request("print(3)", "m:a"))
        assert "rate limit: at most 2 runs per minute; try again in" in info.value.message
    finally:
        await service.close()


async def test_graceful_close_reports_unfinished_jobs_as_interrupted(tmp_path: Path) -> None:
    service = EmbeddedRunner(settings(tmp_path))
    results = Collector()
    service.on_result(results)
    await service.start()
    running = await service.submit(request(SLEEPY, "m:a"))
    await started(service, running.job_id)
    queued = await service.submit(request("print(1)", "m:b"))
    await service.close()
    assert results.results[running.job_id].state is JobState.INTERRUPTED
    assert "while it was running" in results.results[running.job_id].error_message
    assert results.results[queued.job_id].state is JobState.INTERRUPTED
    assert "waiting in the queue" in results.results[queued.job_id].error_message


CRASHING_BOT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from runner.embedded import EmbeddedRunner
    from runner.jobs import JobRequest
    from runner.settings import RunnerSettings

    async def main():
        s = RunnerSettings(cpu_slots=1, gpus=[], journal_path=Path(sys.argv[1]),
                           allow_weak_isolation=sys.argv[2] == "1")
        r = EmbeddedRunner(s)
        await r.start()
        a = await r.submit(JobRequest("import time; time.sleep(60)", "m:a",
                                      {"channel": "c1", "thread": "t1"}))
        while await r.position(a.job_id) != 0:
            await asyncio.sleep(0.02)
        b = await r.submit(JobRequest("print(1)", "m:b", {"channel": "c2"}))
        print(a.job_id, b.job_id, flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
""")


async def test_jobs_cut_by_a_crash_are_reported_interrupted_at_next_start(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    weak = "1" if settings(tmp_path).allow_weak_isolation else "0"
    bot = subprocess.Popen([sys.executable, "-c", CRASHING_BOT, str(journal), weak],
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = await asyncio.wait_for(asyncio.to_thread(bot.stdout.readline), 90)
    finally:
        os.killpg(bot.pid, signal.SIGKILL)  # the whole "bot", sandbox included, dies hard
        bot.wait()
    running_id, queued_id = line.split()

    service = EmbeddedRunner(settings(tmp_path))
    results = Collector()
    service.on_result(results)
    await service.start()
    try:
        running = await results.wait(running_id, timeout=1)
        queued = await results.wait(queued_id, timeout=1)
        assert running.state is queued.state is JobState.INTERRUPTED
        assert running.request.reply_to == {"channel": "c1", "thread": "t1"}
        assert "while it was running" in running.error_message
        assert queued.request.requester == "m:b"
        assert "waiting in the queue" in queued.error_message
        # reported once: a third start finds nothing left
        assert service._journal is not None and service._journal.leftovers() == []
    finally:
        await service.close()


async def test_a_dead_sandbox_fails_only_its_job_and_is_restarted(runner) -> None:
    sub = await runner.submit(request(SLEEPY, "m:a"))
    await started(runner, sub.job_id)
    slot = runner._pool.slots[0]
    slot._proc.kill()  # the zygote dies mid-job (OOM killer, a bug, an escaped snippet...)
    result = await runner.results.wait(sub.job_id)
    assert result.state is JobState.FAILED
    assert result.error_message.startswith("the sandbox stopped during this job")
    nxt = await runner.submit(request("print('back')", "m:b"))
    assert (await runner.results.wait(nxt.job_id)).stdout == "back\n"


async def test_weak_isolation_is_refused_unless_allowed(tmp_path: Path) -> None:
    weak = Isolation(Level.WEAK, None, os.geteuid() == 0, "bubblewrap not found")
    with pytest.raises(WeakIsolationError, match="RUNNER_ALLOW_WEAK_ISOLATION"):
        LocalPool(settings(tmp_path, allow_weak_isolation=False), isolation=weak, gpus=[])
    pool = LocalPool(settings(tmp_path, allow_weak_isolation=True), isolation=weak, gpus=[])
    assert len(pool.slots) == 1


async def test_weak_mode_when_allowed_still_runs_with_limits(tmp_path: Path) -> None:
    weak = Isolation(Level.WEAK, None, os.geteuid() == 0, "bubblewrap not found")
    conf = settings(tmp_path, allow_weak_isolation=True, timeout_s=2)
    pool = LocalPool(conf, isolation=weak, gpus=[])
    service = EmbeddedRunner(conf, pool=pool)
    results = Collector()
    service.on_result(results)
    await service.start()
    try:
        ok = await service.submit(request("import os; print(sorted(os.environ))", "m:a"))
        result = await results.wait(ok.job_id)
        assert result.state is JobState.DONE
        assert "REDIS_URL" not in result.stdout and "PATH" in result.stdout
        loop = await service.submit(request("while True: pass", "m:b"))
        timed_out = await results.wait(loop.job_id)
        assert timed_out.state is JobState.TIMEOUT
        assert timed_out.error_message == "killed: wall-time limit 2 s"
    finally:
        await service.close()


async def test_make_runner_picks_backend_and_rejects_unknown(tmp_path: Path) -> None:
    assert isinstance(make_runner("embedded", journal_path=tmp_path / "j", gpus=[],
                                  allow_weak_isolation=True), EmbeddedRunner)
    with pytest.raises(ValueError, match="unknown runner backend"):
        make_runner("celery")
