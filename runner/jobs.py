"""The job vocabulary shared by the chat adapters, the queue backends and the workers.

Everything here is plain data (no I/O) so that a GPU host and a bot host agree on it
without sharing anything else; `to_dict`/`from_dict` are the wire format for the
journal and for Redis.
"""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the colleague's module; only a type here
    from runner.explain import ErrorExplanation


class Device(StrEnum):
    AUTO = "auto"
    GPU = "gpu"
    CPU = "cpu"


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        return self not in (JobState.QUEUED, JobState.RUNNING)


@dataclass
class JobRequest:
    code: str
    requester: str  # e.g. "discord:guild:user"; the fairness rules key on it
    reply_to: dict[str, str]  # opaque routing for the adapter (platform, channel, thread ids)
    device: Device = Device.AUTO
    # Stricter limits the caller asks for (a challenge's own): a worker applies each only where
    # it is below its own, so a request can tighten the sandbox, never loosen it.
    limits: dict[str, float] = field(default_factory=dict)
    # A judge job (runner.judge.judge_job): the worker judges `code` against this problem and
    # answers with a verdict instead of output
    judge: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"code": self.code, "requester": self.requester,
                "reply_to": dict(self.reply_to), "device": self.device.value,
                "limits": dict(self.limits)}
        if self.judge is not None:
            data["judge"] = self.judge
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobRequest:
        return cls(code=data["code"], requester=data["requester"],
                   reply_to={str(k): str(v) for k, v in data.get("reply_to", {}).items()},
                   device=Device(data.get("device", "auto")),
                   limits={str(k): float(v) for k, v in (data.get("limits") or {}).items()},
                judge=data.get("judge") if isinstance(data.get("judge"), dict) else None)


@dataclass
class Limits:
    """Per-job sandbox limits. Tests shrink them; the defaults suit a chat snippet."""

    timeout_s: float = 20.0  # wall time, whole process group killed after it
    cpu_time_s: int = 20  # RLIMIT_CPU per process
    memory_mb: int = 2048  # RSS of the whole job (and RLIMIT_AS on CPU slots)
    max_procs: int = 256  # RLIMIT_NPROC for the job's uid (threads count too)
    file_size_mb: int = 16  # RLIMIT_FSIZE
    output_cap_bytes: int = 1_000_000  # above this the job is stopped; kept as attachment
    display_chars: int = 1500  # per stream, shown inline in chat

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def tightened(self, asked: dict[str, float]) -> Limits:
        """These limits with each asked-for value that is stricter (lower and positive)."""
        values = self.to_dict()
        for name, value in asked.items():
            mine = values.get(name)
            if mine is not None and 0 < value < mine:
                values[name] = type(mine)(value)
        return Limits(**values)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class JobResult:
    job_id: str
    request: JobRequest
    state: JobState
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    full_output: bytes | None = None
    exit_code: int | None = None
    duration_s: float = 0.0
    device_used: str = "cpu"  # "cpu" or "cuda:0 (NVIDIA H200)"
    device_note: str | None = None  # e.g. "no GPU available, ran on CPU"
    torch_version: str | None = None  # the torch the job imported, e.g. "2.13.0+cu128"
    peak_rss_mb: float | None = None
    gpu_max_allocated_mb: float | None = None
    error_message: str | None = None  # the sandbox's own verdict, e.g. "killed: wall-time limit 20 s"
    explanation: ErrorExplanation | None = field(default=None)
    verdict: dict[str, Any] | None = None  # a judge job's verdict (runner.judge.Verdict.to_dict)

    def to_dict(self) -> dict[str, Any]:
        """Wire form; the explanation is recomputed where the result is delivered."""
        return {
            "job_id": self.job_id, "request": self.request.to_dict(), "state": self.state.value,
            "stdout": self.stdout, "stderr": self.stderr, "output_truncated": self.output_truncated,
            "full_output": (base64.b64encode(self.full_output).decode()
                            if self.full_output is not None else None),
            "exit_code": self.exit_code, "duration_s": self.duration_s,
            "device_used": self.device_used, "device_note": self.device_note,
            "torch_version": self.torch_version,
            "peak_rss_mb": self.peak_rss_mb, "gpu_max_allocated_mb": self.gpu_max_allocated_mb,
            "error_message": self.error_message, "verdict": self.verdict,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        full = data.get("full_output")
        return cls(
            job_id=data["job_id"], request=JobRequest.from_dict(data["request"]),
            state=JobState(data["state"]), stdout=data.get("stdout", ""),
            stderr=data.get("stderr", ""), output_truncated=bool(data.get("output_truncated")),
            full_output=base64.b64decode(full) if full is not None else None,
            exit_code=data.get("exit_code"), duration_s=float(data.get("duration_s", 0.0)),
            device_used=data.get("device_used", "cpu"), device_note=data.get("device_note"),
            torch_version=data.get("torch_version"),
            peak_rss_mb=data.get("peak_rss_mb"),
            gpu_max_allocated_mb=data.get("gpu_max_allocated_mb"),
            error_message=data.get("error_message"),
            verdict=data.get("verdict") if isinstance(data.get("verdict"), dict) else None,
        )


@dataclass(frozen=True)
class Submitted:
    job_id: str
    position: int  # 1 = next to run


class JobRejected(Exception):
    """Raised by `submit`; `message` is written for the member who asked. `active_job` names
    the member's unfinished job when that is the reason (the bot then says how to cancel it)."""

    def __init__(self, message: str, *, active_job: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.active_job = active_job


def interrupted_result(job_id: str, request: JobRequest, was_running: bool) -> JobResult:
    """What a member is told about a job that a restart cut short: never silence."""
    where = "while it was running" if was_running else "while it was waiting in the queue"
    return JobResult(job_id=job_id, request=request, state=JobState.INTERRUPTED,
                     error_message=f"interrupted: the runner restarted {where}; please /run it again")
