"""Runner parts the end-to-end runner tests pass through without noticing a change (survivors
of the sampled mutation run, 2026-12-04): which slot a job gets and the note it shows, a queue
worker waiting for the device asked, the order of results handed back, the limits a worker
applies, and requests from an older bot."""

from __future__ import annotations

import asyncio
import stat
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from runner import uids
from runner.isolation import Isolation, Level
from runner.jobs import Device, JobRequest, JobResult, JobState, Limits
from runner.pool import GPUS_BUSY_NOTE, NO_CPU_SLOT_NOTE, NO_GPU_NOTE, LocalPool
from runner.redis_queue import _drain
from runner.sandbox import Gpu
from runner.settings import RunnerSettings
from runner.versions import Runtime
from tests.support.redis_runner import REDIS_URL

WEAK = Isolation(Level.WEAK, bwrap=None, root=False, problem="a test double: no slot is started")


def pool(cpu_slots: int, gpus: int) -> LocalPool:
    settings = RunnerSettings(cpu_slots=cpu_slots, allow_weak_isolation=True, instance="parts")
    return LocalPool(settings, isolation=WEAK, gpus=[Gpu(i, "H200") for i in range(gpus)])


def test_each_device_request_gets_its_slot_and_the_note_members_read() -> None:
    mixed = pool(cpu_slots=1, gpus=1)
    gpu, cpu = mixed.slots
    assert mixed.claim(Device.GPU) == (gpu, None)
    assert mixed.pick(Device.GPU) is None  # the GPU is busy: a GPU job waits, it does not fall back
    assert mixed.pick(Device.AUTO) == (cpu, GPUS_BUSY_NOTE)
    assert mixed.claim(Device.CPU) == (cpu, None)
    assert mixed.pick(Device.AUTO) is None and mixed.pick(Device.CPU) is None
    cpu_only = pool(cpu_slots=1, gpus=0)
    assert cpu_only.pick(Device.GPU) == (cpu_only.slots[0], NO_GPU_NOTE)
    assert NO_GPU_NOTE == "no GPU available on this runner, ran on CPU"
    gpu_only = pool(cpu_slots=0, gpus=1)
    assert gpu_only.pick(Device.CPU) == (gpu_only.slots[0], NO_CPU_SLOT_NOTE)
    assert NO_CPU_SLOT_NOTE == "this runner has no CPU slot, ran on a GPU slot"
    assert GPUS_BUSY_NOTE == "all GPUs were busy, ran on CPU"


async def test_a_queue_worker_waits_for_the_device_the_job_asked_for() -> None:
    mixed = pool(cpu_slots=1, gpus=1)
    gpu, _cpu = mixed.slots
    assert await mixed.acquire(Device.GPU) == (gpu, None)
    waiting = asyncio.create_task(mixed.acquire(Device.GPU))
    await asyncio.sleep(0)  # let it look once: the CPU slot is free, but a GPU job must not take it
    assert not waiting.done()
    await mixed.release(gpu)
    assert await asyncio.wait_for(waiting, 5) == (gpu, None)


async def test_a_runner_without_slots_says_how_to_get_one() -> None:
    with pytest.raises(RuntimeError) as refused:
        await pool(cpu_slots=0, gpus=0).start()
    assert str(refused.value) == "no slots: set RUNNER_CPU_SLOTS >= 1 or give the worker GPUs"


def test_the_worker_applies_every_limit_it_is_configured_with() -> None:
    settings = RunnerSettings(timeout_s=7.5, cpu_time_s=6, memory_mb=300, max_procs=12, file_size_mb=3,
                              output_cap_bytes=4096, display_chars=99)
    assert settings.limits() == Limits(timeout_s=7.5, cpu_time_s=6, memory_mb=300, max_procs=12,
                                       file_size_mb=3, output_cap_bytes=4096, display_chars=99)


def test_a_request_without_reply_routing_or_limits_still_reads() -> None:
    request = JobRequest.from_dict({"code": "print(1)", "requester": "console:local:me"})
    assert request == JobRequest(code="print(1)", requester="console:local:me", reply_to={})


def test_a_challenges_limits_and_a_results_figures_cross_the_queue() -> None:
    """Requests and results travel through Redis as dicts: nothing may be lost on the way."""
    request = JobRequest(code="f()", requester="slack:T1:U1", reply_to={"thread_of": "9"},
                         device=Device.CPU, limits={"timeout_s": 5.0, "memory_mb": 512.0})
    assert JobRequest.from_dict(request.to_dict()) == request
    result = JobResult("j1", request, JobState.DONE, stdout="ok\n", duration_s=1.25, peak_rss_mb=80.0)
    assert JobResult.from_dict(result.to_dict()) == result
    older = {"job_id": "j2", "request": request.to_dict(), "state": "done"}  # a worker that sent less
    assert (JobResult.from_dict(older).duration_s, JobResult.from_dict(older).device_used) == (0.0, "cpu")


def test_a_runtime_nobody_could_read_says_so() -> None:
    assert Runtime(None, None, (), None).describe() == (
        "torch unknown (CUDA none), devices: none; banks verified with torch "
        "unknown (content/verified.yaml missing)")


def test_a_root_runner_runs_each_slot_as_its_own_uid_and_gives_the_range_back() -> None:
    root = Isolation(Level.FULL, bwrap="/usr/bin/bwrap", root=True)
    settings = RunnerSettings(cpu_slots=2, instance="parts-root", job_uid_base=4_000_000)
    first = LocalPool(settings, isolation=root, gpus=[])
    second = LocalPool(settings, isolation=root, gpus=[])  # another runner on the host
    try:
        assert first.uids is not None and second.uids is not None
        assert [s.job_uid for s in first.slots] == [first.uids.start, first.uids.start + 1]
        assert second.uids.start == first.uids.start + uids.RANGE  # never the same uids
        start = first.uids.start
        first.uids.release()
        third = LocalPool(settings, isolation=root, gpus=[])
        assert third.uids is not None and third.uids.start == start  # the freed range is reused
        third.uids.release()
    finally:
        for held in (first, second):
            if held.uids:
                held.uids.release()
    assert pool(cpu_slots=1, gpus=0).uids is None  # not root: one uid is all there is
    assert pool(cpu_slots=1, gpus=0).slots[0].job_uid is None


def test_the_uid_lock_folder_is_private(tmp_path: Path) -> None:
    held = uids.claim(4_100_000, tmp_path / "locks")
    try:
        assert stat.S_IMODE((tmp_path / "locks").stat().st_mode) == 0o700
        assert held.start == 4_100_000 and (tmp_path / "locks" / "4100000.lock").exists()
    finally:
        held.release()


async def test_handed_back_results_keep_their_order_ahead_of_newer_ones() -> None:
    """Results are pushed on the left and read from the right; a drained list goes first, oldest first."""
    redis = aioredis.from_url(REDIS_URL, decode_responses=True)
    source, target = f"parts:{uuid.uuid4().hex}:a", f"parts:{uuid.uuid4().hex}:b"
    try:
        for item in ("old-1", "old-2", "old-3"):
            await redis.lpush(source, item)
        await redis.lpush(target, "newer")
        await _drain(redis, source, target)
        read = [await redis.rpop(target) for _ in range(4)]
        assert read == ["old-1", "old-2", "old-3", "newer"]
        assert await redis.llen(source) == 0
    finally:
        await redis.delete(source, target)
        await redis.aclose()
