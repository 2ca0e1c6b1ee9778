"""The torch that serves /run is the torch the banks were verified with, and says so (issue 20).

Real sandboxed pools and runners on this host: the version reported is what the template
imported inside the sandbox, read back in the log, in /readyz and in each result's footer.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest
import redis.asyncio as aioredis
import torch

from bot.core.runs.desk import result_message
from bot.observability.health import make_health_app, runner_detail, start_http
from runner import versions
from runner.embedded import EmbeddedRunner
from runner.isolation import Level, detect
from runner.jobs import JobRequest, JobResult, JobState
from runner.pool import LocalPool
from runner.settings import RunnerSettings
from tests.support.run_desk import Collector

ROOT = Path(__file__).resolve().parents[2]
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


def settings(tmp_path: Path, **overrides: object) -> RunnerSettings:
    base: dict[str, object] = dict(
        cpu_slots=1, gpus=[], timeout_s=10, cpu_time_s=10, memory_mb=512, max_procs=64,
        journal_path=tmp_path / "journal.sqlite3",
        allow_weak_isolation=not REQUIRE and detect().level is Level.WEAK)
    base.update(overrides)
    return RunnerSettings(**base)


def test_verified_torch_is_the_ci_pin() -> None:
    pins = re.findall(r"^torch==(\S+)$", (ROOT / ".ci" / "constraints.txt").read_text(), re.M)
    assert len(pins) == 1
    assert versions.verified_torch() == pins[0]
    assert versions.VERIFIED_FILE == ROOT / "content" / "verified.yaml"


def test_release_ignores_the_build_tag_and_a_bad_file_is_unknown(tmp_path: Path) -> None:
    assert versions.release("2.13.0+cu128") == versions.release("2.13.0+cpu") == "2.13.0"
    bad = tmp_path / "verified.yaml"
    bad.write_text("torch: [not, a, version]\n")
    assert versions.verified_torch(bad) is None
    assert versions.verified_torch(tmp_path / "missing.yaml") is None
    unknown = versions.Runtime("2.13.0", None, ("cpu",), None)
    assert not unknown.matches and "differs from torch unknown" in (unknown.mismatch() or "")


async def test_a_pool_logs_what_it_serves_and_no_warning_on_the_verified_torch(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="runner.pool")
    pool = LocalPool(settings(tmp_path))
    await pool.start()
    await pool.close()
    assert pool.runtime is not None
    served = torch.__version__
    assert pool.runtime.to_dict() == {"torch": served, "cuda": torch.version.cuda,
                                      "devices": ["cpu"], "verified_torch": "2.13.0",
                                      "matches_verified": True}
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "runner.pool"]
    cuda = torch.version.cuda or "none"
    assert lines == [("INFO", f"runner serves torch {served} (CUDA {cuda}), devices: cpu; "
                              "banks verified with torch 2.13.0")]


async def test_a_worker_on_another_torch_warns_naming_both_versions(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "verified.yaml"
    other.write_text("torch: 2.7.1\n")
    monkeypatch.setattr(versions, "VERIFIED_FILE", other)
    caplog.set_level(logging.INFO, logger="runner.pool")
    pool = LocalPool(settings(tmp_path))
    await pool.start()
    await pool.close()
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "runner.pool" and r.levelno == logging.WARNING]
    assert warnings == [
        f"runner torch {torch.__version__} differs from torch 2.7.1, the version the question "
        "banks and their answer keys were verified with: /run output may contradict the "
        "answers (use the runner image built with that TORCH_VERSION)"]


async def test_each_result_footer_and_readyz_name_the_torch(tmp_path: Path) -> None:
    runner = EmbeddedRunner(settings(tmp_path))
    results = Collector()
    runner.on_result(results)
    app = SimpleNamespace(runs=None)
    http = await start_http(make_health_app({"runner": runner_detail(app)}), "127.0.0.1", 0)
    port = http.addresses[0][1]
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                before = await response.json()
            await runner.start()
            app.runs = SimpleNamespace(runner=runner)
            async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                status, after = response.status, await response.json()
            sub = await runner.submit(JobRequest("print(6 * 7)", "cli:a", {"platform": "x"}))
            result = await results.wait(sub.job_id)
    finally:
        await runner.close()
        await http.cleanup()
    assert before == {"status": "ok", "checks": {}}  # starting: nothing to show, still ready
    assert status == 200 and after["details"]["runner"] == {
        "torch": torch.__version__, "cuda": torch.version.cuda, "devices": ["cpu"],
        "verified_torch": "2.13.0", "matches_verified": True}
    assert (result.job_id, result.stdout, result.torch_version) == (sub.job_id, "42\n",
                                                                   torch.__version__)
    footer = result_message(result).plain().splitlines()[1]
    assert re.fullmatch(rf"[0-9.]+ s · device: cpu · torch {re.escape(torch.__version__)}"
                        r" · peak RAM \d+ MB", footer), footer


def test_the_torch_version_travels_with_the_result_and_is_left_out_when_unknown() -> None:
    request = JobRequest("x", "discord:g:u", {"platform": "discord"})
    sent = JobResult("j1", request, JobState.DONE, stdout="1\n", duration_s=0.5,
                     device_used="cuda:0 (NVIDIA H200)", torch_version="2.13.0+cu128")
    received = JobResult.from_dict(json.loads(json.dumps(sent.to_dict())))
    assert received.torch_version == "2.13.0+cu128"
    text = result_message(received).plain()
    assert "0.50 s · device: cuda:0 (NVIDIA H200) · torch 2.13.0+cu128" in text
    old = JobResult.from_dict({k: v for k, v in sent.to_dict().items() if k != "torch_version"})
    assert result_message(old).plain().splitlines()[1] == "0.50 s · device: cuda:0 (NVIDIA H200)"


@pytest.mark.redis
async def test_the_worker_command_logs_the_torch_it_serves_at_start(tmp_path: Path) -> None:
    url = os.environ.get("TORCHDRILL_TEST_REDIS", "redis://127.0.0.1:6379/0")
    client = aioredis.from_url(url)
    try:
        await client.ping()
    except OSError as exc:
        if REQUIRE:
            raise
        pytest.skip(f"Redis not reachable: {exc}")
    finally:
        await client.aclose()
    env = {**os.environ, "RUNNER_KEY_PREFIX": f"torchdrill-test:{uuid.uuid4().hex[:8]}",
           "REDIS_URL": url, "RUNNER_ALLOW_WEAK_ISOLATION": "true"}
    worker = subprocess.Popen([str(Path(sys.executable).with_name("torchdrill")), "runner",
                               "worker", "--gpus", "", "--cpu-slots", "1"],
                              env=env, stderr=subprocess.PIPE, text=True)
    wanted = (f"runner serves torch {torch.__version__} (CUDA {torch.version.cuda or 'none'}), "
              "devices: cpu; banks verified with torch 2.13.0")
    seen: list[str] = []
    deadline = threading.Timer(90, worker.kill)  # a silent worker cannot hang the test
    deadline.start()
    try:
        assert worker.stderr is not None
        for line in worker.stderr:
            seen.append(line)
            if wanted in line or "runner worker ready" in line or len(seen) > 200:
                break
    finally:
        deadline.cancel()
        worker.send_signal(signal.SIGTERM)
        try:
            worker.communicate(timeout=30)
        finally:
            worker.kill()
    assert any(wanted in line for line in seen), "".join(seen)[-3000:]
    assert not any("differs from torch" in line for line in seen)
