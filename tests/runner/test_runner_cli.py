"""`torchdrill runner ...` as real processes, and the runner's independence from the bot."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from runner.jobs import JobRequest, JobResult, JobState
from runner.redis_queue import RedisRunner
from runner.settings import RunnerSettings
from tests.support.redis_runner import REDIS_URL

TORCHDRILL = str(Path(sys.executable).with_name("torchdrill"))

REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


def test_runner_package_imports_nothing_from_the_bot_or_chat_libraries() -> None:
    code = ("import sys, runner.service, runner.embedded, runner.redis_queue, runner.worker, "
            "runner.__main__, runner.pool, runner.sandbox, runner.isolation\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('bot', 'discord', 'slack_bolt', 'slack_sdk', 'torch', 'sqlalchemy'))\n"
            "print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_isolation_command_describes_this_host() -> None:
    done = subprocess.run([TORCHDRILL, "runner", "isolation"], capture_output=True, text=True,
                          check=True)
    assert "isolation level:" in done.stdout
    assert "rlimits" in done.stdout
    from runner.isolation import Level, detect

    iso = detect()
    if iso.level is Level.FULL:  # the mechanism in force is named, not just "full"
        assert f"cgroup v{iso.cgroup_version}" in done.stdout
        assert "seccomp (bwrap --seccomp" in done.stdout
        # CPU fairness is said either way: a CPU group per job, or a warning that there is none
        has_share = ", cpu.weight per job" in done.stdout or ", cpu.shares per job" in done.stdout
        assert has_share != ("  ! no per-job CPU share: " in done.stdout)
    else:  # and a weak host says why
        assert "!" in done.stdout and iso.problem and iso.problem[:40] in done.stdout
    assert all(f"  ! {warning}\n" in done.stdout for warning in iso.warnings)  # whole lines


def test_no_kernel_memory_limits_means_weak_and_refused() -> None:
    from runner.isolation import Isolation, Level, WeakIsolationError, require

    no_cgroups = Isolation(Level.WEAK, "/usr/bin/bwrap", True, "no kernel memory limits: ...",
                           cgroup_version=None, seccomp=True)
    with pytest.raises(WeakIsolationError, match="no kernel memory limits"):
        require(False, no_cgroups)
    assert require(True, no_cgroups) is no_cgroups


def test_worker_refuses_weak_isolation() -> None:
    # without bubblewrap on PATH the host only has weak isolation
    env = {**os.environ, "PATH": "/nonexistent", "RUNNER_ALLOW_WEAK_ISOLATION": "false"}
    done = subprocess.run([TORCHDRILL, "runner", "worker", "--cpu-slots", "1"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "refusing to run untrusted snippets with weak isolation" in done.stderr
    assert "bubblewrap not found" in done.stderr


@pytest.mark.redis
async def test_worker_command_serves_the_queue_and_stops_on_sigterm(tmp_path: Path) -> None:
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except OSError as exc:
        if REQUIRE:
            raise
        pytest.skip(f"Redis not reachable: {exc}")
    prefix = f"torchdrill-test:{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "RUNNER_KEY_PREFIX": prefix, "REDIS_URL": REDIS_URL,
           "RUNNER_ALLOW_WEAK_ISOLATION": "true"}
    worker = subprocess.Popen([TORCHDRILL, "runner", "worker", "--gpus", "", "--cpu-slots", "1"],
                              env=env, stderr=subprocess.PIPE, text=True)
    runner = RedisRunner(RunnerSettings(redis_url=REDIS_URL, key_prefix=prefix))
    got: asyncio.Queue[JobResult] = asyncio.Queue()
    runner.on_result(got.put)
    await runner.start()
    job_ids: list[str] = []
    try:
        sub = await runner.submit(JobRequest("print(6 * 7)", "cli:a", {"channel": "x"}))
        job_ids.append(sub.job_id)
        result = await asyncio.wait_for(got.get(), 90)
        assert (result.job_id, result.state, result.stdout) == (sub.job_id, JobState.DONE, "42\n")
    finally:
        await runner.close()
        worker.send_signal(signal.SIGTERM)
        try:
            _, err = worker.communicate(timeout=30)
        finally:
            worker.kill()
        keys = [k async for k in client.scan_iter(f"{prefix}*")]
        keys += [f"arq:{kind}:{i}" for i in job_ids for kind in ("job", "retry", "in-progress")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    assert worker.returncode == 0, err[-2000:]
    assert "runner worker ready: cpu" in err


@pytest.mark.skipif(shutil.which("bwrap") is None and not REQUIRE, reason="bubblewrap is not installed")
def test_the_bubblewrap_probe_starts_a_real_sandbox_and_says_why_one_failed() -> None:
    """detect() trusts a sandbox it started, not `which`: the probe's answer in-process."""
    from runner import syscall_filter
    from runner.isolation import _probe_bwrap

    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    assert _probe_bwrap(bwrap, root, seccomp_ok=syscall_filter.available() is None) is None
    assert _probe_bwrap("/no/such/bwrap", root, seccomp_ok=False) == (
        "bubblewrap failed: [Errno 2] No such file or directory: '/no/such/bwrap'")
    assert _probe_bwrap("/bin/false", root, seccomp_ok=False) == "bubblewrap failed: "
    # a "bwrap" that rejects our flags: its own complaint, as it printed it
    assert _probe_bwrap("/bin/sh", root, seccomp_ok=False).startswith("bubblewrap failed: /bin/sh: ")  # type: ignore[union-attr]
