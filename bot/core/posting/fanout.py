"""Scheduled posts as queued work: many channels firing at the same minute never pile up.

A fire only enqueues its channel; a bounded pool of posting workers (sized below the database
pool) takes the work in order, and each post first waits for its platform's pace (a token
bucket under the platform's global budget), so thousands of fires make neither a thundering
herd on the database nor a burst of 429s. Work is keyed: a channel already queued or in flight
is not queued twice. A job that fails is not retried here: the claim row says what is left
(no claim: the periodic sweep of missing posts enqueues it again; an unsent claim: its lease is
expired and the sweep of stale claims finishes it), so nothing depends on this process's memory.

Missed and late posts are counted (metrics, /readyz detail) and named in the log once per
channel and day, however often the sweep retries them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field

from bot.observability.metrics import POSTING_QUEUE_DEPTH, POSTS_LATE, POSTS_MISSED

log = logging.getLogger(__name__)

POSTING_WORKERS = 16  # one connection each at a time: below the pool (10 + 20 overflow)
# Scheduled posts per second per platform: under Discord's global 50 requests/s, leaving room
# for clicks, reveals and edits; Slack's chat.postMessage is paced per channel by the platform.
POSTS_PER_S = {"discord": 40.0, "slack": 40.0}
DEFAULT_POSTS_PER_S = 40.0
NOTED_CAP = 100_000  # (channel, day) pairs remembered so a miss is logged once
# Reveals due at the same moment (yesterday's posts of every channel at 09:00) run this many at
# once, each paced so its platform requests (the results edit, the thread, the explanation in
# it) stay within the same per-platform budget as the posts.
REVEAL_WORKERS = 8
REQUESTS_PER_REVEAL = 3
PUBLISH_TRIES = 4  # a reveal's publish after a 429 beyond the client's retries: 0.5 s, 1 s, 2 s
RETRY_BACKOFF_S = 0.5


class Pace:
    """A token bucket: ``rate`` takes per second with bursts of ``burst``; waiters queue FIFO."""

    def __init__(self, rate: float, burst: float = 1.0) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = burst
        self._stamp: float | None = None
        self._lock = asyncio.Lock()

    async def take(self) -> None:
        async with self._lock:
            loop = asyncio.get_running_loop()
            now = loop.time()
            if self._stamp is not None:
                self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            if self._tokens < 1.0:
                wait = (1.0 - self._tokens) / self.rate
                await asyncio.sleep(wait)
                self._stamp = loop.time()
                self._tokens = 1.0
            self._tokens -= 1.0


class PacedBatch:
    """Runs batches of keyed calls at most ``workers`` at once (all batches together), each
    after its platform's pace.

    One call failing is logged and does not stop the others; ``peak`` is the most that ran at
    once (what the tests bound)."""

    def __init__(self, workers: int, per_s: dict[str, float], default_per_s: float,
                 what: str) -> None:
        self.workers = workers
        self._rates = dict(per_s)
        self._default = default_per_s
        self._paces: dict[str, Pace] = {}
        self._what = what
        self._slots = asyncio.Semaphore(workers)  # shared by batches running at once
        self.in_flight = 0
        self.peak = 0

    def pace(self, platform: str) -> Pace:
        if platform not in self._paces:
            self._paces[platform] = Pace(self._rates.get(platform, self._default))
        return self._paces[platform]

    async def retrying(self, platform: str, call: Callable[[], Awaitable[object]],
                       tries: int = PUBLISH_TRIES) -> None:
        """``call``, tried again with doubling backoff, each try after the platform's pace."""
        for attempt in range(tries):
            try:
                await call()
                return
            except Exception as exc:
                if attempt == tries - 1:
                    raise
                log.warning("%s: a platform call failed (%s: %s); trying again", self._what,
                            type(exc).__name__, exc)
            await asyncio.sleep(RETRY_BACKOFF_S * 2**attempt)
            await self.pace(platform).take()

    async def run(self, calls: Sequence[tuple[Hashable, str, Callable[[], Awaitable[object]]]]) -> int:
        """Run every (key, platform, call); returns how many failed."""
        todo = deque(calls)
        failed = 0

        async def worker() -> None:
            nonlocal failed
            while todo:
                key, platform, call = todo.popleft()
                async with self._slots:
                    await self.pace(platform).take()
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                    try:
                        await call()
                    except Exception:  # one broken item must not block the others
                        failed += 1
                        log.exception("%s %s failed", self._what, key)
                    finally:
                        self.in_flight -= 1

        await asyncio.gather(*(worker() for _ in range(min(self.workers, len(todo)))))
        return failed


def reveal_batch() -> PacedBatch:
    """The reveal sweep's pool: reveals per second = the posting pace / requests per reveal."""
    return PacedBatch(REVEAL_WORKERS,
                      {name: rate / REQUESTS_PER_REVEAL for name, rate in POSTS_PER_S.items()},
                      DEFAULT_POSTS_PER_S / REQUESTS_PER_REVEAL, "reveal of post")


@dataclass(frozen=True)
class Job:
    key: Hashable  # one job per key queued or in flight
    platform: str
    run: Callable[[], Awaitable[object]]


@dataclass
class PostingStats:
    """What /readyz shows: queue depth and posts that were late or missed in this process."""

    queued: int = 0
    in_flight: int = 0
    done: int = 0
    failed: int = 0
    late: int = 0
    missed: int = 0
    last_missed: list[str] = field(default_factory=list)  # "platform:channel local-date"

    def as_detail(self) -> dict[str, object]:
        return {"queued": self.queued, "in_flight": self.in_flight, "done": self.done,
                "failed": self.failed, "late": self.late, "missed": self.missed,
                "last_missed": list(self.last_missed)}


class PostingQueue:
    """Keyed jobs run by ``workers`` tasks, each post paced per platform."""

    def __init__(self, workers: int = POSTING_WORKERS,
                 posts_per_s: dict[str, float] | None = None) -> None:
        self.workers = workers
        rates = {**POSTS_PER_S, **(posts_per_s or {})}
        self._paces = {name: Pace(rate) for name, rate in rates.items()}
        self._queue: asyncio.Queue[Job] = asyncio.Queue()
        self._keys: set[Hashable] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._idle = asyncio.Event()
        self._idle.set()
        self._noted: dict[Hashable, None] = {}
        self.stats = PostingStats()

    def _pace(self, platform: str) -> Pace:
        if platform not in self._paces:
            self._paces[platform] = Pace(DEFAULT_POSTS_PER_S)
        return self._paces[platform]

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._work(), name=f"posting worker {i}")
                           for i in range(self.workers)]

    def stop(self) -> None:
        """Cancel the workers; queued work is left to the claim rows and the next sweep."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()

    def put(self, job: Job) -> bool:
        """Queue ``job`` unless one with its key is queued or running; True if queued."""
        if job.key in self._keys:
            return False
        self._keys.add(job.key)
        self._idle.clear()
        self._queue.put_nowait(job)
        self.stats.queued = self._queue.qsize()
        POSTING_QUEUE_DEPTH.set(self._queue.qsize())
        return True

    def pending(self) -> int:
        return len(self._keys)

    async def drained(self, timeout: float) -> None:
        """Wait until nothing is queued or running (tests, benches, shutdown)."""
        await asyncio.wait_for(self._idle.wait(), timeout)

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            self.stats.queued = self._queue.qsize()
            POSTING_QUEUE_DEPTH.set(self._queue.qsize())
            self.stats.in_flight += 1
            try:
                await self._pace(job.platform).take()
                await job.run()
                self.stats.done += 1
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.stats.failed += 1
                if self.note(("failed", job.key)):
                    log.warning("scheduled post %s failed; the sweep retries it: %s: %s",
                                job.key, type(exc).__name__, exc)
            finally:
                self.stats.in_flight -= 1
                self._keys.discard(job.key)
                self._queue.task_done()
                if not self._keys:
                    self._idle.set()

    def note(self, key: Hashable) -> bool:
        """True the first time ``key`` is noted: what is logged once, not once per retry."""
        if key in self._noted:
            return False
        self._noted[key] = None
        while len(self._noted) > NOTED_CAP:
            self._noted.pop(next(iter(self._noted)))
        return True

    def late(self, kind: str, platform: str, channel: str, day: str) -> None:
        """A post found missing past its fire time by the sweep (it is being sent now)."""
        if self.note(("late", kind, platform, channel, day)):
            self.stats.late += 1
            POSTS_LATE.labels(kind=kind).inc()
            log.warning("%s post of %s:%s for %s was missing past its time; posting it late",
                        kind, platform, channel, day)

    def missed(self, kind: str, platform: str, channel: str, day: str) -> None:
        """A post still missing when its catch-up grace ran out: it will not be posted."""
        if self.note(("missed", kind, platform, channel, day)):
            self.stats.missed += 1
            self.stats.last_missed = [*self.stats.last_missed, f"{platform}:{channel} {day}"][-20:]
            POSTS_MISSED.labels(kind=kind).inc()
            log.error("%s post of %s:%s for %s was missed (not posted within the catch-up grace)",
                      kind, platform, channel, day)
