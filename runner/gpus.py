"""Which GPUs this host has, asked without initialising CUDA in the worker process.

`nvidia-smi` is used instead of `torch.cuda` so that the worker (and the zygote it forks
from) never holds a CUDA context: CUDA cannot be used in a process forked after init.
Besides the index and name, each GPU's UUID (what a slot puts in CUDA_VISIBLE_DEVICES: it
names the same GPU however the driver numbers the devices a sandbox can open) and its device
minor (its `/dev/nvidiaN`, the only GPU node a slot binds; the driver says it in
/proc/driver/nvidia/gpus/<pci bus id>/information, and it need not equal the index).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from runner.sandbox import Gpu

DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")


def device_minor(bus_id: str) -> int | None:
    """`/dev/nvidia<minor>` of the GPU at `bus_id` as nvidia-smi prints it (00000000:3B:00.0)."""
    info = DRIVER_GPUS / bus_id.strip()[-12:].lower() / "information"
    try:
        text = info.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Device Minor" and value.strip().isdigit():
            return int(value)
    return None


def detect_gpus(only: list[int] | None = None) -> list[Gpu]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        done = subprocess.run([smi, "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    gpus = []
    for line in done.stdout.splitlines():
        fields = line.split(",", 3)  # the name is last: it may hold commas
        if len(fields) == 4 and fields[0].strip().isdigit():
            index, uuid, bus_id, name = (f.strip() for f in fields)
            gpus.append(Gpu(int(index), name, uuid=uuid or None, minor=device_minor(bus_id)))
    return [g for g in gpus if only is None or g.index in only]
