"""One execution slot: a warm zygote process inside the sandbox, fed one job at a time.

The slot owns the zygote's lifetime: it starts it, restarts it if a job managed to kill
it (or it crashed), and turns its raw replies into `JobResult`s via `runner.outcome`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from runner.isolation import (
    ZYGOTE_IN_SANDBOX,
    ZYGOTE_SOURCE,
    Isolation,
    Level,
    bwrap_command,
    python_roots,
)
from runner.jobs import Limits

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 120.0  # importing torch on a cold disk can be slow
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str

    @property
    def label(self) -> str:
        return f"cuda:{self.index} ({self.name})"


@dataclass
class RawOutcome:
    """What the zygote saw; `runner.outcome` decides what it means for the member."""

    exit_code: int | None
    killed: str | None  # timeout | memory | output | cancelled | crashed
    duration_s: float
    stdout: bytes
    stderr: bytes
    output_over_cap: bool
    peak_rss_kb: int | None
    gpu_max_allocated_bytes: int | None


class SandboxCrashed(RuntimeError):
    pass


class Slot:
    def __init__(self, index: int, isolation: Isolation, *, gpu: Gpu | None = None,
                 job_uid_base: int = 61000, disk_mb: int = 64, warm: bool = True) -> None:
        self.index = index
        self.gpu = gpu
        self.isolation = isolation
        self.job_uid = job_uid_base + index if isolation.root else None
        self.disk_mb = disk_mb
        self.warm = warm
        self.busy = False
        self.torch_warm = False
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._scratch: str | None = None

    @property
    def device_label(self) -> str:
        return self.gpu.label if self.gpu else "cpu"

    def _env(self) -> dict[str, str]:
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": "/tmp",
               "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1", "USER": "sandbox",
               "CUDA_VISIBLE_DEVICES": str(self.gpu.index) if self.gpu else "",
               "TORCHDRILL_WARM": "1" if self.warm else "0"}
        if self.isolation.level is Level.FULL:
            env["TORCHDRILL_NAMESPACED"] = "1"
            env["TORCHDRILL_KEEP"] = os.pathsep.join(python_roots())  # never wiped between jobs
        else:
            self._scratch = self._scratch or tempfile.mkdtemp(prefix=f"torchdrill-slot{self.index}-")
            os.chmod(self._scratch, 0o755)
            env["TORCHDRILL_JOB_DIR"] = os.path.join(self._scratch, "job")
        if self.job_uid is not None:
            env["TORCHDRILL_JOB_UID"] = str(self.job_uid)
        return env

    def _command(self, env: dict[str, str]) -> tuple[list[str], dict[str, str] | None]:
        python = sys.executable
        if self.isolation.level is Level.FULL and self.isolation.bwrap:
            cmd = bwrap_command(self.isolation.bwrap, root=self.isolation.root,
                                disk_mb=self.disk_mb, env=env, gpu=self.gpu is not None)
            return [*cmd, python, "-I", ZYGOTE_IN_SANDBOX], {}
        return [python, "-I", str(ZYGOTE_SOURCE)], env

    async def start(self) -> None:
        env = self._env()
        cmd, proc_env = self._command(env)
        self._proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=proc_env, limit=64 * 1024 * 1024, start_new_session=True)
        ready = await asyncio.wait_for(self._read(), READY_TIMEOUT_S)
        if ready.get("op") != "ready":
            raise SandboxCrashed(f"zygote said {ready!r} instead of ready")
        self.torch_warm = bool(ready.get("torch"))
        log.info("slot %d (%s) ready, torch preloaded: %s", self.index, self.device_label,
                 self.torch_warm)

    async def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await proc.wait()
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def _read(self) -> dict[str, Any]:
        assert self._proc and self._proc.stdout
        line = await self._proc.stdout.readline()
        if not line:
            raise SandboxCrashed("the sandbox process exited")
        return json.loads(line)

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._proc and self._proc.stdin
        self._proc.stdin.write((json.dumps(message) + "\n").encode())
        await self._proc.stdin.drain()

    async def cancel(self) -> None:
        """Stop the running job, if any (the zygote kills it and replies as usual)."""
        if self.busy and self._proc and self._proc.returncode is None:
            with contextlib.suppress(Exception):
                await self._send({"op": "cancel"})

    async def run(self, job_id: str, code: str, limits: Limits) -> RawOutcome:
        async with self._lock:
            self.busy = True
            try:
                return await self._run(job_id, code, limits)
            finally:
                self.busy = False

    async def _run(self, job_id: str, code: str, limits: Limits) -> RawOutcome:
        if self._proc is None or self._proc.returncode is not None:
            await self.close()
            await self.start()
        job_dir = self._env().get("TORCHDRILL_JOB_DIR", "/tmp/job")
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": job_dir, "TMPDIR": job_dir,
               "USER": "sandbox", "MALLOC_ARENA_MAX": "2", "MPLCONFIGDIR": job_dir,
               "CUDA_VISIBLE_DEVICES": str(self.gpu.index) if self.gpu else ""}
        request = {"op": "run", "job_id": job_id, "code": code, "limits": limits.to_dict(),
                   "uid": self.job_uid, "job_dir": job_dir, "env": env,
                   "address_space_limit": self.gpu is None}
        try:
            await self._send(request)
            reply = await asyncio.wait_for(self._read(), limits.timeout_s + 30)
        except (SandboxCrashed, ConnectionError, TimeoutError, ValueError) as exc:
            log.warning("slot %d: sandbox lost during job %s: %s", self.index, job_id, exc)
            await self.close()
            return RawOutcome(None, "crashed", 0.0, b"", b"", False, None, None)
        if reply.get("op") != "result":
            log.error("slot %d: zygote error: %s", self.index, reply.get("error"))
            return RawOutcome(None, "crashed", 0.0, b"", reply.get("error", "").encode(),
                              False, None, None)
        return RawOutcome(
            exit_code=reply["exit_code"], killed=reply["killed"],
            duration_s=float(reply["duration_s"]),
            stdout=base64.b64decode(reply["stdout_b64"]),
            stderr=base64.b64decode(reply["stderr_b64"]),
            output_over_cap=bool(reply["output_over_cap"]), peak_rss_kb=reply["peak_rss_kb"],
            gpu_max_allocated_bytes=reply.get("gpu_max_allocated_bytes"))
