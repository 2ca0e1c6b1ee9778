"""Admission rules for /run: code size, one job at a time per member, a per-member rate
limit and a global queue cap. The member-facing wording lives here, once, for both backends.
"""

from __future__ import annotations

import math
import time
from collections import deque

from runner.jobs import JobRejected


def check_code_size(code: str, max_bytes: int) -> None:
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate: no byte sequence can carry it
        raise JobRejected(f"code rejected: character {exc.start + 1} is not valid text (a lone "
                          "surrogate); paste the snippet again as plain text") from None
    null = code.find("\x00")  # Python would refuse it too, with an error that names no place
    if null >= 0:
        raise JobRejected(f"code rejected: character {null + 1} is a null byte, which Python "
                          "code cannot hold; paste the snippet again as plain text")
    if size > max_bytes:
        raise JobRejected(f"code too large: {size:,} bytes (the limit is {max_bytes:,} bytes); "
                          "trim it or split it into smaller snippets")
    if not code.strip():
        raise JobRejected("there is no code to run")


def already_active(job_id: str) -> JobRejected:
    """The bot words this with its cancel command (bot.core.runs.desk); this text is for
    callers without one."""
    return JobRejected(f"you already have a running job ({job_id}); wait for its result "
                       "in its thread, then run again", active_job=job_id)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def queue_full(cap: int) -> JobRejected:
    return JobRejected(f"the queue is full ({_count(cap, 'job')} waiting); please try again in a minute")


def rate_limited(per_minute: int, retry_after_s: float) -> JobRejected:
    wait = max(1, math.ceil(retry_after_s))
    return JobRejected(f"rate limit: at most {_count(per_minute, 'run')} per minute; "
                       f"try again in {wait} s")


class RateLimiter:
    """Sliding one-minute window per member (embedded mode; Redis mode uses a sorted set)."""

    def __init__(self, per_minute: int, window_s: float = 60.0) -> None:
        self.per_minute = per_minute
        self.window_s = window_s
        self._hits: dict[str, deque[float]] = {}

    def check(self, requester: str, now: float | None = None) -> None:
        """Raise if over the limit; otherwise count this run."""
        now = time.monotonic() if now is None else now
        hits = self._hits.setdefault(requester, deque())
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) >= self.per_minute:
            raise rate_limited(self.per_minute, hits[0] + self.window_s - now)
        hits.append(now)
