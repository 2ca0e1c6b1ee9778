"""Which GPUs this host has, asked without initialising CUDA in the worker process.

`nvidia-smi` is used instead of `torch.cuda` so that the worker (and the zygote it forks
from) never holds a CUDA context: CUDA cannot be used in a process forked after init.
"""

from __future__ import annotations

import shutil
import subprocess

from runner.sandbox import Gpu


def detect_gpus(only: list[int] | None = None) -> list[Gpu]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        done = subprocess.run([smi, "--query-gpu=index,name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    gpus = []
    for line in done.stdout.splitlines():
        index, _, name = line.partition(",")
        if index.strip().isdigit():
            gpus.append(Gpu(int(index), name.strip()))
    return [g for g in gpus if only is None or g.index in only]
