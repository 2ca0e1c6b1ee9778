"""A judge job on the worker: one trusted process for the problem, one sandbox job per case.

The worker draws the submission's secret seed here (it never enters a job), asks the trusted
process (runner.judge_host) for each case's payload, runs the member's code on each case in the
claimed slot, and hands the trusted process what came back; its verdict (a small JSON dict) is
the job's result. The worker itself never imports torch and never parses a tensor.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner import judge_harness
from runner.jobs import JobRequest, JobResult, JobState, Limits
from runner.judge import JudgeSpec, Verdict
from runner.outcome import build_result
from runner.sandbox import Slot

log = logging.getLogger(__name__)
# What a case or replay job prints, at most: its one result line (a record up to RECORD_CAP
# bytes in base64, traced evidence and the member's output, both JSON-escaped). The member's
# own output never reaches that stdout (the harness quotes OUTPUT_CAP of it), so raising the
# job's output cap to this gives the member nothing; below it, a large record was cut.
CASE_OUTPUT_CAP = (judge_harness.RECORD_CAP * 4 // 3 + 2 * judge_harness.GRAPH_CAP
                   + 6 * judge_harness.OUTPUT_CAP + 65536)
MARK = "TDJ2 "
HARNESS_PATH = Path(__file__).with_name("judge_harness.py")
REPLAY_PATH = Path(__file__).with_name("judge_replay.py")
REPLAY_MARK = "TDJR "
EVIDENCE_CAP = 1_000_000  # characters of a case's traced graph forwarded to the trusted process
ROOT = Path(__file__).resolve().parents[1]
HOST_TIMEOUT_S = 120.0
FRAME_CAP = 64 * 1024 * 1024
BROKEN = "no verdict: the judge could not run this problem (please report it)"
HARNESS_MARGIN_S = 2.0  # the harness reports before the sandbox's wall limit
CANCELLED = "cancelled"
_cancelled: set[str] = set()  # judge jobs asked to stop: checked between their case jobs


def request_cancel(job_id: str) -> None:
    """Stop a judge job at its next step (the slot's cancel only reaches a case job running now:
    one asked while the cases are prepared, or between two cases, would be lost)."""
    _cancelled.add(job_id)


def case_program(payload: dict[str, Any], code: str) -> str:
    """One case's job: the harness, then one call with this case's payload and the code."""
    data = json.dumps({**payload, "code": code}, ensure_ascii=False)
    return HARNESS_PATH.read_text(encoding="utf-8") + f"\nrun_case(json.loads({data!r}))\n"


def replay_program(payload: dict[str, Any]) -> str:
    """The replay job: graphs (data) and inputs, no member code (runner.judge_replay)."""
    data = json.dumps(payload, ensure_ascii=False)
    return REPLAY_PATH.read_text(encoding="utf-8") + f"\nreplay_main(json.loads({data!r}))\n"


def result_line(output: str, mark: str = MARK) -> dict[str, Any] | None:
    """The one result line of a case job's stdout; None if absent, repeated or malformed."""
    lines = [line for line in output.splitlines() if line.startswith(mark)]
    if len(lines) != 1:
        return None
    try:
        frame = json.loads(lines[0][len(mark):])
    except ValueError:
        return None
    return frame if isinstance(frame, dict) else None


class HostForker:
    """The warm judge host (runner.judge_host.forker_main): one per worker process, started on
    first use and again if it has died; each submission is a fresh fork of it."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        boot = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                f"from runner.judge_host import forker_main; forker_main({theirs.fileno()})")
        try:
            self.proc = subprocess.Popen([sys.executable, "-I", "-c", boot], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         pass_fds=[theirs.fileno()], start_new_session=True)
        finally:
            theirs.close()
        self.control = mine
        self.closed = False

    def alive(self) -> bool:
        return not self.closed and self.proc.poll() is None

    def spawn(self) -> socket.socket:
        """A stream socket to a new submission process (its first 4 bytes: its pid)."""
        ours, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self.control, [b"submission"], [child.fileno()])
        except OSError:
            ours.close()
            raise
        finally:
            child.close()
        return ours

    def close(self) -> None:
        self.control.close()
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()
        self.closed = True


_forker: HostForker | None = None


def host_forker(restart: bool = False) -> HostForker:
    """The warm host; a new one if it has died or ``restart`` (it failed to serve a spawn)."""
    global _forker
    if _forker is None or restart or not _forker.alive():
        if _forker is not None and not _forker.closed:
            _forker.close()
        _forker = HostForker()
    return _forker


class TrustedHost:
    """The judge_host process of one submission (holds the cases and the expected values): a
    fork of the warm judge host, killed when the submission is done."""

    def __init__(self) -> None:
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.pidfd: int | None = None
        self.pid: int | None = None

    async def __aenter__(self) -> TrustedHost:
        for attempt in (1, 2):  # a warm host that has died since its last use is started again
            try:
                sock = host_forker(restart=attempt == 2).spawn()
                self.reader, self.writer = await asyncio.open_unix_connection(sock=sock)
                async with asyncio.timeout(HOST_TIMEOUT_S):
                    (pid,) = struct.unpack(">I", await self.reader.readexactly(4))
                break
            except (OSError, asyncio.IncompleteReadError):
                await self.__aexit__()
                if attempt == 2:
                    raise
                log.warning("the warm judge host was lost; starting it again")
        self.pid = pid
        with contextlib.suppress(OSError):
            self.pidfd = os.pidfd_open(pid)  # alive now: it waits for our first frame
        return self

    async def __aexit__(self, *exc: object) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        pidfd, self.pidfd = self.pidfd, None
        if pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.reader and self.writer
        body = json.dumps(message).encode()
        self.writer.write(struct.pack(">I", len(body)) + body)
        await self.writer.drain()
        async with asyncio.timeout(HOST_TIMEOUT_S):
            (n,) = struct.unpack(">I", await self.reader.readexactly(4))
            if n > FRAME_CAP:
                raise ValueError("judge host frame too large")
            reply = json.loads(await self.reader.readexactly(n))
        if not isinstance(reply, dict):
            raise ValueError("judge host reply is not a mapping")
        return reply


def _case_result(result: JobResult, line: dict[str, Any] | None) -> dict[str, Any]:
    """What the trusted process needs of one case job (the member's bytes stay opaque here)."""
    out: dict[str, Any] = {"peak_memory_mb": result.peak_rss_mb, "elapsed_s": result.duration_s}
    if result.error_message:
        out["sandbox_error"] = result.error_message
    if line is not None:
        record = line.get("record")
        out.update(finished=line.get("finished") is True,
                   record=record if isinstance(record, str) else "",
                   record_over_cap=line.get("record_over_cap") is True,
                   output=str(line.get("output", ""))[:4000])
        evidence = line.get("evidence")
        if isinstance(evidence, str) and len(evidence) <= EVIDENCE_CAP:
            out["evidence"] = evidence
        if isinstance(line.get("elapsed_s"), int | float):
            out["elapsed_s"] = float(line["elapsed_s"])
    return out


async def judge(job_id: str, request: JobRequest, slot: Slot, note: str | None,
                limits: Limits) -> JobResult:
    """Judge request.code on a claimed slot; the result carries the verdict, never tensors."""
    assert request.judge is not None
    limits = limits.tightened(request.limits)
    # every job of a judgement (cases, replay) prints one result line, which this cap holds
    limits = replace(limits, output_cap_bytes=max(limits.output_cap_bytes, CASE_OUTPUT_CAP))
    spec = JudgeSpec.from_dict(request.judge["spec"])
    deadline = max(1.0, limits.timeout_s - HARNESS_MARGIN_S)
    done = JobResult(job_id=job_id, request=request, state=JobState.DONE,
                     device_used=slot.device_label, device_note=note,
                     torch_version=slot.torch_version)
    try:
        return await _judge(job_id, request, slot, note, limits, spec, deadline, done)
    finally:
        _cancelled.discard(job_id)


async def _judge(job_id: str, request: JobRequest, slot: Slot, note: str | None, limits: Limits,
                 spec: JudgeSpec, deadline: float, done: JobResult) -> JobResult:
    assert request.judge is not None
    async with TrustedHost() as host:
        try:
            ready = await host.ask({"spec": spec.to_dict(), "reference": request.judge["reference"],
                                    "secret": secrets.randbits(62), "deadline_s": deadline})
        except (OSError, ValueError, TimeoutError, asyncio.IncompleteReadError) as exc:
            log.error("judge host failed to prepare job %s: %s", job_id, exc)
            ready = {"error": str(exc)}
        if "error" in ready or not isinstance(ready.get("cases"), list):
            log.error("judge job %s: the problem could not be prepared: %s", job_id, ready.get("error"))
            done.state, done.error_message = JobState.FAILED, BROKEN
            done.verdict = Verdict(0, 0, BROKEN, device=slot.device_label).to_dict()
            return done
        results: list[dict[str, Any]] = []
        for i, payload in enumerate(ready["cases"]):
            if job_id in _cancelled:
                done.state, done.error_message = JobState.CANCELLED, CANCELLED
                return done
            first, then = judge_harness.stages(payload)
            case, line = await _case_job(f"{job_id}.{i}", request, slot, note, limits, first)
            if then is not None and case.state is JobState.DONE and line is not None \
                    and isinstance(line.get("record"), str) and line["record"] and not _load_failed(line):
                # the second stage: a job of its own, given only the first one's record
                case, line = await _case_job(f"{job_id}.{i}.then", request, slot, note, limits,
                                             judge_harness.carried_stage(then, line["record"]))
            results.append(_case_result(case, line))
            if case.state is JobState.CANCELLED:
                done.state, done.error_message = JobState.CANCELLED, case.error_message
                return done
            loaded = line is not None and not _load_failed(line)
            if case.state is not JobState.DONE or not loaded:
                break  # a limit or code that does not load: the other cases are not run
        try:
            reply = await host.ask({"results": results})
            if isinstance(reply.get("replay"), dict):
                reply = await host.ask({"replayed": await _replay(job_id, request, slot, note,
                                                                   limits, reply["replay"])})
        except (OSError, ValueError, TimeoutError, asyncio.IncompleteReadError) as exc:
            log.error("judge host failed on job %s: %s", job_id, exc)
            reply = {}
    verdict = Verdict.from_dict(reply.get("verdict")) if "verdict" in reply else \
        Verdict(0, len(ready["cases"]), BROKEN)
    done.verdict = Verdict(verdict.passed, verdict.total, verdict.failure, verdict.detail,
                           verdict.output, verdict.elapsed_s, verdict.peak_memory_mb,
                           slot.device_label).to_dict()
    done.duration_s = verdict.elapsed_s or 0.0
    done.peak_rss_mb = verdict.peak_memory_mb
    return done


async def _case_job(name: str, request: JobRequest, slot: Slot, note: str | None, limits: Limits,
                    payload: dict[str, Any]) -> tuple[JobResult, dict[str, Any] | None]:
    """One sandbox job of a case: its result and its result line (None if absent)."""
    allowance = int(payload.get("memory_mb") or 0)  # the problem's, from the trusted host
    if allowance:  # its harness asks the worker to cap the job's cgroup before the code runs
        payload = {**payload, "arm": True}
    raw = await slot.run(name, case_program(payload, request.code), limits, arm_mb=allowance)
    if raw.memory_capped:  # a memory kill is then against the problem's allowance
        limits = replace(limits, memory_mb=allowance)
    case = build_result(name, request, raw, limits, device_used=slot.device_label,
                        device_note=note, torch_version=slot.torch_version)
    text = (case.full_output or b"").decode(errors="replace") if case.output_truncated else case.stdout
    return case, result_line(text)


async def _replay(job_id: str, request: JobRequest, slot: Slot, note: str | None, limits: Limits,
                  payload: dict[str, Any]) -> dict[str, Any]:
    """Run the replay job in the slot; its record, unopened, for the trusted process."""
    raw = await slot.run(f"{job_id}.replay", replay_program(payload), limits)
    job = build_result(f"{job_id}.replay", request, raw, limits, device_used=slot.device_label,
                       device_note=note, torch_version=slot.torch_version)
    text = (job.full_output or b"").decode(errors="replace") if job.output_truncated else job.stdout
    line = result_line(text, REPLAY_MARK)
    record = line.get("record") if line else None
    return {"record": record if isinstance(record, str) else ""}


def _load_failed(line: dict[str, Any]) -> bool:
    """A heuristic only for stopping early (the verdict is decided by judge_host): safetensors
    metadata of a load error is plain JSON text near the record's start."""
    import base64

    record = line.get("record")
    if not isinstance(record, str) or not record:
        return False
    try:
        head = base64.b64decode(record[:4000] + "=" * (-len(record[:4000]) % 4))
    except ValueError:
        return False
    return b'"load_error"' in head


async def execute(pool: Any, job_id: str, request: JobRequest, slot: Slot, note: str | None,
                  limits: Limits) -> JobResult:
    """Run a claimed slot's job, /run snippet or judge job, then give the slot back."""
    try:
        if request.judge is None:
            result: JobResult = await pool.execute(job_id, request, slot, note, limits)
            return result
        try:
            return await judge(job_id, request, slot, note, limits)
        finally:
            await pool.release(slot)
    finally:
        _cancelled.discard(job_id)
