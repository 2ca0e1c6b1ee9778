"""Hostile snippets against a real sandbox slot: each limit fails safely with a clear
message, and the same slot then serves the next job.

One warm slot is shared by the whole module, on purpose: every attack is followed by a
normal job on the slot it just attacked.
"""

from __future__ import annotations

import ast
import asyncio
import logging
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from runner import isolation
from runner.embedded import EmbeddedRunner
from runner.isolation import Level, detect
from runner.jobs import Device, JobRejected, JobRequest, JobResult, JobState, Limits
from runner.pool import LocalPool
from runner.sandbox import Gpu, readable
from runner.settings import RunnerSettings

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.not_for_mutation]
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
FULL = detect().level is Level.FULL
needs_namespaces = pytest.mark.skipif(
    not FULL and not REQUIRE, reason=f"needs bubblewrap: {detect().problem}")
SECRET = "sekrit-token-do-not-leak-4242"
REPO = Path(__file__).resolve().parents[2]
LIMITS = Limits(timeout_s=4, cpu_time_s=10, memory_mb=256, max_procs=32, file_size_mb=8,
                output_cap_bytes=200_000, display_chars=500)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LocalPool]:
    # secrets the bot process holds; the sandbox must never see them
    saved = {k: os.environ.get(k) for k in ("DISCORD_TOKEN", "DATABASE_URL")}
    os.environ["DISCORD_TOKEN"] = SECRET
    os.environ["DATABASE_URL"] = f"postgresql://bot:{SECRET}@db/prod"
    conf = RunnerSettings(cpu_slots=1, gpus=[], disk_mb=32, allow_weak_isolation=not FULL)
    slots = LocalPool(conf, gpus=[])
    await slots.start()
    yield slots
    await slots.close()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


async def run(pool: LocalPool, code: str, limits: Limits = LIMITS) -> JobResult:
    picked = pool.claim(Device.CPU)
    assert picked is not None, "the slot is still busy with a previous attack"
    slot, note = picked
    request = JobRequest(code=textwrap.dedent(code), requester="t:attacker", reply_to={})
    return await pool.execute("attack", request, slot, note, limits)


async def still_serves(pool: LocalPool) -> None:
    result = await run(pool, "import torch\nprint(torch.ones(2).sum().item())")
    assert (result.state, result.stdout) == (JobState.DONE, "2.0\n"), result


async def next_child(pool: LocalPool) -> tuple[int, int]:
    """Wait (bounded) until the idle slot has forked the next job's child: (its job number,
    its host pid)."""
    slot = pool.slots[0]
    if slot._preparing is not None:
        await asyncio.wait_for(asyncio.shield(slot._preparing), 30)
    assert slot._ready is not None and slot._ready.host_pid is not None
    return slot._seq, slot._ready.host_pid


async def test_the_next_jobs_child_waits_forked_and_a_late_kill_misses_it(pool: LocalPool) -> None:
    await still_serves(pool)
    slot = pool.slots[0]
    seq, _ = await next_child(pool)
    slot._control({"op": "kill", "job": seq - 1})  # a kill meant for the job that just ended
    await still_serves(pool)  # ran in that very child: no other was forked for it
    assert (await next_child(pool))[0] == seq + 1


async def test_an_idle_child_that_dies_is_replaced_before_the_job(pool: LocalPool) -> None:
    slot = pool.slots[0]
    _, pid = await next_child(pool)
    os.kill(pid, 9)  # the OOM killer, an operator: not the member's doing
    assert slot._ctl is not None
    await asyncio.wait_for(readable(slot._ctl), 30)  # the template has reported its exit
    await still_serves(pool)


async def test_fork_bomb(pool: LocalPool) -> None:
    result = await run(pool, """
        import os
        while True:
            os.fork()
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "process limit 32 reached (fork/threads)"
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


MEMORY_KILLED = "killed: memory limit 256 MB exceeded"


async def test_memory_bomb_in_one_process(pool: LocalPool) -> None:
    result = await run(pool, "x = bytearray(4 * 1024**3)")
    assert result.state is JobState.FAILED
    assert result.error_message == MEMORY_KILLED
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


async def test_torch_memory_bomb(pool: LocalPool) -> None:
    result = await run(pool, """
        import torch
        keep = [torch.ones(16 * 2**20) for _ in range(100)]  # 64 MB each
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == MEMORY_KILLED
    await still_serves(pool)


async def test_memory_spread_over_processes_is_caught(pool: LocalPool) -> None:
    result = await run(pool, """
        import os, time
        for _ in range(4):
            if os.fork() == 0:
                x = b"x" * (150 * 2**20)  # each process stays under its own address cap
                time.sleep(30)
        time.sleep(30)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == MEMORY_KILLED
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


async def test_infinite_loop_hits_wall_time(pool: LocalPool) -> None:
    result = await run(pool, "while True:\n    pass")
    assert result.state is JobState.TIMEOUT
    assert result.error_message == "killed: wall-time limit 4 s"
    assert LIMITS.timeout_s <= result.duration_s < LIMITS.timeout_s + 2
    await still_serves(pool)


async def test_cpu_time_limit(pool: LocalPool) -> None:
    limits = Limits(**{**LIMITS.to_dict(), "cpu_time_s": 1, "timeout_s": 10})
    result = await run(pool, "while True:\n    pass", limits)
    assert result.state is JobState.TIMEOUT
    assert result.error_message == "killed: CPU-time limit 1 s"
    assert result.duration_s < 5
    await still_serves(pool)


async def test_output_flood_is_capped_and_kept_as_attachment(pool: LocalPool) -> None:
    result = await run(pool, "while True:\n    print('x' * 999)")
    assert result.state is JobState.FAILED
    assert result.error_message.startswith("killed: output limit 200000 bytes exceeded")
    assert result.output_truncated
    assert "truncated" in result.stdout and len(result.stdout) < 700
    assert result.full_output is not None
    assert 100_000 < len(result.full_output) < 300_000
    await still_serves(pool)


async def test_large_file_hits_file_size_limit(pool: LocalPool) -> None:
    # with per-job tmpfs the kernel caps the scratch space itself (RLIMIT_FSIZE would also
    # cap shared memory); without it, the file-size limit stands in
    result = await run(pool, """
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"0" * 2**20)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == ("disk limit: the job's temporary space is full" if FULL
                                    else "killed: file size limit 8 MB exceeded")
    await still_serves(pool)


@needs_namespaces
async def test_disk_fill_hits_the_private_tmp_size(pool: LocalPool) -> None:
    result = await run(pool, """
        for i in range(100):
            with open(f"part{i}.bin", "wb") as f:
                f.write(b"0" * (6 * 2**20))
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "disk limit: the job's temporary space is full"
    # the next job starts with a clean directory: only its own script, as `python snippet.py`
    clean = await run(pool, "import os\nprint(os.listdir('.'))")
    assert clean.stdout == "['snippet.py']\n"


@needs_namespaces
async def test_no_network_to_localhost(pool: LocalPool) -> None:
    # Redis really listens on the host's 127.0.0.1:6379; the sandbox has its own loopback
    result = await run(pool, """
        import socket
        socket.create_connection(("127.0.0.1", 6379), timeout=2)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "no network access: snippets run without a network"
    await still_serves(pool)


@needs_namespaces
async def test_no_network_to_the_outside(pool: LocalPool) -> None:
    result = await run(pool, """
        import socket
        socket.create_connection(("1.1.1.1", 443), timeout=2)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "no network access: snippets run without a network"
    assert "Network is unreachable" in result.stderr
    await still_serves(pool)


@needs_namespaces
async def test_secrets_are_not_in_the_environment_or_in_proc(pool: LocalPool) -> None:
    result = await run(pool, """
        import os
        print(dict(os.environ))
        for pid in ["self", str(os.getppid()), "1"] + [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                print(pid, open(f"/proc/{pid}/environ", "rb").read())
            except OSError as exc:
                print(pid, "denied:", exc.strerror)
    """)
    assert result.state is JobState.DONE, result
    assert SECRET not in result.stdout and SECRET not in (result.full_output or b"").decode()
    assert "DISCORD_TOKEN" not in result.stdout and "DATABASE_URL" not in result.stdout
    assert "denied" in result.stdout  # the zygote's environ is not readable by the job
    await still_serves(pool)


@needs_namespaces
async def test_bot_files_are_not_readable(pool: LocalPool) -> None:
    targets = [REPO / "pyproject.toml", REPO / "bot" / "config.py", REPO / ".env",
               Path("/etc/shadow"), Path("/root/.bash_history")]
    result = await run(pool, f"""
        for path in {[str(t) for t in targets]!r}:
            try:
                print("READ", path, open(path).read()[:40])
            except OSError as exc:
                print("DENIED", path, exc.strerror)
    """)
    assert result.state is JobState.DONE, result
    assert "READ" not in result.stdout
    assert result.stdout.count("DENIED") == len(targets)
    await still_serves(pool)


@needs_namespaces
async def test_cannot_write_outside_the_scratch_space(pool: LocalPool) -> None:
    result = await run(pool, """
        import os, sys
        for path in ["/usr/escape", "/escape", "/opt/escape", "/etc/escape",
                     os.path.join(sys.prefix, "escape")]:
            try:
                open(path, "w").write("x")
                print("WROTE", path)
            except OSError as exc:
                print("DENIED", path, exc.strerror)
        open("inside.txt", "w").write("fine")
        print("inside ok", os.getcwd())
    """)
    assert result.state is JobState.DONE, result
    assert "WROTE" not in result.stdout
    assert result.stdout.count("DENIED") == 5
    assert "inside ok" in result.stdout
    await still_serves(pool)


@needs_namespaces
async def test_killing_the_parent_fails_and_the_slot_survives(pool: LocalPool) -> None:
    zygote = pool.slots[0]._proc
    assert zygote is not None
    result = await run(pool, """
        import os, signal
        print("parent outside the namespace:", os.getppid() == 0)  # the template: not visible
        targets = [1] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
        for pid in targets:
            if pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGKILL)
                    print("KILLED", pid)
                except OSError as exc:
                    print("DENIED", pid, exc.strerror)
        os.kill(-1, signal.SIGKILL)
        print("still here")
    """)
    assert "KILLED" not in result.stdout
    assert result.stdout.startswith("parent outside the namespace: True\nDENIED 1 ")
    assert result.stdout.endswith("still here\n")
    assert pool.slots[0]._proc is zygote and zygote.returncode is None  # not even restarted
    await still_serves(pool)


@needs_namespaces
async def test_children_do_not_outlive_their_job(pool: LocalPool) -> None:
    result = await run(pool, """
        import os, subprocess, time
        subprocess.Popen(["sleep", "600"], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    print("still alive", flush=True)
                    time.sleep(0.1)
            os._exit(0)
        time.sleep(0.3)
        print("parent done")
    """)
    assert result.state is JobState.DONE, result
    assert result.duration_s < 2  # the daemon's open stdout did not keep the job waiting
    survivors = await run(pool, """
        import os
        me = os.getuid()
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()
                  and os.stat(f"/proc/{p}").st_uid == me]
        print(others)
    """)
    assert survivors.stdout == "[]\n", survivors


# --- issue 12: residue, IPC, unseen memory, metadata, poisoned slot, verdicts, hardening ---

SCAN = """
import ctypes, hashlib, re
target = {digest!r}
found = 0
pattern = re.compile(rb"RESIDUE-[0-9a-f]{{24}}")
regions = []
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split()
        name = fields[5] if len(fields) > 5 else ""
        if not fields[1].startswith("r") or name not in ("", "[heap]", "[stack]"):
            continue  # file-backed code and data cannot hold a previous job's values
        regions.append([int(x, 16) for x in fields[0].split("-")])
for start, end in regions:
    chunk = ctypes.string_at(start, end - start)
    for m in pattern.finditer(chunk):
        found += hashlib.sha256(m.group()).hexdigest() == target
    del chunk
print("found", found)
"""


@needs_namespaces
async def test_no_residue_of_the_previous_members_job_in_memory(pool: LocalPool) -> None:
    import hashlib
    import secrets

    marker = f"RESIDUE-{secrets.token_hex(12)}"
    digest = hashlib.sha256(marker.encode()).hexdigest()
    # job A holds the marker in its code and its output, and can find it in its own memory
    first = await run(pool, f"secret = {marker!r}\nprint(secret)\n" + SCAN.format(digest=digest))
    assert first.state is JobState.DONE, first
    assert first.stdout.startswith(marker) and "found 0" not in first.stdout
    # job B, another member's, scans all of its readable memory for it
    second = await run(pool, SCAN.format(digest=digest))
    assert (second.state, second.stdout) == (JobState.DONE, "found 0\n"), second
    assert second.duration_s < LIMITS.timeout_s


IPC_MAKE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
IPC_CREAT = 0o1000
print("msg", libc.msgget(0x7d12, IPC_CREAT | 0o666) >= 0)
print("shm", libc.shmget(0x7d12, 4096, IPC_CREAT | 0o666) >= 0)
print("sem", libc.semget(0x7d12, 1, IPC_CREAT | 0o666) >= 0)
print("mq", rt.mq_open(b"/torchdrill-leak", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0)
"""
IPC_FIND = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
print("msg", libc.msgget(0x7d12, 0) >= 0)
print("shm", libc.shmget(0x7d12, 0, 0) >= 0)
print("sem", libc.semget(0x7d12, 0, 0) >= 0)
print("mq", rt.mq_open(b"/torchdrill-leak", os.O_RDWR, 0, None) >= 0)
print(sorted(open("/proc/sysvipc/" + k).read().count("\\n") - 1 for k in ("msg", "shm", "sem")))
"""


@needs_namespaces
async def test_ipc_objects_do_not_reach_the_next_job(pool: LocalPool) -> None:
    made = await run(pool, IPC_MAKE)
    assert made.stdout.split() == ["msg", "True", "shm", "True", "sem", "True", "mq", "True"]
    seen = await run(pool, IPC_FIND)
    assert seen.state is JobState.DONE, seen
    assert seen.stdout.split("\n")[:4] == ["msg False", "shm False", "sem False", "mq False"]
    assert "[0, 0, 0]" in seen.stdout


def host_shmem_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def shmem_back_to(before: float, slack_mb: float = 100) -> float:
    """Host shmem growth once the kernel has torn the job's IPC namespace down (async)."""
    async with asyncio.timeout(5):
        while (grown := host_shmem_mb() - before) >= slack_mb:
            await asyncio.sleep(0.05)
    return grown


@needs_namespaces
async def test_memfd_pages_count_against_the_memory_limit(pool: LocalPool) -> None:
    before = host_shmem_mb()
    limits = Limits(**{**LIMITS.to_dict(), "file_size_mb": 32})
    result = await run(pool, """
        import os
        fds = [os.memfd_create(f"m{i}") for i in range(40)]
        for fd in fds:
            for _ in range(15):
                os.write(fd, b"x" * 2**20)
        print("wrote 600 MB of memfd")
    """, limits)
    assert result.state is JobState.FAILED
    assert result.error_message == MEMORY_KILLED
    assert "wrote 600" not in result.stdout
    assert await shmem_back_to(before) < 100  # nothing is left behind in host shmem
    await still_serves(pool)


@needs_namespaces
async def test_sysv_shm_counts_and_does_not_outlive_the_job(pool: LocalPool) -> None:
    before = host_shmem_mb()
    result = await run(pool, """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        for i in range(6):  # 6 x 50 MB, each attached, filled and detached
            sid = libc.shmget(0x5000 + i, 50 * 2**20, 0o1000 | 0o600)
            addr = libc.shmat(sid, None, 0)
            ctypes.memset(addr, 1, 50 * 2**20)
            libc.shmdt(ctypes.c_void_p(addr))
        print("left 300 MB in SysV shm")
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == MEMORY_KILLED
    assert await shmem_back_to(before) < 100  # the segments died with the job
    nxt = await run(pool, "print(open('/proc/sysvipc/shm').read().count(chr(10)) - 1)")
    assert (nxt.state, nxt.stdout) == (JobState.DONE, "0\n"), nxt
    assert nxt.peak_rss_mb is not None and nxt.peak_rss_mb < 100  # none of it counted here


@needs_namespaces
async def test_tmpfs_pages_count_against_the_memory_limit(pool: LocalPool) -> None:
    limits = Limits(**{**LIMITS.to_dict(), "file_size_mb": 64})
    result = await run(pool, """
        for i in range(20):  # /dev/shm is a tmpfs: 20 x 32 MB of pages in memory
            with open(f"/dev/shm/part{i}", "wb") as f:
                for _ in range(32):
                    f.write(b"y" * 2**20)
        print("filled /dev/shm")
    """, limits)
    assert result.state is JobState.FAILED
    assert result.error_message in (MEMORY_KILLED, "disk limit: the job's temporary space is full")
    assert "filled" not in result.stdout
    await still_serves(pool)


@needs_namespaces
async def test_no_user_namespace_mount_or_unshare(pool: LocalPool) -> None:
    result = await run(pool, """
        import ctypes, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        done = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, text=True)
        print("unshare -Urm:", done.returncode != 0)
        for name, flags in (("user", 0x10000000), ("mount", 0x00020000), ("ipc", 0x08000000),
                            ("net", 0x40000000), ("pid", 0x20000000)):
            print(name, libc.unshare(flags), ctypes.get_errno())
        print("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
    """)
    assert result.state is JobState.DONE, result
    lines = result.stdout.splitlines()
    assert lines[0] == "unshare -Urm: True"
    assert lines[1:] == [f"{n} -1 1" for n in ("user", "mount", "ipc", "net", "pid", "mount")]


@needs_namespaces
async def test_seccomp_and_capabilities_are_in_force(pool: LocalPool) -> None:
    result = await run(pool, """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
        print("Seccomp", status["Seccomp"].strip(), "filters", status["Seccomp_filters"].strip())
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            print(cap, int(status[cap], 16))
        for name, number, args in (("ptrace", 101, (16, 1, 0, 0)),  # PTRACE_ATTACH to pid 1
                                   ("io_uring_setup", 425, (8, 0)),
                                   ("process_vm_readv", 310, (1, 0, 0, 0, 0, 0)),
                                   ("bpf", 321, (0, 0, 0)), ("perf_event_open", 298, (0, 0, -1, -1, 0)),
                                   ("keyctl", 250, (0, 0)), ("userfaultfd", 323, (0,))):
            r = libc.syscall(number, *args)
            print(name, r, ctypes.get_errno())
    """)
    assert result.state is JobState.DONE, result
    lines = result.stdout.splitlines()
    assert lines[0] == "Seccomp 2 filters 2"  # bwrap's, then the stricter per-job one
    assert lines[1:6] == [f"{c} 0" for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]
    assert lines[6:] == [f"{n} -1 1" for n in ("ptrace", "io_uring_setup", "process_vm_readv",
                                                  "bpf", "perf_event_open", "keyctl",
                                                  "userfaultfd")]


@needs_namespaces
async def test_metadata_channel_is_bounded_and_cannot_be_spoofed(pool: LocalPool) -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await run(pool, """
        import os
        os.write(3, b"gpu_max_allocated_bytes=5")
        try:
            os.write(3, b"{" + b"x" * 2**22 + b"}")  # one message far over any buffer
        except OSError as exc:
            print("refused:", exc.strerror)
        os.set_blocking(3, False)
        sent = 0
        try:
            while sent < 400 * 2**20:
                sent += os.write(3, b"9" * 2**16)
        except BlockingIOError:
            pass
        print("stopped after", sent < 400 * 2**20)
    """)
    assert (result.state, result.stdout) == (
        JobState.DONE, "refused: Message too long\nstopped after True\n"), result
    assert result.gpu_max_allocated_mb is None  # a CPU slot reports no GPU figure at all
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50
    assert result.duration_s < 2
    await still_serves(pool)


@needs_namespaces
async def test_a_deep_directory_tree_does_not_poison_the_slot(pool: LocalPool) -> None:
    result = await run(pool, """
        import os
        for i in range(1200):
            os.mkdir("d")
            os.chdir("d")
        print("deep")
    """)
    assert (result.state, result.stdout) == (JobState.DONE, "deep\n"), result
    clean = await run(pool, "import os\nprint(os.listdir('.'), sorted(os.listdir('/tmp')))")
    # the interpreter is bound read-only at its own path; a checkout under /tmp shows its top folder
    install = Path(sys.prefix).resolve().parts
    shown = sorted(["job", *([install[2]] if install[1:2] == ("tmp",) else [])])
    assert clean.stdout == f"['snippet.py'] {shown}\n", clean  # its own script only
    await still_serves(pool)


async def test_a_protocol_error_during_a_job_restarts_the_template_with_a_true_message(
        pool: LocalPool) -> None:
    slot = pool.slots[0]
    old = slot._proc
    job = asyncio.ensure_future(run(pool, "import time\ntime.sleep(3)\nprint('unlucky')"))
    deadline = asyncio.get_running_loop().time() + 30
    while slot._job is None:  # the job has its child: its code is on the way
        assert asyncio.get_running_loop().time() < deadline and not job.done(), "it never started"
        await asyncio.sleep(0.01)
    slot._control({"op": "no-such-op"})  # the template answers with an error, not "exit"
    result = await asyncio.wait_for(job, 30)
    assert result.state is JobState.FAILED
    assert result.error_message == ("the sandbox stopped during this job; it has been "
                                    "restarted, other jobs are unaffected")
    assert result.stderr == "" and "Traceback" not in result.stdout
    assert slot._proc is not old and slot._proc is not None
    await still_serves(pool)


async def test_a_protocol_error_while_idle_restarts_the_template_before_the_next_job(
        pool: LocalPool, caplog: pytest.LogCaptureFixture) -> None:
    slot = pool.slots[0]
    await next_child(pool)
    old = slot._proc
    slot._control({"op": "no-such-op"})
    assert slot._ctl is not None
    await asyncio.wait_for(readable(slot._ctl), 30)  # its error is in before the job comes
    with caplog.at_level(logging.WARNING, logger="runner.sandbox"):
        result = await run(pool, "print('lucky')")
    assert (result.state, result.stdout) == (JobState.DONE, "lucky\n"), result  # nothing lost
    assert slot._proc is not old and slot._proc is not None
    assert [r.getMessage() for r in caplog.records] == [
        "slot 0: the next job's child was lost (template replied 'error', expected 'exit'); "
        "restarting"]


async def test_scratch_files_do_not_reach_the_next_job(pool: LocalPool) -> None:
    first = await run(pool, """
        open("/tmp/left-behind", "w").write("x")
        open("/dev/shm/left-behind", "w").write("x")
        open("here.txt", "w").write("x")
        print("wrote")
    """)
    assert (first.state, first.stdout) == (JobState.DONE, "wrote\n"), first
    second = await run(pool, """
        import os
        print([p for p in ("/tmp/left-behind", "/dev/shm/left-behind", "here.txt")
               if os.path.exists(p)])
    """)
    assert second.stdout == "[]\n", second


async def test_dataloader_workers_and_a_process_pool_work(pool: LocalPool) -> None:
    result = await run(pool, """
        import multiprocessing
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=4, num_workers=2)
        print(sum(batch[0].sum().item() for batch in loader))
        with multiprocessing.Pool(2) as workers:
            print(workers.map(abs, [-1, -2, 3]))
    """)
    assert (result.state, result.stdout) == (JobState.DONE, "120.0\n[1, 2, 3]\n"), result
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


async def test_memory_verdicts_hold_on_a_loaded_machine(pool: LocalPool) -> None:
    import subprocess
    import sys

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        threads = await run(pool, """
            import threading, time
            keep = []
            def grab():
                keep.append(b"z" * (40 * 2**20))
                time.sleep(30)
            for _ in range(20):  # threads are fine; their memory is what breaks the limit
                threading.Thread(target=grab, daemon=True).start()
            time.sleep(30)
        """)
        spread = await run(pool, """
            import os, time
            for _ in range(4):
                if os.fork() == 0:
                    x = b"x" * (150 * 2**20)
                    time.sleep(30)
            time.sleep(30)
        """)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert (threads.state, threads.error_message) == (JobState.FAILED, MEMORY_KILLED), threads
    assert (spread.state, spread.error_message) == (JobState.FAILED, MEMORY_KILLED), spread
    await still_serves(pool)


@needs_namespaces
async def test_file_watches_are_refused(pool: LocalPool) -> None:
    # the stdlib and torch are shared read-only: a watch on them names what a concurrent
    # member on another slot imports
    result = await run(pool, """
        import ctypes, fcntl, os
        libc = ctypes.CDLL(None, use_errno=True)
        for name, number, args in (("inotify_init", 253, ()), ("inotify_init1", 294, (0,)),
                                   ("fanotify_init", 300, (0, 0))):
            print(name, libc.syscall(number, *args), ctypes.get_errno())
        fd = os.open(os.path.dirname(os.__file__), os.O_RDONLY)
        try:
            fcntl.fcntl(fd, 1026, 0x80000000 | 1)  # F_NOTIFY: DN_MULTISHOT | DN_ACCESS
        except OSError as exc:
            print("F_NOTIFY", exc.errno)
    """)
    assert result.state is JobState.DONE, result
    assert result.stdout.splitlines() == [
        "inotify_init -1 1", "inotify_init1 -1 1", "fanotify_init -1 1", "F_NOTIFY 1"]


@needs_namespaces
async def test_socket_families_are_an_allow_list(pool: LocalPool) -> None:
    result = await run(pool, """
        import ctypes, socket
        libc = ctypes.CDLL(None, use_errno=True)
        def try_socket(label, family, kind, proto=0):
            try:
                socket.socket(family, kind, proto).close()
                print(label, "ok")
            except OSError as exc:
                print(label, exc.errno)
        try_socket("unix", socket.AF_UNIX, socket.SOCK_STREAM)
        try_socket("inet", socket.AF_INET, socket.SOCK_STREAM)
        try_socket("inet6", socket.AF_INET6, socket.SOCK_DGRAM)
        try_socket("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0)
        try_socket("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9)
        try_socket("netlink-uevent", socket.AF_NETLINK, socket.SOCK_RAW, 15)
        try_socket("vsock", 40, socket.SOCK_STREAM)
        try_socket("packet", socket.AF_PACKET, socket.SOCK_RAW)
        try_socket("bluetooth", 31, socket.SOCK_STREAM)
        try_socket("alg", 38, socket.SOCK_SEQPACKET)
        # the kernel reads the family as an int: garbage in the upper half must not pass
        print("vsock-high", libc.syscall(41, (1 << 32) | 40, 1, 0), ctypes.get_errno())
        pair = (ctypes.c_int * 2)()
        print("socketpair-vsock", libc.socketpair(40, 1, 0, pair), ctypes.get_errno())
        a, b = socket.socketpair()
        print("socketpair-unix", a.family.name)
    """)
    assert result.state is JobState.DONE, result
    assert result.stdout.splitlines() == [
        "unix ok", "inet ok", "inet6 ok", "netlink-route ok", "netlink-audit 97",
        "netlink-uevent 97", "vsock 97", "packet 97", "bluetooth 97", "alg 97",
        "vsock-high -1 97", "socketpair-vsock -1 97", "socketpair-unix AF_UNIX"]


@needs_namespaces
async def test_gloo_process_group_on_loopback_works(pool: LocalPool) -> None:
    # distributed snippets: 2 processes, a TCP store and gloo on 127.0.0.1 inside one job
    limits = Limits(**{**LIMITS.to_dict(), "timeout_s": 30, "memory_mb": 1024})
    result = await run(pool, """
        import os
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def work(rank, world):
            os.environ["MASTER_ADDR"] = "127.0.0.1"
            os.environ["MASTER_PORT"] = "29500"
            dist.init_process_group("gloo", rank=rank, world_size=world)
            total = torch.tensor([rank + 1.0])
            dist.all_reduce(total)
            if rank == 0:
                print("all_reduce", total.item())
            dist.destroy_process_group()

        if __name__ == "__main__":
            mp.start_processes(work, args=(2,), nprocs=2, start_method="fork")
    """, limits)
    assert (result.state, result.stdout) == (JobState.DONE, "all_reduce 3.0\n"), result
    await still_serves(pool)


@needs_namespaces
async def test_a_dataloader_returns_64_mb_batches_under_the_default_limits(pool: LocalPool) -> None:
    # each batch travels through /dev/shm; a 16 MB file-size limit used to kill the workers
    result = await run(pool, """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Big(Dataset):
            def __len__(self):
                return 4
            def __getitem__(self, i):
                return torch.full((16 * 2**20,), float(i))  # 64 MB of float32

        for batch in DataLoader(Big(), batch_size=None, num_workers=2):
            print(batch.numel() * batch.element_size() // 2**20, batch[-1].item())
    """, Limits())
    assert (result.state, result.stdout) == (
        JobState.DONE, "64 0.0\n64 1.0\n64 2.0\n64 3.0\n"), result
    await still_serves(pool)


@needs_namespaces
async def test_a_job_holds_only_its_own_descriptors_and_is_undumpable(pool: LocalPool) -> None:
    result = await run(pool, """
        import ctypes, os, resource
        libc = ctypes.CDLL(None, use_errno=True)
        fds = os.listdir("/proc/self/fd")  # the listing's own descriptor is the last one
        print("fds", sorted(int(fd) for fd in fds)[:-1])
        print("dumpable", libc.prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
        print("core", resource.getrlimit(resource.RLIMIT_CORE))
        print("own proc", open("/proc/self/status").readline().split()[0])
    """)
    assert result.stdout.splitlines() == [
        "fds [0, 1, 2, 3]", "dumpable 0", "core (0, 0)", "own proc Name:"], result


HOG = """
    import os, time
    for _ in range(24):  # each in a session of its own: no process group to aim at
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    time.sleep(60)
"""
VICTIM = """
    import time
    total = 0
    for i in range(6_000_000):
        total += i * i
    print(total % 7, round(time.process_time() * 1000))
"""


def cpu_ms(pids: list[int]) -> float:
    """CPU time (user + system) the host's /proc gives these processes, in ms."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone between the listing and the read
        ticks += int(fields[11]) + int(fields[12])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


@needs_namespaces
async def test_a_busy_member_cannot_push_another_members_job_past_its_wall_limit() -> None:
    """24 busy processes on one slot, an innocent CPU-bound job on the other: the kernel
    gives both jobs the same CPU share, however many processes either runs. Measured as CPU
    time over the same interval, so other load on the host does not blur it."""
    conf = RunnerSettings(cpu_slots=2, gpus=[], disk_mb=32, allow_weak_isolation=not FULL)
    pair = LocalPool(conf, gpus=[])
    await pair.start()
    limits = Limits(**{**LIMITS.to_dict(), "timeout_s": 10, "cpu_time_s": 60})
    try:
        hog_slot = pair.slots[0]
        hog = asyncio.ensure_future(run(pair, HOG, Limits(**{**limits.to_dict(), "timeout_s": 60})))
        deadline = asyncio.get_running_loop().time() + 30
        while hog_slot.cgroup is None or len(hog_slot.cgroup.members()) < 25:
            assert asyncio.get_running_loop().time() < deadline, "the hog never started"
            await asyncio.sleep(0.05)
        hog_pids = hog_slot.cgroup.members()
        hog_before = cpu_ms(hog_pids)
        victim = await run(pair, VICTIM, limits)
        hog_ms = cpu_ms(hog_pids) - hog_before
        assert hog_slot.cgroup is not None and not hog.done()  # they overlapped throughout
        await hog_slot.cancel()
        stopped = await asyncio.wait_for(hog, 30)
        assert stopped.state is JobState.CANCELLED, stopped
    finally:
        await pair.close()
    assert victim.state is JobState.DONE, victim  # not "killed: wall-time limit 10 s"
    remainder, victim_ms = victim.stdout.split()
    assert remainder == "6"
    # an even split gives about 1x; without CPU groups the hog's 24 processes get 24x
    assert hog_ms < 3 * int(victim_ms), (hog_ms, victim_ms)


@pytest.mark.parametrize(("code", "reason"), [
    ("print('\ud800')", "character 8 is not valid text (a lone surrogate)"),
    ("print('a')\x00\nprint('b')", "character 11 is a null byte, which Python code cannot hold"),
], ids=["lone surrogate", "null byte"])
async def test_code_that_is_not_plain_text_is_refused_with_a_reason(
        tmp_path: Path, code: str, reason: str) -> None:
    conf = RunnerSettings(cpu_slots=1, gpus=[], disk_mb=32, allow_weak_isolation=not FULL,
                          journal_path=tmp_path / "journal.sqlite3")
    runner = EmbeddedRunner(conf)
    await runner.start()
    try:
        with pytest.raises(JobRejected) as refused:
            await runner.submit(JobRequest(code, "t:attacker", {}))
        assert refused.value.message == f"code rejected: {reason}; paste the snippet again as plain text"
        submitted = await runner.submit(JobRequest("print('ok')", "t:attacker", {}))
        assert submitted.job_id
    finally:
        await runner.close()


COUNT_OTHERS = """
    import os, re
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    lines = open("/proc/self/cgroup").read().splitlines()
    # the job's own cgroup: the memory hierarchy's line on v1, the one unified line (0::) on v2
    [mine] = [line for line in lines if ":memory:" in line] or [
        line for line in lines if line.startswith("0::")]
    print(os.getpid() in (2, 3), pids, re.sub("[0-9a-f]{16}$", "<random>", mine.strip()))
    print(open("/proc/1/cmdline").read().replace(chr(0), " "))
    print(mine.strip())
"""


@needs_namespaces
async def test_a_job_cannot_count_the_jobs_and_processes_before_it(pool: LocalPool) -> None:
    # a fresh PID namespace per job (PID 1 is the template's reaper, 2 and 3 its sleep and
    # the job, in either order) and random cgroup names: nothing counts what ran before
    first = await run(pool, COUNT_OTHERS)
    busy = await run(pool, """
        import os
        for _ in range(20):
            if os.fork() == 0:
                os._exit(0)
            os.wait()
        print("forked")
    """)
    assert busy.stdout == "forked\n", busy
    second = await run(pool, COUNT_OTHERS)
    shown, again = first.stdout.splitlines(), second.stdout.splitlines()
    assert shown[:2] == again[:2] == [
        "True [1, 2, 3] " + shown[0].rpartition(" ")[2],
        "/bin/sh -c while :; do sleep 2147483647; done "], (first, second)
    assert shown[0].endswith("/job-<random>") and shown[2] != again[2]


@needs_namespaces
async def test_orphans_are_reaped_inside_the_jobs_namespace(pool: LocalPool) -> None:
    result = await run(pool, """
        import os, time
        if os.fork() == 0:
            if os.fork() == 0:  # an orphan as soon as its parent exits
                time.sleep(0.2)
                os._exit(0)
            os._exit(0)
        os.wait()
        deadline = time.monotonic() + 3
        def state(pid):  # a process reaped between listdir and open has no state to show
            try:
                return open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                return None
        while time.monotonic() < deadline:  # the reaper must collect it: no zombie stays
            states = [s for p in os.listdir("/proc") if p.isdigit() and int(p) > 3
                      for s in [state(p)] if s is not None]
            if not states:
                break
            time.sleep(0.05)
        print("left", states)
    """)
    assert (result.state, result.stdout) == (JobState.DONE, "left []\n"), result


LOOK_FROM_A_GPU_SLOT = """
    import glob, os
    print(sorted(os.listdir("/sys/fs")), os.path.exists("/sys/fs/cgroup"))
    print(bool(os.listdir("/sys/bus/pci/devices")), os.path.isdir("/sys/devices/system/cpu"))
    print(sorted(glob.glob("/dev/nvidia*")))
"""


@needs_namespaces
async def test_a_gpu_slot_shows_no_cgroup_tree_and_no_other_gpus_node(tmp_path: Path) -> None:
    # a GPU slot on a host without one: the same bubblewrap command a real GPU slot gets (its
    # own /dev/nvidia<minor> and the shared nodes, where they exist; /sys with /sys/fs covered)
    conf = RunnerSettings(cpu_slots=0, gpus=[0], disk_mb=32, allow_weak_isolation=not FULL)
    gpu_pool = LocalPool(conf, gpus=[Gpu(0, "no such GPU", uuid="GPU-none", minor=7)])
    await gpu_pool.start()
    try:
        picked = gpu_pool.claim(Device.GPU)
        assert picked is not None
        request = JobRequest(code=textwrap.dedent(LOOK_FROM_A_GPU_SLOT), requester="t:attacker",
                             reply_to={})
        result = await gpu_pool.execute("look", request, *picked, LIMITS)
    finally:
        await gpu_pool.close()
    assert result.state is JobState.DONE, result
    shown = result.stdout.splitlines()
    # the host's cgroup tree (every job's cgroup) is gone; the PCI and CPU topology CUDA reads stay
    assert shown[:2] == ["[] False", "True True"], result
    # of the GPU nodes, only its own (absent here) and the shared control nodes of this host
    allowed = {"/dev/nvidia7", *isolation.GPU_SHARED_NODES}
    assert set(ast.literal_eval(shown[2])) <= allowed, result


async def test_a_segfault_is_reported_as_killed_by_sigsegv(pool: LocalPool) -> None:
    result = await run(pool, """
        import ctypes
        print("before", flush=True)
        ctypes.string_at(0)
        print("after")
    """)
    assert (result.state, result.error_message) == (JobState.FAILED, "killed by signal SIGSEGV")
    assert result.stdout == "before\n", result
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


async def test_undecodable_output_shows_replacement_characters(pool: LocalPool) -> None:
    result = await run(pool, r"""
        import os, sys
        os.write(1, b"\xff\xfe\x80 raw\n")
        sys.stdout.reconfigure(errors="surrogateescape")
        print("\udcff escaped", flush=True)
        sys.stdout.reconfigure(errors="surrogatepass")
        print("\ud800 lone", flush=True)
        os.write(2, b"\xc3 err\n")
    """)
    printed = b"\xff\xfe\x80 raw\n\xff escaped\n" + "\ud800 lone\n".encode("utf-8", "surrogatepass")
    assert (result.state, result.error_message) == (JobState.DONE, None), result
    assert result.stdout == printed.decode(errors="replace")
    assert result.stdout.startswith("\ufffd\ufffd\ufffd raw\n\ufffd escaped\n\ufffd")
    assert result.stderr == "\ufffd err\n"
    await still_serves(pool)


@needs_namespaces
async def test_many_small_files_stop_at_the_scratch_limits(pool: LocalPool) -> None:
    before = host_shmem_mb()
    result = await run(pool, """
        import os
        n = 0
        try:
            while True:
                open(f"f{n}", "w").close()
                n += 1
        finally:
            print(n > 1000)
    """)
    # nr_inodes caps them (runner/zygote.py): unbounded, they ran into the wall limit
    assert (result.state, result.error_message, result.stdout) == (
        JobState.FAILED, "disk limit: the job's temporary space is full", "True\n"), result
    assert "No space left on device" in result.stderr
    assert result.duration_s < LIMITS.timeout_s
    await shmem_back_to(before)  # the inodes went with the job's tmpfs
    clean = await run(pool, "import os\nprint(os.listdir('.'))")
    assert clean.stdout == "['snippet.py']\n", clean
    await still_serves(pool)


async def test_open_files_stop_at_the_zygotes_limit(pool: LocalPool) -> None:
    result = await run(pool, """
        import errno, resource
        print(resource.getrlimit(resource.RLIMIT_NOFILE))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
        except ValueError as exc:
            print("raise refused:", exc)
        held = []
        try:
            while True:
                held.append(open("/dev/null"))
        except OSError as exc:
            print(errno.errorcode[exc.errno], len(held) < 256)
    """)
    assert (result.state, result.stdout) == (JobState.DONE, (
        "(256, 256)\nraise refused: not allowed to raise maximum limit\nEMFILE True\n")), result
    await still_serves(pool)


@pytest.mark.parametrize(("how", "verdict"), [
    ("python frames", MEMORY_KILLED),  # 3.11 keeps Python frames on the heap
    # past the 8 MB C stack; from 3.12 a C recursion limit raises RecursionError first
    ("C stack", "killed by signal SIGSEGV" if sys.version_info < (3, 12) else None),
    ("C stack of a thread with a 1 GB stack", MEMORY_KILLED)])  # stack pages are charged
async def test_deep_recursion_is_stopped_within_the_limits(
        pool: LocalPool, how: str, verdict: str | None) -> None:
    result = await run(pool, f"""
        import sys, threading
        sys.setrecursionlimit(10**8)
        def python_frames(n):
            return python_frames(n + 1) + 1
        def c_stack(n):  # each level enters the C eval loop again, from sum and map
            return sum(map(c_stack, [n + 1]))
        if {how!r} == "python frames":
            python_frames(0)
        elif {how!r} == "C stack":
            c_stack(0)
        else:
            threading.stack_size(2**30)
            thread = threading.Thread(target=c_stack, args=(0,))
            thread.start()
            thread.join()
        print("survived")
    """)
    assert (result.state, result.error_message, result.stdout) == (
        JobState.FAILED, verdict, ""), result
    assert result.duration_s < LIMITS.timeout_s
    await still_serves(pool)


@needs_namespaces
async def test_symlinks_planted_in_the_scratch_are_never_followed_by_the_host(
        pool: LocalPool, tmp_path: Path) -> None:
    # Judge0 CVE-2024-28185 / -28189: the root host wrote to and chowned paths in the box
    canary = tmp_path / "canary"
    canary.write_text("untouched\n")
    canary.chmod(0o600)
    before = canary.stat()
    result = await run(pool, f"""
        import os
        target = {str(canary)!r}
        os.remove("snippet.py")
        for link in ["snippet.py", "output", "stdout", "core", "/tmp/link", "/dev/shm/link",
                     "/tmp/snippet.py"]:
            os.symlink(target, link)
        os.symlink({str(tmp_path)!r}, "/tmp/dir")
        print(sorted(os.listdir(".")), os.path.exists(target))
    """)
    # the links are made; the host path they name is not even visible in the box
    assert (result.state, result.stdout) == (
        JobState.DONE, "['core', 'output', 'snippet.py', 'stdout'] False\n"), result
    await still_serves(pool)  # the slot's cleanup ran; a fresh job wrote its own snippet.py
    after = canary.stat()
    assert canary.read_text() == "untouched\n"
    assert (after.st_uid, after.st_gid, after.st_mode, after.st_mtime_ns) == (
        before.st_uid, before.st_gid, before.st_mode, before.st_mtime_ns)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canary"]
