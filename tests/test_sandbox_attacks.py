"""Hostile snippets against a real sandbox slot: each limit fails safely with a clear
message, and the same slot then serves the next job.

One warm slot is shared by the whole module, on purpose: every attack is followed by a
normal job on the slot it just attacked.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from runner.isolation import Level, detect
from runner.jobs import Device, JobRequest, JobResult, JobState, Limits
from runner.pool import LocalPool
from runner.settings import RunnerSettings

pytestmark = pytest.mark.asyncio(loop_scope="module")
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
FULL = detect().level is Level.FULL
needs_namespaces = pytest.mark.skipif(
    not FULL and not REQUIRE, reason=f"needs bubblewrap: {detect().problem}")
SECRET = "sekrit-token-do-not-leak-4242"
REPO = Path(__file__).resolve().parents[1]
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


async def test_memory_bomb_in_one_process(pool: LocalPool) -> None:
    result = await run(pool, "x = bytearray(4 * 1024**3)")
    assert result.state is JobState.FAILED
    assert result.error_message == "memory limit 256 MB exceeded"
    assert "MemoryError" in result.stderr
    await still_serves(pool)


async def test_torch_memory_bomb(pool: LocalPool) -> None:
    result = await run(pool, """
        import torch
        keep = [torch.ones(16 * 2**20) for _ in range(100)]  # 64 MB each
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "memory limit 256 MB exceeded"
    await still_serves(pool)


async def test_memory_spread_over_processes_is_caught_by_the_watchdog(pool: LocalPool) -> None:
    result = await run(pool, """
        import os, time
        for _ in range(4):
            if os.fork() == 0:
                x = b"x" * (150 * 2**20)  # each process stays under its own address cap
                time.sleep(30)
        time.sleep(30)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "killed: memory limit 256 MB exceeded"
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
    result = await run(pool, """
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"0" * 2**20)
    """)
    assert result.state is JobState.FAILED
    assert result.error_message == "killed: file size limit 8 MB exceeded"
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
    # the next job starts with a clean, empty directory
    clean = await run(pool, "import os\nprint(os.listdir('.'))")
    assert clean.stdout == "[]\n"


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
async def test_cannot_write_outside_the_job_directory(pool: LocalPool) -> None:
    result = await run(pool, """
        import os
        for path in ["/tmp/escape", "/dev/shm/escape", "/usr/escape", "/escape",
                     os.path.expanduser("~/../escape")]:
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
        targets = [os.getppid(), 1] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
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
    assert "DENIED" in result.stdout
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
