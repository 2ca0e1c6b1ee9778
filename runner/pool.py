"""The slots of one host (one per GPU, plus CPU slots) and the device-choice rule.

The rule, in one place: a GPU job waits for a GPU slot when this host has GPUs and runs on
CPU (saying so) when it has none; an AUTO job takes a free GPU slot, else a free CPU slot;
a CPU job takes a CPU slot.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid

from runner import cgroups, uids, versions
from runner.gpus import detect_gpus
from runner.isolation import Isolation, require
from runner.jobs import Device, JobRequest, JobResult, Limits
from runner.outcome import build_result
from runner.sandbox import Gpu, Slot
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)
NO_GPU_NOTE = "no GPU available on this runner, ran on CPU"
GPUS_BUSY_NOTE = "all GPUs were busy, ran on CPU"
NO_CPU_SLOT_NOTE = "this runner has no CPU slot, ran on a GPU slot"


class LocalPool:
    def __init__(self, settings: RunnerSettings, *, isolation: Isolation | None = None,
                 gpus: list[Gpu] | None = None) -> None:
        self.settings = settings
        self.isolation = require(settings.allow_weak_isolation, isolation)
        # this instance's own uid range and cgroup subtree: two runners never share them
        self.instance = settings.instance or f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.uids = uids.claim(settings.job_uid_base) if self.isolation.root else None
        self.mechanism = (cgroups.detect(self.instance)
                          if self.isolation.cgroup_version is not None else None)
        found = detect_gpus(settings.gpus) if gpus is None else gpus
        self.slots: list[Slot] = []
        for gpu in found:
            self.slots.append(self._slot(len(self.slots), gpu))
        for _ in range(settings.cpu_slots):
            self.slots.append(self._slot(len(self.slots), None))
        self.runtime: versions.Runtime | None = None  # known once the slots have started
        self._changed = asyncio.Condition()
        self._claimed: set[int] = set()

    def _slot(self, index: int, gpu: Gpu | None) -> Slot:
        s = self.settings
        uid = self.uids.uid(index) if self.uids else s.job_uid_base + index
        return Slot(index, self.isolation, gpu=gpu, job_uid=uid, disk_mb=s.disk_mb,
                    warm=s.warm, cgroups=self.mechanism)

    @property
    def has_gpu(self) -> bool:
        return any(s.gpu for s in self.slots)

    async def start(self) -> None:
        if not self.slots:
            raise RuntimeError("no slots: set RUNNER_CPU_SLOTS >= 1 or give the worker GPUs")
        if self.mechanism:
            cgroups.sweep_stale(self.mechanism)
            for top in self.mechanism.tops:
                top.mkdir(exist_ok=True)
        await asyncio.gather(*(s.start() for s in self.slots))
        self.runtime = self._runtime()
        versions.report(self.runtime, log)

    def _runtime(self) -> versions.Runtime:
        """What the slots' templates imported (one interpreter serves every slot)."""
        torches = sorted({s.torch_version for s in self.slots if s.torch_version})
        cudas = sorted({s.cuda_version for s in self.slots if s.cuda_version})
        return versions.Runtime(torch=", ".join(torches) or None, cuda=", ".join(cudas) or None,
                                devices=tuple(s.device_label for s in self.slots),
                                verified=versions.verified_torch())

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.slots), return_exceptions=True)
        if self.mechanism:
            cgroups.remove_instance(self.mechanism)
        if self.uids:
            self.uids.release()

    def pick(self, device: Device) -> tuple[Slot, str | None] | None:
        """A free slot for this device and the note to show, or None to keep waiting."""
        free = [s for s in self.slots if s.index not in self._claimed]
        gpu_free = [s for s in free if s.gpu]
        cpu_free = [s for s in free if not s.gpu]
        has_cpu = any(not s.gpu for s in self.slots)
        if device is Device.CPU:
            if has_cpu:
                return (cpu_free[0], None) if cpu_free else None
            return (gpu_free[0], NO_CPU_SLOT_NOTE) if gpu_free else None
        if gpu_free:
            return gpu_free[0], None
        if device is Device.GPU and self.has_gpu:
            return None
        if cpu_free:
            return cpu_free[0], GPUS_BUSY_NOTE if self.has_gpu else NO_GPU_NOTE
        return None

    def claim(self, device: Device) -> tuple[Slot, str | None] | None:
        picked = self.pick(device)
        if picked:
            self._claimed.add(picked[0].index)
        return picked

    async def acquire(self, device: Device) -> tuple[Slot, str | None]:
        """Wait for a suitable slot (used by queue workers that already took the job)."""
        async with self._changed:
            while (picked := self.claim(device)) is None:
                await self._changed.wait()
            return picked

    async def release(self, slot: Slot) -> None:
        self._claimed.discard(slot.index)
        async with self._changed:
            self._changed.notify_all()

    async def execute(self, job_id: str, request: JobRequest, slot: Slot, note: str | None,
                      limits: Limits) -> JobResult:
        """Run on a claimed slot, then give the slot back."""
        limits = limits.tightened(request.limits)
        try:
            raw = await slot.run(job_id, request.code, limits)
            return build_result(job_id, request, raw, limits, device_used=slot.device_label,
                                device_note=note, torch_version=slot.torch_version)
        finally:
            await self.release(slot)
