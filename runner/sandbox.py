"""One execution slot: a warm template process inside the sandbox, one job at a time.

The slot is the job's supervisor. It asks the template to fork, hands the child fresh
pipes and a job socket, sends the code to the child itself, reads the output and the
(bounded, integers-only) metadata, enforces the wall time and output cap, and reads the
verdict from the kernel's cgroup counters. The template never sees code or output.

Why the next job's child is forked while the slot is idle: the fork, the child's hello, its
move into a fresh cgroup (on cgroup v1 a move can wait for an RCU grace period, several ms)
and its namespaces then cost a member nothing. The child has seen no job data until the job
comes: it is the same copy of the template a fork at that moment would make.

Any protocol surprise (a bad reply, a dead template, a missed deadline) restarts the
template, and the member is told what happened, never shown a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import socket
import struct
import tempfile
from dataclasses import dataclass
from typing import Any

from runner import syscall_filter
from runner.cgroups import JobCgroup, Mechanism
from runner.isolation import (
    BWRAP_ENV,
    SANDBOX_PATH,
    ZYGOTE_IN_SANDBOX,
    ZYGOTE_SOURCE,
    Isolation,
    Level,
    bwrap_command,
    python_roots,
    sandbox_env,
    sandbox_python,
    seccomp_memfd,
)
from runner.jobs import Limits
from runner.versions import clean_version

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 120.0  # importing torch on a cold disk can be slow
REPLY_TIMEOUT_S = 10.0  # fork / hello / exit-after-kill: far above what a healthy slot needs
META_MAX_BYTES = 4096  # the job's metadata channel: a few integers, never more
META_KEYS = {"gpu_max_allocated_bytes"}
# a judge's case job, before the member's code runs: "cap my memory at what I use now plus the
# problem's allowance" (the allowance is the trusted side's, never the job's); answered once
ARM = b"arm_memory"
ARMED, UNARMED = b"armed", b"unarmed"
CONTROL_MAX = 65536
CODE_CHUNK = 65536  # the code goes to the child in datagrams of this size (runner.zygote)


@dataclass(frozen=True)
class Gpu:
    index: int  # nvidia-smi's
    name: str
    uuid: str | None = None
    minor: int | None = None  # of its /dev/nvidiaN; None: not known, taken to be the index

    @property
    def label(self) -> str:
        return f"cuda:{self.index} ({self.name})"

    @property
    def visible_devices(self) -> str:
        """CUDA_VISIBLE_DEVICES for its slot: the UUID names this GPU however the driver
        numbers the devices the sandbox can open (only this one, under bubblewrap)."""
        return self.uuid or str(self.index)

    @property
    def device_minor(self) -> int:
        return self.index if self.minor is None else self.minor


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
    kernel_limits: bool = False  # verdicts come from cgroup counters, not stderr guesses
    pids_limited: bool = False  # the pids cgroup refused a fork/thread during the job
    restarted: bool = True  # after "crashed": whether the template is back up
    memory_capped: bool = False  # the job armed its allowance: a memory kill is against that


class SandboxCrashed(RuntimeError):
    pass


def _crashed(restarted: bool) -> RawOutcome:
    return RawOutcome(None, "crashed", 0.0, b"", b"", False, None, None, restarted=restarted)


def parse_meta(data: bytes) -> dict[str, int]:
    """`key=integer` lines for known keys; anything else is ignored (and logged)."""
    meta: dict[str, int] = {}
    ignored = 0
    for line in data.decode("ascii", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key in META_KEYS and value.isdigit() and len(value) <= 16:
            meta[key] = int(value)
        elif line and line != "none=0":
            ignored += 1
    if ignored:
        log.warning("ignored %d malformed metadata line(s) from a job", ignored)
    return meta


@dataclass
class _Ready:
    """A child forked ahead of its job, waiting for the job's limits and code."""

    sock: socket.socket  # its job socket: limits and code out, metadata in
    out_r: int
    err_r: int
    host_pid: int | None  # None: it died before its hello (its exit will say why)

    def close(self) -> None:
        self.sock.close()
        for fd in (self.out_r, self.err_r):
            with contextlib.suppress(OSError):
                os.close(fd)


class _Job:
    """Book-keeping of one running job on the worker side."""

    def __init__(self, cap: int, arm_bytes: int = 0) -> None:
        self.cap = cap
        self.arm_bytes = arm_bytes  # what the code may add once the job arms (judge cases)
        self.armed = False
        self.capped = False
        self.out = bytearray()
        self.err = bytearray()
        self.total = 0
        self.meta = bytearray()
        self.meta_messages = 0
        self.open_pipes = 2
        self.killed = False
        self.eof = asyncio.Event()
        self.stop: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def request_stop(self, reason: str) -> None:
        if not self.stop.done():
            self.stop.set_result(reason)

    def take(self, buf: bytearray, chunk: bytes) -> None:
        room = self.cap + 1 - len(self.out) - len(self.err)
        if room > 0:
            buf += chunk[:room]
        self.total += len(chunk)
        if self.total > self.cap:
            self.request_stop("output")


async def readable(sock: socket.socket) -> None:
    """Wait until ``sock`` has data (or its peer closed) without blocking the event loop."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), wake)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())


class Slot:
    def __init__(self, index: int, isolation: Isolation, *, gpu: Gpu | None = None,
                 job_uid_base: int = 61000, disk_mb: int = 64, warm: bool = True,
                 job_uid: int | None = None, cgroups: Mechanism | None = None) -> None:
        self.index = index
        self.gpu = gpu
        self.isolation = isolation
        uid = job_uid if job_uid is not None else job_uid_base + index
        self.job_uid = uid if isolation.root else None
        self.disk_mb = disk_mb
        self.warm = warm
        self.cgroups = cgroups
        self.cgroup: JobCgroup | None = None  # the running job's
        self.busy = False
        self.torch_warm = False
        self.torch_version: str | None = None  # what the template imported, in the sandbox
        self.cuda_version: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._ctl: socket.socket | None = None
        self._oom_fd: int | None = None
        self._lock = asyncio.Lock()
        self._scratch: str | None = None
        self._job: _Job | None = None
        self._seq = 0
        self._cancelled = False  # cancelled before its job had started
        self._ready: _Ready | None = None  # the next job's child, forked while idle
        self._preparing: asyncio.Task[None] | None = None

    @property
    def device_label(self) -> str:
        return self.gpu.label if self.gpu else "cpu"

    @property
    def _bwrapped(self) -> bool:
        return self.isolation.level is Level.FULL or self.isolation.bwrap is not None

    def _job_dir(self) -> str:
        if self._bwrapped:
            return "/tmp/job"
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix=f"torchdrill-slot{self.index}-")
            os.chmod(self._scratch, 0o755)
        return os.path.join(self._scratch, "job")

    def _env(self, control_fd: int, bpf_fd: int | None) -> dict[str, str]:
        env = {**sandbox_env(),
               "CUDA_VISIBLE_DEVICES": self.gpu.visible_devices if self.gpu else "",
               "TORCHDRILL_WARM": "1" if self.warm else "0",
               "TORCHDRILL_CONTROL_FD": str(control_fd)}
        if bpf_fd is not None:
            env["TORCHDRILL_JOB_BPF_FD"] = str(bpf_fd)
        if self._bwrapped:
            env["TORCHDRILL_NAMESPACED"] = "1"
            env["TORCHDRILL_KEEP"] = os.pathsep.join(python_roots())  # never wiped
        if self.job_uid is not None:
            env["TORCHDRILL_JOB_UID"] = str(self.job_uid)
        return env

    async def start(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = [theirs.fileno()]
        bpf_fd = seccomp_fd = None
        if self.isolation.seccomp:
            bpf_fd = os.memfd_create("torchdrill-job-seccomp", 0)
            os.write(bpf_fd, syscall_filter.job_bpf())
            os.lseek(bpf_fd, 0, os.SEEK_SET)
            fds.append(bpf_fd)
        env = self._env(theirs.fileno(), bpf_fd)
        python = sandbox_python()
        if self._bwrapped and self.isolation.bwrap:
            if self.isolation.seccomp:
                seccomp_fd = seccomp_memfd()
                fds.append(seccomp_fd)
            cmd = [*bwrap_command(self.isolation.bwrap, root=self.isolation.root,
                                  disk_mb=self.disk_mb, env=env,
                                  gpu=self.gpu.device_minor if self.gpu else None,
                                  seccomp_fd=seccomp_fd), python, "-I", ZYGOTE_IN_SANDBOX]
            proc_env: dict[str, str] | None = BWRAP_ENV  # as the start-up probe runs it
        else:
            cmd, proc_env = [python, "-I", str(ZYGOTE_SOURCE)], env
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                env=proc_env, pass_fds=fds, start_new_session=True)
        finally:
            for fd in fds:
                os.close(fd)
            theirs.detach()
        mine.setblocking(False)
        self._ctl = mine
        async with asyncio.timeout(READY_TIMEOUT_S):
            ready = await self._recv()
        if ready.get("op") != "ready":
            raise SandboxCrashed(f"template said {ready.get('op')!r} instead of ready")
        self.torch_warm = bool(ready.get("torch"))
        self.torch_version = clean_version(ready.get("torch_version"))
        self.cuda_version = clean_version(ready.get("cuda_version"))
        log.info("slot %d (%s) ready, torch %s preloaded: %s", self.index, self.device_label,
                 self.torch_version or "unknown", self.torch_warm)
        self._prepare_next()

    async def close(self) -> None:
        task, self._preparing = self._preparing, None
        ctl, self._ctl = self._ctl, None  # first: a job ending now forks no next child
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._drop_ready()
        proc, self._proc = self._proc, None
        if ctl is not None:
            ctl.close()
        if proc and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await proc.wait()
        self._drop_cgroup()
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def _new_cgroup(self) -> JobCgroup | None:
        """The next job's cgroups, with no limits yet (its child waits there, idle)."""
        if self.cgroups is None:
            return None
        # a random name: a job reading /proc/self/cgroup cannot count the jobs before it
        self.cgroup = JobCgroup(self.cgroups, f"job-{secrets.token_hex(8)}")
        self.cgroup.create()
        self._oom_fd = self.cgroup.oom_eventfd()
        return self.cgroup

    def _drop_cgroup(self) -> None:
        if self._oom_fd is not None:
            os.close(self._oom_fd)
            self._oom_fd = None
        cgroup, self.cgroup = self.cgroup, None
        if cgroup is not None:
            cgroup.remove()  # kills what is left first

    async def _recv(self) -> dict[str, Any]:
        if self._ctl is None:
            raise SandboxCrashed("no template")
        data = await asyncio.get_running_loop().sock_recv(self._ctl, CONTROL_MAX)
        if not data:
            raise SandboxCrashed("the template exited")
        message = json.loads(data)
        if not isinstance(message, dict):
            raise SandboxCrashed("malformed reply from the template")
        return message

    async def _expect(self, op: str, timeout: float) -> dict[str, Any]:
        async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it can swallow a
            reply = await self._recv()  # cancellation that lands as the reply arrives
        if reply.get("op") != op or (self._seq and reply.get("job", self._seq) != self._seq):
            raise SandboxCrashed(f"template replied {reply.get('op')!r}, expected {op!r}")
        return reply

    def _control(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        if self._ctl is None:
            raise SandboxCrashed("no template")
        data = json.dumps(message).encode()
        if fds:
            socket.send_fds(self._ctl, [data], fds)
        else:
            self._ctl.send(data)

    async def cancel(self) -> None:
        """Stop the running job, if any (reported as cancelled), or the one about to start (it
        may be waiting for its child, still being forked)."""
        if self._job is not None:
            self._job.request_stop("cancelled")
        elif self.busy:
            self._cancelled = True

    async def run(self, job_id: str, code: str, limits: Limits, *, arm_mb: int = 0) -> RawOutcome:
        """``arm_mb``: a judge case's memory allowance, applied to the job's memory cgroup when
        its harness asks, just before the member's code runs (see `ARM`)."""
        async with self._lock:
            self.busy, self._cancelled = True, False
            try:
                return await self._run(job_id, code, limits, arm_mb)
            finally:
                self.busy = self._cancelled = False
                self._job = None
                self._prepare_next()

    def _prepare_next(self) -> None:
        """Fork the next job's child in the background, once this job's result is out."""
        if self._preparing is None and self._ctl is not None:
            self._preparing = asyncio.ensure_future(self._idle_work())

    async def _idle_work(self) -> None:
        self._drop_cgroup()  # the last job's, its processes already dead
        if self._seq and not self.isolation.per_job_scratch:
            self._control({"op": "clean", "dirs": self._dirs_to_clean()})
            await self._expect("cleaned", REPLY_TIMEOUT_S)
        await self._fork_ready()

    async def _fork_ready(self) -> None:
        self._seq += 1
        cgroup = self._new_cgroup()
        out_r, out_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        err_r, err_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        mine.setblocking(False)
        ready = _Ready(mine, out_r, err_r, None)
        try:
            os.set_blocking(out_w, True)
            os.set_blocking(err_w, True)
            self._control(self._fork_request(), [theirs.fileno(), out_w, err_w])
        except BaseException:
            ready.close()
            raise
        finally:
            theirs.close()
            os.close(out_w)
            os.close(err_w)
        try:
            await self._expect("forked", REPLY_TIMEOUT_S)
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                ready.host_pid = await self._hello(mine)
            if ready.host_pid is not None and cgroup is not None:
                cgroup.add(ready.host_pid)
        except BaseException:
            ready.close()
            raise
        self._ready = ready

    def _drop_ready(self) -> None:
        ready, self._ready = self._ready, None
        if ready is not None:
            ready.close()  # an unused child reads EOF instead of a job and exits

    async def _take_ready(self, retry: bool = True) -> _Ready:
        """The child forked while idle; a fresh one if that failed or the child has died."""
        task, self._preparing = self._preparing, None
        try:
            if task is not None:
                await task
            if self._ready is not None and (said := self._peek()) is not None:
                if not said:
                    raise SandboxCrashed("the template exited")
                await self._expect("exit", REPLY_TIMEOUT_S)  # the idle child ended: forget it
                self._drop_ready()
            if self._ready is None:
                await self._idle_work()
        except (SandboxCrashed, OSError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            if not retry:
                raise
            log.warning("slot %d: the next job's child was lost (%s); restarting", self.index, exc)
            if not await self._restart():
                raise SandboxCrashed("the template could not be restarted") from exc
            return await self._take_ready(retry=False)
        ready, self._ready = self._ready, None
        assert ready is not None
        return ready

    def _peek(self) -> bytes | None:
        """A reply waiting on the control socket (b"" if the template has gone), else None."""
        assert self._ctl is not None
        try:
            return self._ctl.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return None

    async def _restart(self) -> bool:
        await self.close()
        try:
            await self.start()
            return True
        except Exception:
            log.exception("slot %d: the template could not be restarted", self.index)
            await self.close()
            return False

    async def _run(self, job_id: str, code: str, limits: Limits, arm_mb: int = 0) -> RawOutcome:
        dead = self._proc is None or self._proc.returncode is not None or self._ctl is None
        if dead and not await self._restart():
            return _crashed(False)
        try:
            return await self._supervise(code, limits, arm_mb)
        except (SandboxCrashed, OSError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            log.warning("slot %d: sandbox lost during job %s: %s", self.index, job_id, exc)
            return _crashed(await self._restart())

    def _fork_request(self) -> dict[str, Any]:
        """What the template needs to fork a child: the same for every job of this slot."""
        job_dir = self._job_dir()
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": job_dir, "TMPDIR": job_dir,
               "USER": "sandbox", "MALLOC_ARENA_MAX": "2", "MPLCONFIGDIR": job_dir,
               "CUDA_VISIBLE_DEVICES": self.gpu.visible_devices if self.gpu else ""}
        return {"op": "fork", "job": self._seq, "uid": self.job_uid, "job_dir": job_dir,
                "env": env, "cgroup": self.cgroups is not None,
                "scratch": self.isolation.per_job_scratch,
                "pid_namespace": self.isolation.per_job_scratch}

    def _job_request(self, limits: Limits) -> dict[str, Any]:
        """What the waiting child needs from this job before its code: its limits."""
        mem = limits.memory_mb * 1024 * 1024
        fallback = self.cgroups is None
        return {"limits": limits.to_dict(),
                # both tmpfs are memory: neither may be larger than the job's memory limit
                "disk_bytes": min(self.disk_mb * 1024 * 1024, mem), "shm_bytes": mem,
                # without kernel limits, the old guards stand in (GPU slots: CUDA reserves
                # huge address ranges, so no RLIMIT_AS there)
                "rlimit_as_extra_bytes": mem if fallback and self.gpu is None else 0,
                "rlimit_nproc": limits.max_procs if fallback else 0}

    async def _supervise(self, code: str, limits: Limits, arm_mb: int = 0) -> RawOutcome:
        return await self._supervise_in(await self._take_ready(), code, limits, arm_mb)

    async def _supervise_in(self, ready: _Ready, code: str, limits: Limits,
                            arm_mb: int = 0) -> RawOutcome:
        loop = asyncio.get_running_loop()
        job = self._job = _Job(int(limits.output_cap_bytes), arm_mb * 1024 * 1024)
        if self._cancelled:
            job.request_stop("cancelled")
        mine, out_r, err_r = ready.sock, ready.out_r, ready.err_r
        readers: list[int] = []
        try:
            if self.cgroup is not None:
                self.cgroup.set_limits(limits.memory_mb, limits.max_procs)
            else:  # the template's watchdog stands in for the memory cgroup
                self._control({"op": "watch", "job": self._seq, "kb": limits.memory_mb * 1024})
            start = loop.time()
            if ready.host_pid is not None:
                data = code.encode()
                mine.send(json.dumps({**self._job_request(limits), "code_bytes": len(data)}).encode())
                for at in range(0, len(data), CODE_CHUNK):
                    await loop.sock_sendall(mine, data[at:at + CODE_CHUNK])
            for fd, buf in ((out_r, job.out), (err_r, job.err)):
                loop.add_reader(fd, self._on_output, fd, buf)
                readers.append(fd)
            loop.add_reader(mine.fileno(), self._on_meta, mine)
            readers.append(mine.fileno())
            if self._oom_fd is not None:
                loop.add_reader(self._oom_fd, self._on_oom)
                readers.append(self._oom_fd)
            exit_task = asyncio.ensure_future(self._expect("exit", limits.timeout_s + 3600))
            try:
                remaining = max(0.0, start + limits.timeout_s - loop.time())
                either: set[asyncio.Future[Any]] = {exit_task, job.stop}
                done, _ = await asyncio.wait(either, timeout=remaining,
                                             return_when=asyncio.FIRST_COMPLETED)
                if exit_task not in done:
                    job.request_stop("timeout")
                    self._kill()
                    async with asyncio.timeout(REPLY_TIMEOUT_S):
                        await asyncio.shield(exit_task)
                reply = exit_task.result()
            finally:
                if not exit_task.done():
                    exit_task.cancel()
            duration = loop.time() - start
            if self.cgroup is not None and not self.cgroup.kill_all():  # what it left behind
                raise SandboxCrashed("the job's processes would not die")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await job.eof.wait()
        finally:
            for fd in readers:
                loop.remove_reader(fd)
            ready.close()
        return self._outcome(reply, job, duration)

    def _dirs_to_clean(self) -> list[str]:
        return ["/tmp", "/dev/shm"] if self._bwrapped else [os.path.dirname(self._job_dir())]

    async def _hello(self, sock: socket.socket) -> int | None:
        """The child's host pid, from the kernel (SCM_CREDENTIALS); None if it died first."""
        await readable(sock)
        data, ancillary, _, _ = sock.recvmsg(64, socket.CMSG_SPACE(struct.calcsize("3i")))
        if not data:
            return None
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid, _, _ = struct.unpack("3i", payload[:12])
                return pid
        raise SandboxCrashed("the job child sent no credentials")

    def _kill(self) -> None:
        if self._job is not None:
            if self._job.killed:
                return
            self._job.killed = True
        if self.cgroup is not None:
            self.cgroup.kill_all()
        with contextlib.suppress(OSError, SandboxCrashed):
            self._control({"op": "kill", "job": self._seq})

    def _on_output(self, fd: int, buf: bytearray) -> None:
        job = self._job
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if job is None:
            return
        if not chunk:
            asyncio.get_running_loop().remove_reader(fd)
            job.open_pipes -= 1
            if job.open_pipes == 0:
                job.eof.set()
            return
        job.take(buf, chunk)
        if job.stop.done() and job.stop.result() == "output":
            self._kill()

    def _on_oom(self) -> None:
        with contextlib.suppress(OSError):
            os.eventfd_read(self._oom_fd)  # type: ignore[arg-type]  # _oom_fd is open while the handler is registered
        if self._job is not None:
            self._job.request_stop("memory")
            self._kill()

    def _on_meta(self, sock: socket.socket) -> None:
        job = self._job
        try:
            chunk = sock.recv(META_MAX_BYTES)  # a larger message is cut by the kernel
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if job is not None and chunk == ARM:
            self._arm(job, sock)
            return
        if job is None or not chunk or job.meta_messages >= 16:
            asyncio.get_running_loop().remove_reader(sock.fileno())
            if job is not None and job.meta_messages >= 16:
                log.warning("slot %d: job flooded its metadata channel; ignored", self.index)
            return
        job.meta_messages += 1
        job.meta = bytearray(chunk[:META_MAX_BYTES])  # the last message wins

    def _arm(self, job: _Job, sock: socket.socket) -> None:
        """Cap the job's memory cgroup at its usage now plus the trusted allowance, once; a job
        given no allowance (every /run) gets no answer at all."""
        if not job.arm_bytes or job.armed:
            return
        job.armed = True
        job.capped = self.cgroup is not None and self.cgroup.cap_memory_above_usage(job.arm_bytes)
        with contextlib.suppress(OSError):
            sock.send(ARMED if job.capped else UNARMED)

    def _outcome(self, reply: dict[str, Any], job: _Job, duration: float) -> RawOutcome:
        status = reply.get("status")
        exit_code = os.waitstatus_to_exitcode(int(status)) if status is not None else None
        killed = job.stop.result() if job.stop.done() else None
        if reply.get("killed") == "memory":
            killed = killed or "memory"
        peak_kb = int(reply.get("maxrss_kb") or 0)
        pids_limited = False
        if self.cgroup is not None:
            after = self.cgroup.counters()
            if after.oom_kills and killed in (None, "memory"):
                killed = "memory"
            pids_limited = after.pids_max_hits > 0
            peak_kb = self.cgroup.peak_bytes() // 1024 or peak_kb
        meta = parse_meta(bytes(job.meta)) if self.gpu is not None else {}
        cap = job.cap
        return RawOutcome(
            exit_code=exit_code, killed=killed, duration_s=duration,
            stdout=bytes(job.out[:cap]), stderr=bytes(job.err[:max(0, cap - len(job.out))]),
            output_over_cap=job.total > cap, peak_rss_kb=peak_kb or None,
            gpu_max_allocated_bytes=meta.get("gpu_max_allocated_bytes"),
            kernel_limits=self.cgroups is not None, pids_limited=pids_limited,
            memory_capped=job.capped)
