"""GPU slots: pinned zygotes, device reporting and GPU memory figures. Skipped without CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.gpus import detect_gpus
from runner.isolation import Level, detect
from runner.jobs import Device, JobRequest, JobState, Limits
from runner.pool import LocalPool
from runner.settings import RunnerSettings

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available() or not detect_gpus(),
                       reason="no CUDA device on this machine"),
]
LIMITS = Limits(timeout_s=60, cpu_time_s=60, memory_mb=4096)
PROBE = """
import os, torch
x = torch.ones(1024, 1024, device="cuda" if torch.cuda.is_available() else "cpu")
print(torch.cuda.is_available(), os.environ.get("CUDA_VISIBLE_DEVICES"), x.device.type)
"""


async def run(pool: LocalPool, device: Device, code: str = PROBE):
    picked = pool.claim(device)
    assert picked is not None
    slot, note = picked
    return await pool.execute("gpu", JobRequest(code, "t:gpu", {}, device), slot, note, LIMITS)


@pytest.fixture
async def pool(tmp_path: Path):
    gpu = detect_gpus()[0]
    conf = RunnerSettings(cpu_slots=1, gpus=[gpu.index],
                          allow_weak_isolation=detect().level is Level.WEAK)
    slots = LocalPool(conf)
    await slots.start()
    yield slots
    await slots.close()


async def test_gpu_job_runs_on_the_pinned_gpu_and_reports_memory(pool: LocalPool) -> None:
    gpu = detect_gpus()[0]
    result = await run(pool, Device.GPU)
    assert result.state is JobState.DONE, result.stderr
    assert result.stdout.split() == ["True", gpu.visible_devices, "cuda"]  # its UUID (issue 30)
    assert result.device_used == f"cuda:{gpu.index} ({gpu.name})"
    assert result.device_note is None
    assert result.gpu_max_allocated_mb is not None and result.gpu_max_allocated_mb >= 4.0


async def test_auto_prefers_the_gpu_and_cpu_jobs_do_not_see_it(pool: LocalPool) -> None:
    auto = await run(pool, Device.AUTO)
    assert auto.device_used.startswith("cuda:") and auto.stdout.split()[-1] == "cuda"
    cpu = await run(pool, Device.CPU)
    assert cpu.state is JobState.DONE, cpu.stderr
    assert cpu.stdout.split() == ["False", "cpu"]  # CUDA_VISIBLE_DEVICES is empty there
    assert cpu.device_used == "cpu" and cpu.gpu_max_allocated_mb is None


WIDEN = """
import os, torch
os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(16))  # before CUDA starts
print(torch.cuda.device_count(), torch.ones(1, device="cuda").device)
"""


@pytest.mark.skipif(detect().bwrap is None, reason="the device nodes are bound only under bubblewrap")
async def test_a_gpu_job_that_widens_cuda_visible_devices_still_has_one_gpu(pool: LocalPool) -> None:
    # the slot binds only its own /dev/nvidia<minor>: the environment cannot reach another GPU
    result = await run(pool, Device.GPU, WIDEN)
    assert result.state is JobState.DONE, result.stderr
    assert result.stdout.split() == ["1", "cuda:0"]


async def test_a_failing_gpu_job_leaves_the_gpu_slot_usable(pool: LocalPool) -> None:
    crash = await run(pool, Device.GPU, "import torch\ntorch.ones(2, device='cuda')[5].item()")
    assert crash.state is JobState.FAILED
    assert (await run(pool, Device.GPU)).state is JobState.DONE
