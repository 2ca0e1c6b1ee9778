"""Issue 21: mutation survivors of runner/sandbox.py. A real slot talks to a zygote in a
sandbox; these drive the slot's own side in-process: the fork request and environment it
builds, the control and job sockets (socketpairs standing in for the template), output and
metadata book-keeping, the verdict it reads back, and recovery when the template is lost.
A fake template answers the job protocol, so no snippet runs anywhere."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runner import isolation, sandbox
from runner.cgroups import Counters, Mechanism
from runner.isolation import ZYGOTE_IN_SANDBOX, ZYGOTE_SOURCE, Isolation, Level, python_roots
from runner.jobs import Limits
from runner.sandbox import Gpu, RawOutcome, SandboxCrashed, Slot, _Job, readable

FULL = Isolation(Level.FULL, "/usr/bin/bwrap", True, seccomp=True)
WEAK_ROOT = Isolation(Level.WEAK, None, True)
WEAK_USER = Isolation(Level.WEAK, None, False)
BWRAP_USER = Isolation(Level.WEAK, "/usr/bin/bwrap", False)
H200 = Gpu(0, "NVIDIA H200")
LIMITS = Limits(timeout_s=5.0, memory_mb=300, max_procs=64, output_cap_bytes=1000)


def test_a_crash_outcome_says_whether_the_template_is_back() -> None:
    assert sandbox._crashed(True) == RawOutcome(None, "crashed", 0.0, b"", b"", False, None, None,
                                                kernel_limits=False, pids_limited=False, restarted=True)
    assert sandbox._crashed(False).restarted is False
    assert (sandbox.READY_TIMEOUT_S, sandbox.REPLY_TIMEOUT_S, sandbox.META_MAX_BYTES, sandbox.CONTROL_MAX) == (
        120.0, 10.0, 4096, 65536)


def test_metadata_keeps_known_integer_keys_only(caplog: pytest.LogCaptureFixture) -> None:
    data = (b"gpu_max_allocated_bytes=12\nnone=0\n\nfoo=1\ngpu_max_allocated_bytes=-5\n"
            b"gpu_max_allocated_bytes=12345678901234567\ngpu_max_allocated_bytes\xff=1\n"
            b"gpu_max_allocated_bytes=\xd9\xa1\xd9\xa2\n"  # digits, but not ASCII ones
            b"gpu_max_allocated_bytes=1234567890123456\n")
    with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
        assert sandbox.parse_meta(data) == {"gpu_max_allocated_bytes": 1234567890123456}
    assert [r.getMessage() for r in caplog.records] == ["ignored 5 malformed metadata line(s) from a job"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
        assert sandbox.parse_meta(b"none=0\n\ngpu_max_allocated_bytes=7") == {"gpu_max_allocated_bytes": 7}
        assert sandbox.parse_meta(b"") == {}
    assert caplog.records == []


async def test_a_job_keeps_output_up_to_one_byte_over_its_cap() -> None:
    job = _Job(5)
    assert (job.cap, job.total, job.open_pipes, job.killed, job.meta_messages) == (5, 0, 2, False, 0)
    assert (bytes(job.out), bytes(job.err), bytes(job.meta), job.eof.is_set(), job.stop.done()) == (
        b"", b"", b"", False, False)
    job.take(job.out, b"abc")
    job.take(job.err, b"de")
    assert (bytes(job.out), bytes(job.err), job.total, job.stop.done()) == (b"abc", b"de", 5, False)
    job.take(job.err, b"fgh")
    assert (bytes(job.err), job.total, job.stop.result()) == (b"def", 8, "output")
    job.take(job.out, b"xyz")
    assert (bytes(job.out), job.total) == (b"abc", 11)
    job.request_stop("timeout")
    assert job.stop.result() == "output"


# ---- the slot's own settings ------------------------------------------------------------------


def test_the_job_uid_is_per_slot_and_only_as_root() -> None:
    assert Slot(3, FULL).job_uid == 61003
    assert Slot(3, FULL, job_uid_base=70000).job_uid == 70003
    assert Slot(3, FULL, job_uid=65001).job_uid == 65001
    assert Slot(3, WEAK_USER, job_uid=65001).job_uid is None
    slot = Slot(2, FULL, gpu=H200, disk_mb=32, warm=False)
    assert (slot.index, slot.gpu, slot.disk_mb, slot.warm, slot.cgroups, slot.cgroup) == (
        2, H200, 32, False, None, None)
    assert (slot.busy, slot.torch_warm, slot.torch_version, slot.cuda_version) == (False, False, None, None)
    assert Slot(0, FULL).warm is True and Slot(0, FULL).disk_mb == 64


def test_device_labels_and_bwrap_use() -> None:
    assert Slot(0, FULL, gpu=H200).device_label == "cuda:0 (NVIDIA H200)"
    assert Slot(0, FULL).device_label == "cpu"
    assert Slot(0, FULL)._bwrapped is True
    assert Slot(0, Isolation(Level.FULL, None, True))._bwrapped is True
    assert Slot(0, BWRAP_USER)._bwrapped is True
    assert Slot(0, WEAK_ROOT)._bwrapped is False


async def test_without_bwrap_the_job_lives_in_a_scratch_dir_of_the_slot() -> None:
    assert Slot(0, FULL)._job_dir() == "/tmp/job"
    assert Slot(0, FULL)._dirs_to_clean() == ["/tmp", "/dev/shm"]
    slot = Slot(4, WEAK_USER)
    job_dir = slot._job_dir()
    scratch = os.path.dirname(job_dir)
    try:
        assert os.path.basename(job_dir) == "job"
        assert os.path.basename(scratch).startswith("torchdrill-slot4-")
        assert os.stat(scratch).st_mode & 0o777 == 0o755
        assert slot._job_dir() == job_dir
        assert slot._dirs_to_clean() == [scratch]
    finally:
        await slot.close()
    assert not os.path.exists(scratch) and slot._scratch is None


def test_the_template_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu = Slot(1, FULL, gpu=Gpu(3, "A100"))
    assert gpu._env(11, 12) == {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
        "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1", "USER": "sandbox",
        "CUDA_VISIBLE_DEVICES": "3", "TORCHDRILL_WARM": "1", "TORCHDRILL_CONTROL_FD": "11",
        "TORCHDRILL_JOB_BPF_FD": "12", "TORCHDRILL_NAMESPACED": "1",
        "TORCHDRILL_KEEP": os.pathsep.join(python_roots()), "TORCHDRILL_JOB_UID": "61001"}
    cpu = Slot(0, WEAK_USER, warm=False)
    assert cpu._env(5, None) == {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
        "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1", "USER": "sandbox",
        "CUDA_VISIBLE_DEVICES": "", "TORCHDRILL_WARM": "0", "TORCHDRILL_CONTROL_FD": "5"}


def job_env(job_dir: str, cuda: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": job_dir,
            "TMPDIR": job_dir, "USER": "sandbox", "MALLOC_ARENA_MAX": "2", "MPLCONFIGDIR": job_dir,
            "CUDA_VISIBLE_DEVICES": cuda}


MECHANISM = Mechanism(2, Path("/nonexistent/torchdrill-x"), Path("/nonexistent/torchdrill-x"), True)


def test_the_fork_request_is_the_same_for_every_job_of_the_slot() -> None:
    slot = Slot(0, FULL, disk_mb=16)
    slot._seq = 7
    assert slot._fork_request() == {
        "op": "fork", "job": 7, "uid": 61000, "job_dir": "/tmp/job", "env": job_env("/tmp/job", ""),
        "cgroup": False, "scratch": True, "pid_namespace": True}
    gpu = Slot(1, BWRAP_USER, gpu=Gpu(2, "T4"), cgroups=MECHANISM)
    assert gpu._fork_request() == {
        "op": "fork", "job": 0, "uid": None, "job_dir": "/tmp/job", "env": job_env("/tmp/job", "2"),
        "cgroup": True, "scratch": False, "pid_namespace": False}


def test_the_job_request_without_kernel_limits_sets_the_old_guards() -> None:
    slot = Slot(0, FULL, disk_mb=16)
    assert slot._job_request(LIMITS) == {
        "limits": LIMITS.to_dict(), "disk_bytes": 16 * 1024 * 1024, "shm_bytes": 300 * 1024 * 1024,
        "rlimit_as_extra_bytes": 300 * 1024 * 1024, "rlimit_nproc": 64}
    gpu = Slot(1, BWRAP_USER, gpu=Gpu(2, "T4"))  # CUDA reserves huge ranges: no RLIMIT_AS there
    assert (gpu._job_request(LIMITS)["rlimit_as_extra_bytes"], gpu._job_request(LIMITS)["rlimit_nproc"]) == (0, 64)


def test_the_job_request_with_kernel_limits_leaves_them_to_the_cgroup() -> None:
    slot = Slot(0, FULL, cgroups=MECHANISM)
    request = slot._job_request(LIMITS)
    assert (request["rlimit_as_extra_bytes"], request["rlimit_nproc"], request["shm_bytes"],
            request["disk_bytes"]) == (0, 0, 300 * 1024 * 1024, 64 * 1024 * 1024)
    # both tmpfs are memory: a disk allowance above the memory limit is cut to it
    roomy = Slot(0, FULL, cgroups=MECHANISM, disk_mb=1024)._job_request(LIMITS)
    assert (roomy["disk_bytes"], roomy["shm_bytes"]) == (300 * 1024 * 1024, 300 * 1024 * 1024)


# ---- what the slot reads back ------------------------------------------------------------------


class FakeCgroup:
    def __init__(self, oom: int = 0, pids: int = 0, peak: int = 0, dies: bool = True) -> None:
        self.oom, self.pids, self.peak, self.dies = oom, pids, peak, dies
        self.events: list[Any] = []

    def counters(self) -> Counters:
        return Counters(self.oom, self.pids)

    def peak_bytes(self) -> int:
        return self.peak

    def kill_all(self) -> bool:
        self.events.append("kill_all")
        return self.dies

    def set_limits(self, memory_mb: int, max_procs: int) -> None:
        self.events.append(("limits", memory_mb, max_procs))

    def add(self, pid: int) -> None:
        self.events.append(("add", pid))

    def remove(self) -> None:
        self.events.append("remove")


async def outcome(slot: Slot, reply: dict[str, Any], *, stop: str | None = None, out: bytes = b"",
                  err: bytes = b"", total: int | None = None, meta: bytes = b"", cap: int = 10,
                  job: _Job | None = None) -> RawOutcome:
    job = job or _Job(cap)
    job.out += out
    job.err += err
    job.total = len(out) + len(err) if total is None else total
    job.meta += meta
    if stop:
        job.request_stop(stop)
    return slot._outcome(reply, job, 1.5)


async def test_an_exit_is_read_from_the_wait_status() -> None:
    slot = Slot(0, FULL)
    assert await outcome(slot, {"status": 256, "maxrss_kb": 2048}, out=b"out", err=b"err") == RawOutcome(
        1, None, 1.5, b"out", b"err", False, 2048, None, kernel_limits=False, pids_limited=False)
    signalled = await outcome(slot, {"status": 9})
    assert (signalled.exit_code, signalled.peak_rss_kb) == (-9, None)
    assert (await outcome(slot, {"status": 0, "maxrss_kb": None})).exit_code == 0
    lost = await outcome(slot, {"killed": "memory"})
    assert (lost.exit_code, lost.killed) == (None, "memory")
    timed = await outcome(slot, {"killed": "memory", "status": 9}, stop="timeout")
    assert timed.killed == "timeout"


async def test_output_is_cut_at_the_cap_stdout_first() -> None:
    slot = Slot(0, FULL)
    both = await outcome(slot, {"status": 0}, out=b"0123456", err=b"abcdef", total=30)
    assert (both.stdout, both.stderr, both.output_over_cap) == (b"0123456", b"abc", True)
    full = await outcome(slot, {"status": 0}, out=b"0123456789x", err=b"abc", total=10)
    assert (full.stdout, full.stderr, full.output_over_cap) == (b"0123456789", b"", False)


async def test_the_kernels_counters_decide_memory_processes_and_peak() -> None:
    slot = Slot(0, FULL, cgroups=MECHANISM)
    slot.cgroup = FakeCgroup(oom=1, pids=1, peak=4096 * 1024)  # type: ignore[assignment]
    oom = await outcome(slot, {"status": 9, "maxrss_kb": 100})
    assert (oom.killed, oom.pids_limited, oom.peak_rss_kb, oom.kernel_limits) == ("memory", True, 4096, True)
    assert (await outcome(slot, {"status": 9}, stop="memory")).killed == "memory"
    assert (await outcome(slot, {"status": 9}, stop="timeout")).killed == "timeout"
    assert (await outcome(slot, {"status": 9}, stop="cancelled")).killed == "cancelled"
    slot.cgroup = FakeCgroup(oom=0, pids=0, peak=1023)  # type: ignore[assignment]
    calm = await outcome(slot, {"status": 0, "maxrss_kb": 100})
    assert (calm.killed, calm.pids_limited, calm.peak_rss_kb) == (None, False, 100)
    slot.cgroup = None
    assert (await outcome(slot, {"status": 0})).kernel_limits is True


async def test_gpu_memory_comes_from_the_gpu_slots_metadata_only() -> None:
    meta = b"gpu_max_allocated_bytes=5242880\n"
    assert (await outcome(Slot(0, FULL, gpu=H200), {"status": 0}, meta=meta)).gpu_max_allocated_bytes == 5242880
    assert (await outcome(Slot(0, FULL), {"status": 0}, meta=meta)).gpu_max_allocated_bytes is None
    assert (await outcome(Slot(0, FULL, gpu=H200), {"status": 0})).gpu_max_allocated_bytes is None


# ---- the control socket -------------------------------------------------------------------------


@pytest.fixture
async def wired() -> AsyncIterator[tuple[Slot, socket.socket]]:
    slot = Slot(3, FULL)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setblocking(False)
    slot._ctl = mine
    yield slot, theirs
    theirs.close()
    await slot.close()


async def test_without_a_template_nothing_is_sent_or_read() -> None:
    slot = Slot(0, FULL)
    with pytest.raises(SandboxCrashed, match=r"^no template$"):
        await slot._recv()
    with pytest.raises(SandboxCrashed, match=r"^no template$"):
        slot._control({"op": "kill"})


async def test_replies_are_json_objects(wired: tuple[Slot, socket.socket]) -> None:
    slot, theirs = wired
    theirs.send(b'{"op": "ready", "torch": true}')
    assert await slot._recv() == {"op": "ready", "torch": True}
    theirs.send(b"[1, 2]")
    with pytest.raises(SandboxCrashed, match=r"^malformed reply from the template$"):
        await slot._recv()
    theirs.send(b"{not json")
    with pytest.raises(ValueError):
        await slot._recv()
    theirs.close()
    with pytest.raises(SandboxCrashed, match=r"^the template exited$"):
        await slot._recv()


async def test_a_reply_must_be_the_expected_one_for_this_job(wired: tuple[Slot, socket.socket]) -> None:
    slot, theirs = wired
    theirs.send(b'{"op": "forked", "job": 99}')
    assert await slot._expect("forked", 1.0) == {"op": "forked", "job": 99}  # no job yet: not checked
    slot._seq = 4
    theirs.send(b'{"op": "forked", "job": 4}')
    assert await slot._expect("forked", 1.0) == {"op": "forked", "job": 4}
    theirs.send(b'{"op": "cleaned"}')
    assert await slot._expect("cleaned", 1.0) == {"op": "cleaned"}
    theirs.send(b'{"op": "forked", "job": 3}')
    with pytest.raises(SandboxCrashed) as stale:
        await slot._expect("forked", 1.0)
    assert str(stale.value) == "template replied 'forked', expected 'forked'"
    theirs.send(b'{"op": "exit", "job": 4}')
    with pytest.raises(SandboxCrashed) as wrong:
        await slot._expect("forked", 1.0)
    assert str(wrong.value) == "template replied 'exit', expected 'forked'"
    with pytest.raises(TimeoutError):
        await slot._expect("forked", 0.01)


async def test_messages_go_out_as_json_with_their_fds(wired: tuple[Slot, socket.socket]) -> None:
    slot, theirs = wired
    slot._control({"op": "kill"})
    assert json.loads(theirs.recv(100)) == {"op": "kill"}
    r, w = os.pipe()
    try:
        slot._control({"op": "fork", "job": 1}, [r])
        data, fds, _, _ = socket.recv_fds(theirs, 100, 4)
        assert json.loads(data) == {"op": "fork", "job": 1} and len(fds) == 1
        os.write(w, b"x")
        assert os.read(fds[0], 1) == b"x"
        os.close(fds[0])
    finally:
        os.close(r)
        os.close(w)


async def test_the_job_childs_pid_comes_from_the_kernel() -> None:
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    mine.setblocking(False)
    slot = Slot(0, FULL)
    theirs.send(b"hello")
    assert await slot._hello(mine) == os.getpid()
    theirs.close()
    assert await slot._hello(mine) is None
    mine.close()
    plain, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    plain.setblocking(False)
    other.send(b"hello")
    with pytest.raises(SandboxCrashed, match=r"^the job child sent no credentials$"):
        await slot._hello(plain)
    plain.close()
    other.close()


# ---- stopping a job -----------------------------------------------------------------------------


async def test_a_kill_stops_the_cgroup_and_tells_the_template_once(wired: tuple[Slot, socket.socket]) -> None:
    slot, theirs = wired
    await slot.cancel()  # no job: nothing to stop
    job = slot._job = _Job(10)
    slot._seq = 5
    cgroup = slot.cgroup = FakeCgroup()  # type: ignore[assignment]
    await slot.cancel()
    assert job.stop.result() == "cancelled"
    slot._kill()
    assert job.killed and cgroup.events == ["kill_all"]  # type: ignore[union-attr]
    # naming its job: a late kill never reaches the child waiting for the next one
    assert json.loads(theirs.recv(100)) == {"op": "kill", "job": 5}
    slot._kill()
    assert cgroup.events == ["kill_all"]  # type: ignore[union-attr]
    theirs.setblocking(False)
    with pytest.raises(BlockingIOError):
        theirs.recv(100)
    slot._job = None
    slot._kill()
    assert cgroup.events == ["kill_all", "kill_all"]  # type: ignore[union-attr]
    assert json.loads(theirs.recv(100)) == {"op": "kill", "job": 5}
    slot.cgroup = None


async def test_a_kill_without_a_template_is_quiet() -> None:
    slot = Slot(0, FULL)
    slot._job = _Job(1)
    slot._kill()
    assert slot._job.killed


async def test_a_kill_after_the_template_went_away_is_quiet(wired: tuple[Slot, socket.socket]) -> None:
    slot, theirs = wired
    theirs.close()
    slot._job = _Job(1)
    slot._kill()  # the send fails with EPIPE
    assert slot._job.killed


async def test_output_is_read_until_both_pipes_close() -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(100)
    out_r, out_w = os.pipe2(os.O_NONBLOCK)
    err_r, err_w = os.pipe2(os.O_NONBLOCK)
    try:
        slot._on_output(out_r, job.out)  # nothing yet
        assert (bytes(job.out), job.open_pipes) == (b"", 2)
        os.write(out_w, b"hello ")
        os.write(err_w, b"oops")
        slot._on_output(out_r, job.out)
        slot._on_output(err_r, job.err)
        assert (bytes(job.out), bytes(job.err), job.total) == (b"hello ", b"oops", 10)
        os.close(out_w)
        slot._on_output(out_r, job.out)
        assert (job.open_pipes, job.eof.is_set()) == (1, False)
        os.close(err_w)
        slot._on_output(err_r, job.err)
        assert (job.open_pipes, job.eof.is_set()) == (0, True)
    finally:
        os.close(out_r)
        os.close(err_r)


async def test_output_over_the_cap_kills_the_job() -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(4)
    r, w = os.pipe2(os.O_NONBLOCK)
    try:
        os.write(w, b"12345")
        slot._on_output(r, job.out)
        assert (job.stop.result(), job.killed, bytes(job.out)) == ("output", True, b"12345")
        slot._job = None
        os.write(w, b"more")
        slot._on_output(r, bytearray())  # after the job: drained, nothing kept
        with pytest.raises(BlockingIOError):
            os.read(r, 10)
    finally:
        os.close(r)
        os.close(w)


async def test_a_cancelled_job_is_not_killed_again_by_its_output() -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(100)
    job.request_stop("cancelled")
    r, w = os.pipe2(os.O_NONBLOCK)
    try:
        os.write(w, b"x")
        slot._on_output(r, job.out)
        assert job.killed is False
    finally:
        os.close(r)
        os.close(w)


async def test_a_broken_output_pipe_counts_as_closed() -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(100)
    r, w = os.pipe2(os.O_NONBLOCK)
    os.close(r)
    os.close(w)
    slot._on_output(r, job.out)
    assert job.open_pipes == 1


async def test_metadata_keeps_the_last_of_sixteen_messages(caplog: pytest.LogCaptureFixture) -> None:
    slot = Slot(5, FULL)
    job = slot._job = _Job(100)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setblocking(False)
    try:
        slot._on_meta(mine)  # nothing to read
        assert job.meta_messages == 0
        for n in range(16):
            theirs.send(f"gpu_max_allocated_bytes={n}".encode())
            slot._on_meta(mine)
        assert (bytes(job.meta), job.meta_messages) == (b"gpu_max_allocated_bytes=15", 16)
        theirs.send(b"gpu_max_allocated_bytes=99")
        with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
            slot._on_meta(mine)
        assert (bytes(job.meta), job.meta_messages) == (b"gpu_max_allocated_bytes=15", 16)
        assert [r.getMessage() for r in caplog.records] == [
            "slot 5: job flooded its metadata channel; ignored"]
    finally:
        mine.close()
        theirs.close()


class CappingCgroup(FakeCgroup):
    def __init__(self, works: bool = True) -> None:
        super().__init__()
        self.works = works

    def cap_memory_above_usage(self, extra: int) -> bool:
        self.events.append(("cap", extra))
        return self.works


@pytest.fixture
def channel() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A job's metadata socket: the worker's end and the job's, neither blocking."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setblocking(False)
    theirs.setblocking(False)
    yield mine, theirs
    mine.close()
    theirs.close()


@pytest.mark.parametrize(("cgroup", "reply", "capped"), [
    (CappingCgroup(), b"armed", True), (CappingCgroup(works=False), b"unarmed", False), (None, b"unarmed", False)])
async def test_a_judge_case_arms_its_memory_allowance_once(
        channel: tuple[socket.socket, socket.socket], cgroup: CappingCgroup | None, reply: bytes,
        capped: bool) -> None:
    mine, theirs = channel
    slot = Slot(0, FULL)
    slot.cgroup = cgroup  # type: ignore[assignment]
    job = slot._job = _Job(100, arm_bytes=160 * 2**20)
    theirs.send(sandbox.ARM)
    slot._on_meta(mine)
    assert theirs.recv(16) == reply
    theirs.send(sandbox.ARM)  # the member's code, later: no second cap, no answer
    slot._on_meta(mine)
    with pytest.raises(BlockingIOError):
        theirs.recv(16)
    assert (job.capped, bytes(job.meta), job.meta_messages) == (capped, b"", 0)
    if cgroup is not None:
        assert cgroup.events == [("cap", 160 * 2**20)]
    assert (await outcome(slot, {"status": 0}, job=job)).memory_capped is capped
    slot.cgroup = None


async def test_a_run_job_that_asks_to_arm_is_not_answered(channel: tuple[socket.socket, socket.socket]) -> None:
    mine, theirs = channel
    slot = Slot(0, FULL)
    cgroup = slot.cgroup = CappingCgroup()  # type: ignore[assignment]
    slot._job = _Job(100)  # every /run: no allowance
    theirs.send(sandbox.ARM)
    slot._on_meta(mine)
    with pytest.raises(BlockingIOError):
        theirs.recv(16)
    assert cgroup.events == []
    slot.cgroup = None


async def test_a_large_metadata_message_is_cut_and_a_closed_channel_ignored(
        caplog: pytest.LogCaptureFixture) -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(100)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setblocking(False)
    try:
        theirs.send(b"m" * 5000)
        slot._on_meta(mine)
        assert (len(job.meta), job.meta_messages) == (4096, 1)
        theirs.close()
        with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
            slot._on_meta(mine)
        assert (len(job.meta), job.meta_messages, caplog.records) == (4096, 1, [])
        slot._job = None
        slot._on_meta(mine)
    finally:
        mine.close()


class BrokenSocket:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def recv(self, size: int) -> bytes:
        raise ConnectionResetError("reset")


async def test_a_broken_metadata_channel_is_dropped() -> None:
    slot = Slot(0, FULL)
    job = slot._job = _Job(100)
    r, w = os.pipe()
    try:
        slot._on_meta(BrokenSocket(r))  # type: ignore[arg-type]
        assert (bytes(job.meta), job.meta_messages) == (b"", 0)
    finally:
        os.close(r)
        os.close(w)


async def test_the_oom_event_stops_the_job_as_memory() -> None:
    slot = Slot(0, FULL)
    slot._oom_fd = os.eventfd(0, os.EFD_NONBLOCK)
    try:
        slot._on_oom()  # no event pending, no job: quiet
        job = slot._job = _Job(10)
        os.eventfd_write(slot._oom_fd, 1)
        slot._on_oom()
        assert (job.stop.result(), job.killed) == ("memory", True)
        with pytest.raises(BlockingIOError):
            os.eventfd_read(slot._oom_fd)
    finally:
        os.close(slot._oom_fd)
        slot._oom_fd = None


# ---- losing and restarting the template ---------------------------------------------------------


def fake_recovery(monkeypatch: pytest.MonkeyPatch, slot: Slot, *, restarts: bool,
                  supervise: Callable[[str, Limits], Awaitable[RawOutcome]]) -> list[str]:
    events: list[str] = []

    async def restart() -> bool:
        events.append("restart")
        return restarts

    async def run(code: str, limits: Limits, arm_mb: int = 0) -> RawOutcome:
        events.append(f"supervise busy={slot.busy}")
        return await supervise(code, limits)

    monkeypatch.setattr(slot, "_restart", restart)
    monkeypatch.setattr(slot, "_supervise", run)
    return events


DONE = RawOutcome(0, None, 0.1, b"ok", b"", False, 10, None)


class LiveProc:
    returncode: int | None = None


async def test_a_dead_template_is_restarted_before_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    async def ok(code: str, limits: Limits) -> RawOutcome:
        return DONE

    slot = Slot(0, FULL)
    events = fake_recovery(monkeypatch, slot, restarts=True, supervise=ok)
    assert await slot.run("j1", "print()", LIMITS) is DONE
    assert events == ["restart", "supervise busy=True"]
    assert (slot.busy, slot._job) == (False, None)
    broken = Slot(0, FULL)
    events = fake_recovery(monkeypatch, broken, restarts=False, supervise=ok)
    assert await broken.run("j2", "print()", LIMITS) == sandbox._crashed(False)
    assert events == ["restart"]


async def test_a_live_template_runs_the_job_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    async def ok(code: str, limits: Limits) -> RawOutcome:
        return DONE

    slot = Slot(0, FULL)
    slot._proc = LiveProc()  # type: ignore[assignment]
    slot._ctl, other = socket.socketpair()
    events = fake_recovery(monkeypatch, slot, restarts=True, supervise=ok)
    assert await slot._run("j", "x", LIMITS) is DONE
    assert events == ["supervise busy=False"]
    slot._ctl.close()
    other.close()
    slot._ctl = None
    assert await slot._run("j", "x", LIMITS) is DONE
    assert events == ["supervise busy=False", "restart", "supervise busy=False"]
    finished = LiveProc()
    finished.returncode = 0
    slot._proc = finished  # type: ignore[assignment]
    slot._ctl, other = socket.socketpair()
    assert await slot._run("j", "x", LIMITS) is DONE
    assert events[-2:] == ["restart", "supervise busy=False"]
    slot._ctl.close()
    other.close()
    slot._ctl = None
    slot._proc = None


@pytest.mark.parametrize("error", [SandboxCrashed("bad reply"), OSError("pipe"), TimeoutError(),
                                   ValueError("json"), KeyError("op"), TypeError("int")])
async def test_a_template_lost_during_a_job_is_restarted(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture,
                                                         error: Exception) -> None:
    async def lost(code: str, limits: Limits) -> RawOutcome:
        raise error

    for restarts in (True, False):
        slot = Slot(6, FULL)
        slot._proc = LiveProc()  # type: ignore[assignment]
        slot._ctl, other = socket.socketpair()
        events = fake_recovery(monkeypatch, slot, restarts=restarts, supervise=lost)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
            assert await slot._run("job-9", "x", LIMITS) == sandbox._crashed(restarts)
        assert events == ["supervise busy=False", "restart"]
        assert [r.getMessage() for r in caplog.records] == [
            f"slot 6: sandbox lost during job job-9: {error}"]
        slot._ctl.close()
        other.close()
        slot._ctl = slot._proc = None


async def test_other_errors_are_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    async def bug(code: str, limits: Limits) -> RawOutcome:
        raise RuntimeError("a bug")

    slot = Slot(0, FULL)
    fake_recovery(monkeypatch, slot, restarts=True, supervise=bug)
    with pytest.raises(RuntimeError, match="a bug"):
        await slot.run("j", "x", LIMITS)
    assert (slot.busy, slot._job) == (False, None)


async def test_a_restart_that_fails_is_logged_and_cleaned_up(monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    slot = Slot(2, FULL)
    events: list[str] = []

    async def close() -> None:
        events.append("close")

    async def start() -> None:
        events.append("start")
        raise SandboxCrashed("template said 'oops' instead of ready")

    monkeypatch.setattr(slot, "close", close)
    monkeypatch.setattr(slot, "start", start)
    with caplog.at_level(logging.ERROR, logger="runner.sandbox"):
        assert await slot._restart() is False
    assert events == ["close", "start", "close"]
    assert [r.getMessage() for r in caplog.records] == ["slot 2: the template could not be restarted"]

    async def fine() -> None:
        events.append("fine")

    monkeypatch.setattr(slot, "start", fine)
    events.clear()
    assert await slot._restart() is True
    assert events == ["close", "fine"]


class FakeProc:
    def __init__(self, returncode: int | None = None, gone: bool = False) -> None:
        self.returncode = returncode
        self.gone = gone
        self.events: list[str] = []

    def kill(self) -> None:
        self.events.append("kill")
        if self.gone:
            raise ProcessLookupError

    async def wait(self) -> int:
        self.events.append("wait")
        if self.gone:
            raise ChildProcessError
        return -9


async def test_close_kills_a_running_template_and_drops_the_job_cgroup() -> None:
    slot = Slot(0, FULL)
    proc = slot._proc = FakeProc()  # type: ignore[assignment]
    slot._ctl, theirs = socket.socketpair()
    ctl = slot._ctl
    cgroup = slot.cgroup = FakeCgroup()  # type: ignore[assignment]
    slot._oom_fd = os.eventfd(0)
    oom_fd = slot._oom_fd
    await slot.close()
    assert proc.events == ["kill", "wait"]  # type: ignore[union-attr]
    assert ctl.fileno() == -1 and theirs.recv(10) == b""
    assert (slot._proc, slot._ctl, slot.cgroup, slot._oom_fd) == (None, None, None, None)
    assert cgroup.events == ["remove"]  # type: ignore[union-attr]
    with pytest.raises(OSError):
        os.fstat(oom_fd)
    theirs.close()
    slot._scratch = str(Path(os.devnull).parent / "torchdrill-test-gone-scratch")
    exited = slot._proc = FakeProc(returncode=0)  # type: ignore[assignment]
    await slot.close()
    assert exited.events == [] and slot._scratch is None  # type: ignore[union-attr]
    gone = slot._proc = FakeProc(gone=True)  # type: ignore[assignment]
    await slot.close()
    assert gone.events == ["kill", "wait"]  # type: ignore[union-attr]
    await slot.close()


# ---- one job's cgroup --------------------------------------------------------------------------


async def test_each_job_gets_a_fresh_cgroup_with_its_limits(tmp_path: Path) -> None:
    top = tmp_path / "torchdrill-x"
    slot = Slot(2, FULL, cgroups=Mechanism(2, top, top, True))
    slot._seq = 4
    cgroup = slot._new_cgroup()
    assert cgroup is slot.cgroup and cgroup is not None
    # a random name: a job cannot count the jobs before it from /proc/self/cgroup
    assert cgroup.memory.parent == top and re.fullmatch(r"job-[0-9a-f]{16}", cgroup.memory.name)
    assert "job4" not in cgroup.memory.name
    other = Slot(2, FULL, cgroups=Mechanism(2, top, top, True))
    other._seq = 4
    assert other._new_cgroup().memory != cgroup.memory  # type: ignore[union-attr]
    other._drop_cgroup()
    # made while the slot is idle: the job's limits are written when it comes
    assert not (cgroup.memory / "memory.max").exists()
    cgroup.set_limits(LIMITS.memory_mb, LIMITS.max_procs)
    assert (cgroup.memory / "memory.max").read_text() == str(300 * 1024 * 1024)
    assert (cgroup.pids / "pids.max").read_text() == "64"
    assert slot._oom_fd is None
    slot._drop_cgroup()
    assert slot.cgroup is None
    assert Slot(0, FULL)._new_cgroup() is None


async def test_a_v1_job_cgroup_brings_its_oom_eventfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    efd = os.eventfd(0)
    monkeypatch.setattr(sandbox.JobCgroup, "oom_eventfd", lambda self: efd)
    slot = Slot(0, FULL, cgroups=Mechanism(2, tmp_path / "t", tmp_path / "t", True))
    slot._new_cgroup()
    assert slot._oom_fd == efd
    slot._drop_cgroup()
    assert slot._oom_fd is None
    with pytest.raises(OSError):
        os.fstat(efd)


async def test_the_last_jobs_cgroup_goes_before_the_next_child_is_forked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    slot = Slot(0, FULL)
    last = slot.cgroup = FakeCgroup()  # type: ignore[assignment]
    forked: list[Any] = []

    async def fork_ready() -> None:
        forked.append(slot.cgroup)

    monkeypatch.setattr(slot, "_fork_ready", fork_ready)
    await slot._idle_work()
    assert (last.events, forked) == (["remove"], [None])


async def test_supervise_runs_the_job_in_the_child_forked_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    slot = Slot(0, FULL)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ready = sandbox._Ready(mine, *os.pipe(), 42)  # type: ignore[call-arg]
    seen: list[Any] = []

    async def take() -> sandbox._Ready:
        return ready

    async def inner(given: sandbox._Ready, code: str, limits: Limits, arm_mb: int) -> RawOutcome:
        seen.append((given, code, limits, arm_mb))
        return DONE

    monkeypatch.setattr(slot, "_take_ready", take)
    monkeypatch.setattr(slot, "_supervise_in", inner)
    assert await slot._supervise("a", LIMITS, 160) is DONE
    assert seen == [(ready, "a", LIMITS, 160)]
    ready.close()
    theirs.close()


# ---- starting the template (its process faked) -------------------------------------------------


def fake_template(monkeypatch: pytest.MonkeyPatch, ready: dict[str, Any] | None) -> list[Any]:
    """Replaces the template process: answers `ready` on the control socket it was given."""
    calls: list[Any] = []

    async def spawn(*cmd: str, **kwargs: Any) -> LiveProc:
        calls.append((cmd, kwargs))
        fds = kwargs["pass_fds"]
        calls.append([os.readlink(f"/proc/self/fd/{fd}") for fd in fds[1:]])
        theirs = socket.socket(fileno=os.dup(fds[0]))
        assert theirs.type == socket.SOCK_SEQPACKET and theirs.family == socket.AF_UNIX
        if len(fds) > 1:
            calls.append(os.read(fds[1], 100))  # the job filter, read from its start
        if ready is not None:
            theirs.send(json.dumps(ready).encode())
        calls.append(theirs)
        return LiveProc()

    monkeypatch.setattr(sandbox.asyncio, "create_subprocess_exec", spawn)
    monkeypatch.setattr(sandbox.syscall_filter, "job_bpf", lambda: b"job filter")
    monkeypatch.setattr(sandbox, "seccomp_memfd", lambda: os.memfd_create("fake-sandbox-filter", 0))
    return calls


async def test_a_weak_slot_starts_the_zygote_directly(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    calls = fake_template(monkeypatch, {"op": "ready", "torch": True, "torch_version": "2.13.0+cpu",
                                        "cuda_version": "not a version!"})
    slot = Slot(1, WEAK_USER)
    with caplog.at_level(logging.INFO, logger="runner.sandbox"):
        await slot.start()
    (cmd, kwargs), filters, theirs = calls
    assert cmd == (sys.executable, "-I", str(ZYGOTE_SOURCE))
    control = kwargs["pass_fds"][0]
    assert kwargs == {"stdin": asyncio.subprocess.DEVNULL, "stdout": asyncio.subprocess.DEVNULL,
                      "env": slot._env(control, None), "pass_fds": [control], "start_new_session": True}
    assert filters == []
    assert (slot.torch_warm, slot.torch_version, slot.cuda_version) == (True, "2.13.0+cpu", None)
    assert slot._ctl is not None and slot._ctl.getblocking() is False
    assert [r.getMessage() for r in caplog.records] == ["slot 1 (cpu) ready, torch 2.13.0+cpu preloaded: True"]
    with pytest.raises(OSError):
        os.fstat(control)  # the template's end is closed here
    slot._control({"op": "ping"})
    assert json.loads(theirs.recv(100)) == {"op": "ping"}
    theirs.close()
    slot._proc = None
    await slot.close()


async def test_a_full_slot_starts_the_zygote_in_bubblewrap_with_both_filters(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    calls = fake_template(monkeypatch, {"op": "ready"})
    slot = Slot(0, FULL, gpu=H200, disk_mb=8)
    with caplog.at_level(logging.INFO, logger="runner.sandbox"):
        await slot.start()
    (cmd, kwargs), filters, job_filter, theirs = calls
    assert job_filter == b"job filter"
    control, bpf, seccomp = kwargs["pass_fds"]
    assert filters == ["/memfd:torchdrill-job-seccomp (deleted)", "/memfd:fake-sandbox-filter (deleted)"]
    assert kwargs["env"] == {}
    assert cmd[:1] == ("/usr/bin/bwrap",) and cmd[-3:] == (sys.executable, "-I", ZYGOTE_IN_SANDBOX)
    assert cmd[cmd.index("--seccomp") + 1] == str(seccomp)
    assert cmd[cmd.index("--clearenv") - 9:cmd.index("--clearenv")] == (
        "--ro-bind", "/sys", "/sys", "--perms", "0555", "--tmpfs", "/sys/fs", "--remount-ro", "/sys/fs")
    assert cmd[cmd.index("--size") + 1] == str(8 * 1024 * 1024)
    assert "--cap-add" in cmd
    setenv = cmd[cmd.index("--clearenv") + 1:cmd.index("--chdir")]
    assert setenv[::3] == ("--setenv",) * (len(setenv) // 3)
    env = dict(zip(setenv[1::3], setenv[2::3], strict=True))
    assert env == slot._env(control, bpf)
    assert (env["TORCHDRILL_JOB_BPF_FD"], env["TORCHDRILL_CONTROL_FD"], env["CUDA_VISIBLE_DEVICES"]) == (
        str(bpf), str(control), "0")
    assert (slot.torch_warm, slot.torch_version, slot.cuda_version) == (False, None, None)
    assert [r.getMessage() for r in caplog.records] == [
        "slot 0 (cuda:0 (NVIDIA H200)) ready, torch unknown preloaded: False"]
    for fd in (control, bpf, seccomp):
        with pytest.raises(OSError):
            os.fstat(fd)
    theirs.close()
    slot._proc = None
    await slot.close()


async def test_the_start_up_probe_runs_bubblewrap_exactly_as_a_cpu_slot_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_template(monkeypatch, {"op": "ready"})
    slot = Slot(0, FULL, disk_mb=8)
    await slot.start()
    (cmd, kwargs), _, _, theirs = calls
    probed: list[tuple[list[str], dict[str, Any]]] = []

    def run(args: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        probed.append((args, options))
        return subprocess.CompletedProcess(args, 0, b"", b"")

    monkeypatch.setattr(isolation.subprocess, "run", run)
    monkeypatch.setattr(isolation, "seccomp_memfd", lambda: os.memfd_create("fake-sandbox-filter", 0))
    assert isolation._probe_bwrap("/usr/bin/bwrap", True, True) is None
    [(probe, options)] = probed
    assert options["env"] == kwargs["env"] == {} and options["start_new_session"] is True
    cut, probe_cut = cmd.index("--clearenv"), probe.index("--clearenv")

    def without_fds(argv: list[str] | tuple[str, ...]) -> list[str]:
        return [a for i, a in enumerate(argv) if i == 0 or argv[i - 1] != "--seccomp"]

    assert without_fds(probe[:probe_cut]) == without_fds(cmd[:cut])  # the same sandbox
    assert probe[-4:] == [cmd[-3], "-I", "-c", "import os"] and cmd[-3:-1] == (sys.executable, "-I")
    setenv = probe[probe_cut + 1:probe.index("--chdir")]
    probe_env = dict(zip(setenv[1::3], setenv[2::3], strict=True))
    assert probe_env == {k: v for k, v in slot._env(0, None).items() if not k.startswith(
        ("TORCHDRILL_", "CUDA_"))}
    theirs.close()
    slot._proc = None
    await slot.close()


async def test_a_full_level_without_bwrap_starts_the_zygote_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_template(monkeypatch, {"op": "ready", "torch": 1, "torch_version": "2.13.0",
                                        "cuda_version": "12.8"})
    slot = Slot(0, Isolation(Level.FULL, None, True))
    await slot.start()
    (cmd, kwargs), _, theirs = calls
    assert cmd == (sys.executable, "-I", str(ZYGOTE_SOURCE))
    assert kwargs["env"]["TORCHDRILL_NAMESPACED"] == "1"
    assert (slot.torch_warm, slot.torch_version, slot.cuda_version) == (True, "2.13.0", "12.8")
    theirs.close()
    slot._proc = None
    await slot.close()


async def test_a_template_that_is_not_ready_is_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_template(monkeypatch, {"op": "error"})
    slot = Slot(0, WEAK_USER)
    with pytest.raises(SandboxCrashed) as error:
        await slot.start()
    assert str(error.value) == "template said 'error' instead of ready"
    calls[-1].close()
    slot._proc = None
    await slot.close()


async def test_a_bwrap_slot_without_seccomp_passes_no_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_template(monkeypatch, {"op": "ready"})
    slot = Slot(0, BWRAP_USER)
    await slot.start()
    (cmd, kwargs), filters, theirs = calls
    assert filters == [] and "--seccomp" not in cmd and "--unshare-user" in cmd
    assert len(kwargs["pass_fds"]) == 1 and kwargs["env"] == {}
    theirs.close()
    slot._proc = None
    await slot.close()


# ---- one job, end to end, against a fake template ----------------------------------------------


class Template:
    """The template's end of the control socket, and the job child it 'forks'."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.fork: dict[str, Any] = {}
        self.header: dict[str, Any] = {}
        self.code: bytes | None = None
        self.watch: dict[str, Any] | None = None
        self.seen: list[dict[str, Any]] = []
        self.job: socket.socket | None = None
        self.out = self.err = -1

    def reply(self, message: dict[str, Any]) -> None:
        self.sock.send(json.dumps({"job": self.fork["job"], **message}).encode())

    async def next_message(self) -> dict[str, Any]:
        await readable(self.sock)
        message: dict[str, Any] = json.loads(self.sock.recv(65536))
        self.seen.append(message)
        return message

    async def forked(self) -> None:
        await readable(self.sock)
        data, fds, _, _ = socket.recv_fds(self.sock, 65536, 3)
        self.fork = json.loads(data)
        self.job = socket.socket(fileno=fds[0])
        assert self.job.type == socket.SOCK_SEQPACKET
        self.out, self.err = fds[1], fds[2]
        self.reply({"op": "forked"})

    async def hello(self) -> None:
        """Say hello as a child does, then wait (as the slot's idle child) for a job."""
        assert self.job is not None
        self.job.send(b"hi")
        await readable(self.job)
        self.header = json.loads(self.job.recv(65536))
        await readable(self.job)
        self.code = self.job.recv(65536)
        if not self.fork["cgroup"]:  # sent before the code: the watchdog's memory limit
            self.watch = json.loads(self.sock.recv(65536))

    def finish(self) -> None:
        assert self.job is not None
        self.job.close()
        os.close(self.out)
        os.close(self.err)


async def job_against(slot: Slot, limits: Limits,
                      child: Callable[[Template], Awaitable[None]]) -> tuple[RawOutcome, Template]:
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mine.setblocking(False)
    theirs.setblocking(False)
    slot._ctl = mine
    slot._proc = LiveProc()  # type: ignore[assignment]
    template = Template(theirs)

    async def serve() -> None:
        await template.forked()
        await child(template)

    task = asyncio.ensure_future(serve())
    try:
        result = await asyncio.wait_for(slot.run("job-1", "print('hi')", limits), 10)
        await asyncio.wait_for(task, 10)
    finally:
        task.cancel()
        theirs.close()
        slot._proc = None
        await slot.close()
    return result, template


async def test_a_job_runs_through_the_template_protocol() -> None:
    slot = Slot(0, FULL, gpu=H200)
    forks: list[dict[str, Any]] = []

    async def child(t: Template) -> None:
        forks.append(t.fork)
        await t.hello()
        os.write(t.out, b"hello\n")
        os.write(t.err, b"warning\n")
        assert t.job is not None
        t.job.send(b"gpu_max_allocated_bytes=2048")
        t.finish()
        t.reply({"op": "exit", "status": 256, "maxrss_kb": 777})
        await t.forked()  # the next job's child is asked for at once, with no job waiting
        forks.append(t.fork)

    result, template = await job_against(slot, LIMITS, child)
    assert forks == [{**slot._fork_request(), "job": 1}, {**slot._fork_request(), "job": 2}]
    # the limits and the code's size go to the child, then the code
    assert template.header == {**slot._job_request(LIMITS), "code_bytes": len("print('hi')")}
    assert template.code == b"print('hi')"
    assert template.watch == {"op": "watch", "job": 1, "kb": 300 * 1024}  # no cgroup: the watchdog's
    assert (result.exit_code, result.killed, result.stdout, result.stderr, result.output_over_cap) == (
        1, None, b"hello\n", b"warning\n", False)
    assert (result.peak_rss_kb, result.gpu_max_allocated_bytes, result.kernel_limits) == (777, 2048, False)
    assert 0 < result.duration_s < 5
    assert template.seen == []  # per-job scratch: nothing to clean
    assert (slot.busy, slot._job) == (False, None)


async def test_a_shared_scratch_is_cleaned_after_the_job() -> None:
    slot = Slot(2, WEAK_USER)

    async def child(t: Template) -> None:
        await t.hello()
        t.finish()
        t.reply({"op": "exit", "status": 0})
        assert await t.next_message() == {"op": "clean", "dirs": slot._dirs_to_clean()}
        t.reply({"op": "cleaned"})

    result, template = await job_against(slot, LIMITS, child)
    assert (result.exit_code, result.stdout, result.peak_rss_kb) == (0, b"", None)
    assert [m["op"] for m in template.seen] == ["clean"]


async def test_a_job_past_its_wall_time_is_killed() -> None:
    slot = Slot(0, FULL)
    limits = Limits(timeout_s=0.05, output_cap_bytes=100)

    async def child(t: Template) -> None:
        await t.hello()
        os.write(t.out, b"working")
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()
        t.reply({"op": "exit", "status": 9, "maxrss_kb": 5})

    result, _ = await job_against(slot, limits, child)
    assert (result.exit_code, result.killed, result.stdout) == (-9, "timeout", b"working")
    assert 0.05 <= result.duration_s < 0.9


async def test_output_over_the_cap_stops_the_job() -> None:
    slot = Slot(0, FULL)
    limits = Limits(timeout_s=5.0, output_cap_bytes=10)

    async def child(t: Template) -> None:
        await t.hello()
        os.write(t.out, b"0123456789abcdef")
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()
        t.reply({"op": "exit", "status": 9})

    result, _ = await job_against(slot, limits, child)
    assert (result.killed, result.stdout, result.output_over_cap) == ("output", b"0123456789", True)


async def test_a_cancelled_job_is_killed_and_reported_cancelled() -> None:
    slot = Slot(0, FULL)

    async def child(t: Template) -> None:
        await t.hello()
        await slot.cancel()
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()
        t.reply({"op": "exit", "status": 9})

    result, _ = await job_against(slot, LIMITS, child)
    assert (result.killed, result.exit_code) == ("cancelled", -9)


async def test_a_job_cancelled_while_its_child_is_being_forked_is_cancelled() -> None:
    slot = Slot(0, FULL)

    async def child(t: Template) -> None:
        await slot.cancel()  # the slot has the job, its child has not said hello yet
        await t.hello()
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()
        t.reply({"op": "exit", "status": 9})

    result, _ = await job_against(slot, LIMITS, child)
    assert (result.killed, result.exit_code) == ("cancelled", -9)
    assert slot._cancelled is False  # the next job starts clean


async def test_a_child_that_dies_before_hello_gets_no_code() -> None:
    slot = Slot(0, FULL)

    async def child(t: Template) -> None:
        t.finish()
        t.reply({"op": "exit", "status": 11})

    result, template = await job_against(slot, LIMITS, child)
    assert (template.code, result.exit_code, result.killed) == (None, -11, None)


async def test_the_job_joins_its_cgroup_and_the_cgroup_is_emptied(monkeypatch: pytest.MonkeyPatch) -> None:
    slot = Slot(0, FULL, cgroups=MECHANISM)
    cgroup = FakeCgroup(oom=1, peak=8192 * 1024)

    def new_cgroup() -> FakeCgroup:
        slot.cgroup = cgroup if not cgroup.events else FakeCgroup()  # type: ignore[assignment]
        return slot.cgroup  # type: ignore[return-value]

    monkeypatch.setattr(slot, "_new_cgroup", new_cgroup)

    async def child(t: Template) -> None:
        await t.hello()
        t.finish()
        t.reply({"op": "exit", "status": 9})

    result, template = await job_against(slot, LIMITS, child)
    # joined while idle, the job's limits when it came, emptied after, removed before the next
    assert cgroup.events == [("add", os.getpid()), ("limits", 300, 64), "kill_all", "remove"]
    assert (result.killed, result.peak_rss_kb, result.kernel_limits) == ("memory", 8192, True)
    assert template.fork["cgroup"] is True


async def test_processes_that_will_not_die_lose_the_template(monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    slot = Slot(0, FULL, cgroups=MECHANISM)
    cgroup = FakeCgroup(dies=False)

    def new_cgroup() -> FakeCgroup:
        slot.cgroup = cgroup  # type: ignore[assignment]
        return cgroup

    async def no_restart() -> bool:
        return False

    monkeypatch.setattr(slot, "_new_cgroup", new_cgroup)
    monkeypatch.setattr(slot, "_restart", no_restart)

    async def child(t: Template) -> None:
        await t.hello()
        t.finish()
        t.reply({"op": "exit", "status": 0})

    with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
        result, _ = await job_against(slot, LIMITS, child)
    assert result == sandbox._crashed(False)
    assert cgroup.events[-1] == "remove"
    assert [r.getMessage() for r in caplog.records] == [
        "slot 0: sandbox lost during job job-1: the job's processes would not die"]


async def test_the_kernels_oom_event_stops_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    slot = Slot(0, FULL, cgroups=MECHANISM)
    cgroup = FakeCgroup()
    efd = os.eventfd(0, os.EFD_NONBLOCK)

    def new_cgroup() -> FakeCgroup:
        slot.cgroup = cgroup  # type: ignore[assignment]
        slot._oom_fd = efd if not cgroup.events else None  # the next child's: no event
        return cgroup

    monkeypatch.setattr(slot, "_new_cgroup", new_cgroup)

    async def child(t: Template) -> None:
        await t.hello()
        os.eventfd_write(efd, 1)
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()
        t.reply({"op": "exit", "status": 9})

    result, _ = await job_against(slot, Limits(timeout_s=5.0), child)
    assert (result.killed, result.exit_code) == ("memory", -9)
    assert slot._oom_fd is None
    with pytest.raises(OSError):
        os.fstat(efd)


async def test_a_template_that_ignores_the_kill_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "REPLY_TIMEOUT_S", 0.05)
    slot = Slot(0, FULL)

    async def no_restart() -> bool:
        return False

    monkeypatch.setattr(slot, "_restart", no_restart)

    async def child(t: Template) -> None:
        await t.hello()
        assert await t.next_message() == {"op": "kill", "job": 1}
        t.finish()

    result, _ = await job_against(slot, Limits(timeout_s=0.05), child)
    assert result == sandbox._crashed(False)
    current = asyncio.current_task()
    await asyncio.sleep(0)
    assert [t for t in asyncio.all_tasks() if t is not current and not t.done()] == []
