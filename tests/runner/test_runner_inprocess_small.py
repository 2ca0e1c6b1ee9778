"""Issue 21: mutation survivors of runner/gpus.py, runner/worker.py and runner/service.py
(the snippet verifier's, now bot/snippet_verify.py, are in test_content_verify.py). Their
callers in the suite run them in subprocesses (the worker CLI) or not at all (no GPU here), so
mutmut saw no test; these call them in-process with fake nvidia-smi output and fake
isolation/worker objects."""

from __future__ import annotations

import asyncio
import logging
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from runner import factory, gpus, service, worker
from runner.embedded import EmbeddedRunner
from runner.isolation import Isolation, Level, WeakIsolationError
from runner.jobs import Device, JobRequest, JobResult, JobState
from runner.redis_queue import RedisRunner
from runner.sandbox import Gpu
from runner.settings import RunnerSettings

# ---- gpus.detect_gpus -------------------------------------------------------------------------


class Smi:
    def __init__(self, stdout: str = "", returncode: int = 0, error: Exception | None = None) -> None:
        self.stdout, self.returncode, self.error = stdout, returncode, error
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def __call__(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append((args, kwargs))
        if self.error:
            raise self.error
        return subprocess.CompletedProcess(args, self.returncode, self.stdout, "")


def fake_smi(monkeypatch: pytest.MonkeyPatch, smi: Smi, path: str | None = "/usr/bin/nvidia-smi") -> None:
    monkeypatch.setattr(gpus.shutil, "which", lambda name: path if name == "nvidia-smi" else None)
    monkeypatch.setattr(gpus.subprocess, "run", smi)


SMI_OUT = ("0, GPU-aa, 00000000:3B:00.0, NVIDIA H200\n1, GPU-bb, 00000000:86:00.0, NVIDIA A100-SXM4-80GB \n"
           "No devices were found\n\n 2 ,GPU-cc,00000000:AF:00.0,Tesla T4, PCIe\n")
H200 = Gpu(0, "NVIDIA H200", uuid="GPU-aa", minor=4)
T4 = Gpu(2, "Tesla T4, PCIe", uuid="GPU-cc", minor=None)  # the driver's file says no minor


@pytest.fixture
def driver_gpus(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/driver/nvidia/gpus: the H200's minor is 4 (not its index), the A100's 1."""
    for bus, info in (("0000:3b:00.0", "Model: \t NVIDIA H200\nDevice Minor: \t 4\n"),
                      ("0000:86:00.0", "Device Minor: 1\n"), ("0000:af:00.0", "Device Minor: ?\n")):
        (tmp_path / bus).mkdir()
        (tmp_path / bus / "information").write_text(info)
    monkeypatch.setattr(gpus, "DRIVER_GPUS", tmp_path)


def test_gpus_are_read_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch, driver_gpus: None) -> None:
    smi = Smi(SMI_OUT)
    fake_smi(monkeypatch, smi)
    assert gpus.detect_gpus() == [H200, Gpu(1, "NVIDIA A100-SXM4-80GB", uuid="GPU-bb", minor=1), T4]
    assert smi.calls == [(["/usr/bin/nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name",
                           "--format=csv,noheader"],
                          {"capture_output": True, "text": True, "timeout": 20, "check": False})]
    assert gpus.detect_gpus([2, 0]) == [H200, T4]
    assert gpus.detect_gpus([]) == []
    assert Gpu(1, "NVIDIA A100").label == "cuda:1 (NVIDIA A100)"
    assert gpus.device_minor("00000000:00:01.0") is None  # no such GPU in the driver's list


def test_a_gpu_is_chosen_by_uuid_and_its_own_device_minor() -> None:
    # the slot binds /dev/nvidia<minor> only, so the job's CUDA sees that one device; its UUID
    # names it whatever number the driver gives it there
    assert (H200.visible_devices, H200.device_minor) == ("GPU-aa", 4)
    assert (T4.visible_devices, T4.device_minor) == ("GPU-cc", 2)
    assert (Gpu(3, "A100").visible_devices, Gpu(3, "A100").device_minor) == ("3", 3)


@pytest.mark.parametrize("make", [
    lambda: Smi(error=OSError("exec format error")),
    lambda: Smi(error=subprocess.TimeoutExpired(["nvidia-smi"], 20)),
    lambda: Smi(SMI_OUT, returncode=9),
])
def test_a_failing_nvidia_smi_means_no_gpus(monkeypatch: pytest.MonkeyPatch,
                                            make: Callable[[], Smi]) -> None:
    smi = make()
    fake_smi(monkeypatch, smi)
    assert gpus.detect_gpus() == []
    assert len(smi.calls) == 1


def test_without_nvidia_smi_it_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    smi = Smi(SMI_OUT)
    fake_smi(monkeypatch, smi, path=None)
    assert gpus.detect_gpus() == []
    assert smi.calls == []


# ---- worker.run_worker ------------------------------------------------------------------------


WEAK = Isolation(Level.WEAK, None, True, "bubblewrap not found", ("feature one",))


class FakeWorker:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.loop: asyncio.AbstractEventLoop | None = None

    def run(self) -> None:
        self.loop = asyncio.get_event_loop()
        assert not self.loop.is_closed()
        if self.fail:
            raise RuntimeError("redis went away")


def fake_worker_parts(monkeypatch: pytest.MonkeyPatch, fake: FakeWorker,
                      calls: list[Any], found: Isolation = WEAK) -> None:
    import runner.redis_queue

    def require(allow_weak: bool) -> Isolation:
        calls.append(("require", allow_weak))
        if not allow_weak and found.level is Level.WEAK:
            raise WeakIsolationError("weak")
        return found

    def build(config: RunnerSettings) -> FakeWorker:
        calls.append(("build", config))
        return fake

    monkeypatch.setattr(worker, "require", require)
    monkeypatch.setattr(runner.redis_queue, "build_worker", build)


@pytest.fixture
def restore_loop() -> Any:
    yield
    asyncio.set_event_loop(None)


def test_the_worker_logs_its_isolation_and_runs_on_a_loop_it_closes(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, restore_loop: None) -> None:
    calls: list[Any] = []
    fake = FakeWorker()
    fake_worker_parts(monkeypatch, fake, calls)
    config = RunnerSettings(_env_file=None, allow_weak_isolation=True)  # type: ignore[call-arg]
    with caplog.at_level(logging.INFO, logger="runner.worker"):
        worker.run_worker(config)
    assert calls == [("require", True), ("build", config)]
    assert [r.getMessage() for r in caplog.records if r.name == "runner.worker"] == [
        "isolation level: weak\n  - feature one\n  ! bubblewrap not found"]
    assert fake.loop is not None and fake.loop.is_closed()


def test_the_worker_warns_at_start_when_jobs_get_no_cpu_share(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, restore_loop: None) -> None:
    no_share = "no per-job CPU share: the cgroup cpu controller is not the worker's (...)"
    full = Isolation(Level.FULL, "/usr/bin/bwrap", True, None, ("feature one",), warnings=(no_share,))
    fake_worker_parts(monkeypatch, FakeWorker(), [], full)
    with caplog.at_level(logging.INFO, logger="runner.worker"):
        worker.run_worker(RunnerSettings(_env_file=None))  # type: ignore[call-arg]
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "runner.worker"] == [
        (logging.INFO, f"isolation level: full\n  - feature one\n  ! {no_share}"),
        (logging.WARNING, no_share)]


def test_the_worker_refuses_weak_isolation_before_building(monkeypatch: pytest.MonkeyPatch,
                                                            restore_loop: None) -> None:
    calls: list[Any] = []
    fake_worker_parts(monkeypatch, FakeWorker(), calls)
    with pytest.raises(WeakIsolationError):
        worker.run_worker(RunnerSettings(_env_file=None))  # type: ignore[call-arg]
    assert calls == [("require", False)]


def test_the_workers_loop_is_closed_when_it_fails(monkeypatch: pytest.MonkeyPatch,
                                                   restore_loop: None) -> None:
    fake = FakeWorker(fail=True)
    fake_worker_parts(monkeypatch, fake, [])
    with pytest.raises(RuntimeError, match="redis went away"):
        worker.run_worker(RunnerSettings(_env_file=None, allow_weak_isolation=True))  # type: ignore[call-arg]
    assert fake.loop is not None and fake.loop.is_closed()


# ---- service ----------------------------------------------------------------------------------


REQUEST = JobRequest("x", "m:a", {"channel": "1"}, Device.CPU)
SHAPES = ("Traceback (most recent call last):\n  File \"snippet.py\", line 1, in <module>\n"
          "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)\n")


def result(stderr: str = "") -> JobResult:
    return JobResult("j1", REQUEST, JobState.FAILED, stderr=stderr)


def test_a_known_error_is_explained_once() -> None:
    explained = service.attach_explanation(result(SHAPES))
    assert explained.explanation is not None
    assert explained.explanation.matched == "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
    first = explained.explanation
    again = service.attach_explanation(explained)
    assert again is explained and again.explanation is first
    assert service.attach_explanation(result("")).explanation is None
    assert service.attach_explanation(result("all good\n")).explanation is None


def test_an_explain_failure_keeps_the_result(monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    import runner.explain

    def broken(stderr: str) -> None:
        raise KeyError("catalogue bug")

    monkeypatch.setattr(runner.explain, "explain", broken)
    job = result(SHAPES)
    with caplog.at_level(logging.ERROR, logger="runner.service"):
        assert service.attach_explanation(job) is job
    assert job.explanation is None
    assert [r.getMessage() for r in caplog.records] == ["explain() failed for job j1"]


def test_without_the_catalogue_the_result_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "runner.explain", None)
    job = result(SHAPES)
    assert service.attach_explanation(job) is job and job.explanation is None


class Minimal(service.RunnerService):
    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def submit(self, request: JobRequest) -> Any: ...

    async def cancel(self, job_id: str) -> bool:
        return False

    async def position(self, job_id: str) -> int | None:
        return None

    async def active_job(self, requester: str) -> str | None:
        return None


async def test_every_callback_gets_the_explained_result_even_after_one_fails(
        caplog: pytest.LogCaptureFixture) -> None:
    runner_ = Minimal()
    assert runner_.runtime is None
    assert await runner_._deliver(result()) is True
    seen: list[tuple[str, JobResult]] = []

    async def first(r: JobResult) -> None:
        seen.append(("first", r))
        raise RuntimeError("adapter down")

    async def second(r: JobResult) -> None:
        seen.append(("second", r))

    runner_.on_result(first)
    runner_.on_result(second)
    job = result(SHAPES)
    with caplog.at_level(logging.ERROR, logger="runner.service"):
        assert await runner_._deliver(job) is False
    assert seen == [("first", job), ("second", job)]
    assert job.explanation is not None
    assert [r.getMessage() for r in caplog.records] == ["result callback failed for job j1"]
    seen.clear()
    ok = Minimal()
    ok.on_result(second)
    assert await ok._deliver(job) is True and seen == [("second", job)]


def test_make_runner_builds_the_backend_asked_for_with_the_settings() -> None:
    embedded = factory.make_runner("embedded", cpu_slots=3, timeout_s=4.5)
    assert isinstance(embedded, EmbeddedRunner)
    assert (embedded.settings.cpu_slots, embedded.settings.timeout_s) == (3, 4.5)
    redis = factory.make_runner("redis", key_prefix="td:test")
    assert isinstance(redis, RedisRunner) and redis.settings.key_prefix == "td:test"
    with pytest.raises(ValueError) as error:
        factory.make_runner("docker")
    assert str(error.value) == "unknown runner backend 'docker'; use 'embedded' or 'redis'"
