"""Turns what the sandbox saw into the state and the one-line verdict a member reads.

This is the single place that decides "why did my snippet stop"; adapters only display it.
"""

from __future__ import annotations

import signal

from runner.jobs import JobRequest, JobResult, JobState, Limits
from runner.sandbox import RawOutcome

PROCESS_LIMIT = "process limit {max_procs} reached (fork/threads)"
# Guesses from stderr, used only where the kernel keeps no counter for the limit. With
# cgroups in force, memory and process verdicts come from the kernel, never from here.
_RLIMIT_VERDICTS: tuple[tuple[str, str], ...] = (
    ("MemoryError", "memory limit {memory_mb} MB exceeded"),
    ("can't allocate memory", "memory limit {memory_mb} MB exceeded"),
    ("Cannot allocate memory", "memory limit {memory_mb} MB exceeded"),
    ("Resource temporarily unavailable", PROCESS_LIMIT),
)
_STDERR_VERDICTS: tuple[tuple[str, str], ...] = (
    ("No space left on device", "disk limit: the job's temporary space is full"),
    ("File too large", "file size limit {file_size_mb} MB exceeded"),
    ("Network is unreachable", "no network access: snippets run without a network"),
    ("Connection refused", "no network access: snippets run without a network"),
    ("Read-only file system", "only the job's temporary directory is writable"),
    ("Permission denied", "permission denied: a snippet can only write in its own "
                          "temporary directory and cannot read the bot's files"),
)


def verdict(raw: RawOutcome, limits: Limits) -> tuple[JobState, str | None]:
    if raw.killed == "timeout":
        return JobState.TIMEOUT, f"killed: wall-time limit {limits.timeout_s:g} s"
    if raw.killed == "memory":
        return JobState.FAILED, f"killed: memory limit {limits.memory_mb} MB exceeded"
    if raw.killed == "output":
        return JobState.FAILED, (f"killed: output limit {limits.output_cap_bytes} bytes "
                                 "exceeded (output so far is attached)")
    if raw.killed == "cancelled":
        return JobState.CANCELLED, "cancelled"
    if raw.killed == "crashed":
        if raw.restarted:
            return JobState.FAILED, ("the sandbox stopped during this job; it has been "
                                     "restarted, other jobs are unaffected")
        return JobState.FAILED, ("the sandbox stopped during this job and could not be "
                                 "restarted yet; the next job will try again")
    code = raw.exit_code
    if code == 0:
        return JobState.DONE, None
    if code is not None and code < 0:
        sig = -code
        if sig == signal.SIGXCPU:
            return JobState.TIMEOUT, f"killed: CPU-time limit {limits.cpu_time_s} s"
        if sig == signal.SIGXFSZ:
            return JobState.FAILED, f"killed: file size limit {limits.file_size_mb} MB exceeded"
        return JobState.FAILED, f"killed by signal {signal.Signals(sig).name}"
    if raw.pids_limited:
        return JobState.FAILED, PROCESS_LIMIT.format(**limits.to_dict())
    stderr = raw.stderr.decode(errors="replace")
    tail = stderr[-4000:]
    guesses = _STDERR_VERDICTS if raw.kernel_limits else _RLIMIT_VERDICTS + _STDERR_VERDICTS
    for fragment, text in guesses:
        if fragment in tail:
            return JobState.FAILED, text.format(**limits.to_dict())
    return JobState.FAILED, None  # an ordinary exception: the traceback says it all


def _clip(data: bytes, chars: int) -> tuple[str, bool]:
    text = data.decode(errors="replace")
    if len(text) <= chars:
        return text, False
    more = len(text) - chars
    return text[:chars] + f"\n… (truncated: {more} more characters; full output attached)", True


def build_result(job_id: str, request: JobRequest, raw: RawOutcome, limits: Limits, *,
                 device_used: str, device_note: str | None,
                 torch_version: str | None = None) -> JobResult:
    state, message = verdict(raw, limits)
    stdout, cut_out = _clip(raw.stdout, limits.display_chars)
    stderr, cut_err = _clip(raw.stderr, limits.display_chars)
    truncated = cut_out or cut_err or raw.output_over_cap
    full = None
    if truncated:
        full = raw.stdout + (b"\n--- stderr ---\n" + raw.stderr if raw.stderr else b"")
        if raw.output_over_cap:
            full += b"\n--- output limit reached; the rest was discarded ---\n"
    return JobResult(
        job_id=job_id, request=request, state=state, stdout=stdout, stderr=stderr,
        output_truncated=truncated, full_output=full, exit_code=raw.exit_code,
        duration_s=round(raw.duration_s, 3), device_used=device_used, device_note=device_note,
        torch_version=torch_version,
        peak_rss_mb=round(raw.peak_rss_kb / 1024, 1) if raw.peak_rss_kb else None,
        gpu_max_allocated_mb=(round(raw.gpu_max_allocated_bytes / 2**20, 1)
                              if raw.gpu_max_allocated_bytes is not None else None),
        error_message=message)
