"""Pure runner rules: admission messages, rate window, verdicts, wire format."""

from __future__ import annotations

import signal

import pytest

from runner.fairness import RateLimiter, check_code_size
from runner.jobs import Device, JobRejected, JobRequest, JobResult, JobState, Limits
from runner.outcome import build_result, verdict
from runner.sandbox import RawOutcome

LIMITS = Limits(timeout_s=20, cpu_time_s=15, memory_mb=2048, file_size_mb=16,
                display_chars=10)


def raw(exit_code: int | None = 0, killed: str | None = None, stdout: bytes = b"",
        stderr: bytes = b"", over: bool = False) -> RawOutcome:
    return RawOutcome(exit_code, killed, 1.23456, stdout, stderr, over, 2048, None)


def test_code_size_message_names_both_sizes() -> None:
    check_code_size("x" * 20_000, 20_000)
    with pytest.raises(JobRejected, match=r"code too large: 20,001 bytes \(the limit is 20,000"):
        check_code_size("x" * 20_001, 20_000)
    with pytest.raises(JobRejected, match="no code"):
        check_code_size("  \n", 20_000)
    # bytes, not characters: a multi-byte snippet is measured as sent
    with pytest.raises(JobRejected, match="20,001 bytes"):
        check_code_size("é" * 10_000 + "x", 20_000)
    # a null byte: Python would refuse it with no place named, so submission names it
    with pytest.raises(JobRejected, match="character 3 is a null byte"):
        check_code_size("ab\x00cd", 20_000)


def test_rate_limiter_sliding_window_and_retry_time() -> None:
    limiter = RateLimiter(per_minute=2)
    limiter.check("a", now=100.0)
    limiter.check("a", now=130.0)
    limiter.check("b", now=130.0)  # members are counted separately
    with pytest.raises(JobRejected, match="try again in 30 s"):
        limiter.check("a", now=130.0)
    limiter.check("a", now=160.5)  # the first hit has left the window


@pytest.mark.parametrize(("outcome", "state", "message"), [
    (raw(0), JobState.DONE, None),
    (raw(None, "timeout"), JobState.TIMEOUT, "killed: wall-time limit 20 s"),
    (raw(-signal.SIGXCPU), JobState.TIMEOUT, "killed: CPU-time limit 15 s"),
    (raw(-signal.SIGXFSZ), JobState.FAILED, "killed: file size limit 16 MB exceeded"),
    (raw(-signal.SIGSEGV), JobState.FAILED, "killed by signal SIGSEGV"),
    (raw(None, "memory"), JobState.FAILED, "killed: memory limit 2048 MB exceeded"),
    (raw(1, stderr=b"Traceback...\nMemoryError\n"), JobState.FAILED,
     "memory limit 2048 MB exceeded"),
    (raw(1, stderr=b"OSError: [Errno 28] No space left on device"), JobState.FAILED,
     "disk limit: the job's temporary space is full"),
    (raw(1, stderr=b"ValueError: nope"), JobState.FAILED, None),
    (raw(None, "cancelled"), JobState.CANCELLED, "cancelled"),
])
def test_verdicts(outcome: RawOutcome, state: JobState, message: str | None) -> None:
    assert verdict(outcome, LIMITS) == (state, message)


def test_long_output_is_clipped_with_a_note_and_kept_whole() -> None:
    request = JobRequest("print()", "m:a", {"channel": "1"}, Device.CPU)
    result = build_result("j1", request, raw(0, stdout=b"0123456789abcdef", stderr=b"warn"),
                          LIMITS, device_used="cpu", device_note=None)
    assert result.stdout.startswith("0123456789\n… (truncated: 6 more characters")
    assert result.output_truncated
    assert result.full_output == b"0123456789abcdef\n--- stderr ---\nwarn"
    assert result.duration_s == 1.235 and result.peak_rss_mb == 2.0
    again = JobResult.from_dict(result.to_dict())
    assert again == result


def test_refusals_count_in_words_members_read() -> None:
    from runner.fairness import queue_full, rate_limited

    assert queue_full(1).message == "the queue is full (1 job waiting); please try again in a minute"
    assert queue_full(40).message == "the queue is full (40 jobs waiting); please try again in a minute"
    assert rate_limited(1, 0.2).message == "rate limit: at most 1 run per minute; try again in 1 s"
    assert rate_limited(6, 12.5).message == "rate limit: at most 6 runs per minute; try again in 13 s"
