"""Embedded backend: an in-process asyncio queue feeding this host's sandbox slots.

The default for one machine. The queue lives in memory; the journal makes sure a restart
turns unfinished jobs into INTERRUPTED results instead of silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass

from runner import judging
from runner.fairness import RateLimiter, already_active, check_code_size, queue_full
from runner.jobs import (
    JobRejected,
    JobRequest,
    JobResult,
    JobState,
    Limits,
    Submitted,
    interrupted_result,
)
from runner.journal import Journal
from runner.pool import LocalPool
from runner.sandbox import Slot
from runner.service import RunnerService
from runner.settings import RunnerSettings
from runner.versions import Runtime

log = logging.getLogger(__name__)


@dataclass
class _Queued:
    job_id: str
    request: JobRequest


class EmbeddedRunner(RunnerService):
    def __init__(self, settings: RunnerSettings, *, pool: LocalPool | None = None,
                 limits: Limits | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.limits = limits or settings.limits()
        self._pool = pool
        self._journal: Journal | None = None
        self._pending: list[_Queued] = []
        self._running: dict[str, tuple[_Queued, Slot, asyncio.Task[None]]] = {}
        self._active: dict[str, str] = {}  # requester -> job_id (queued or running)
        self._rate = RateLimiter(settings.rate_per_minute)
        self._wake = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def runtime(self) -> Runtime | None:
        return self._pool.runtime if self._pool is not None else None

    async def start(self) -> None:
        self._journal = Journal(self.settings.journal_path)
        for job_id, request, was_running in self._journal.leftovers():
            await self._deliver(interrupted_result(job_id, request, was_running))
            self._journal.remove(job_id)
        if self._pool is None:
            self._pool = LocalPool(self.settings)
        await self._pool.start()
        self._dispatcher = asyncio.create_task(self._dispatch(), name="runner-dispatch")

    async def close(self) -> None:
        """Graceful stop: members with unfinished jobs are told now, not at the next start."""
        self._closing = True
        if self._dispatcher:
            self._dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dispatcher
        for queued in list(self._pending):
            await self._finish(interrupted_result(queued.job_id, queued.request, False))
        self._pending.clear()
        for job_id, (queued, _, task) in list(self._running.items()):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            if job_id in self._running:
                self._running.pop(job_id)
                await self._finish(interrupted_result(job_id, queued.request, True))
        if self._pool:
            await self._pool.close()
        if self._journal:
            self._journal.close()

    async def submit(self, request: JobRequest) -> Submitted:
        if self._closing or self._dispatcher is None:
            raise JobRejected("the runner is not running right now; try again shortly")
        check_code_size(request.code, self.settings.max_code_bytes)
        if request.requester in self._active:
            raise already_active(self._active[request.requester])
        if len(self._pending) >= self.settings.queue_cap:
            raise queue_full(self.settings.queue_cap)
        self._rate.check(request.requester)
        job_id = uuid.uuid4().hex[:12]
        assert self._journal is not None
        self._journal.add(job_id, request)
        self._active[request.requester] = job_id
        self._pending.append(_Queued(job_id, request))
        self._wake.set()
        return Submitted(job_id, len(self._pending))

    async def position(self, job_id: str) -> int | None:
        if job_id in self._running:
            return 0
        for i, queued in enumerate(self._pending, start=1):
            if queued.job_id == job_id:
                return i
        return None

    async def active_job(self, requester: str) -> str | None:
        return self._active.get(requester)

    async def cancel(self, job_id: str) -> bool:
        for queued in self._pending:
            if queued.job_id == job_id:
                self._pending.remove(queued)
                await self._finish(JobResult(job_id=job_id, request=queued.request,
                                             state=JobState.CANCELLED,
                                             error_message="cancelled before it started"))
                return True
        if job_id in self._running:
            judging.request_cancel(job_id)  # a judge job between two of its case jobs
            await self._running[job_id][1].cancel()
            return True
        return False

    async def _dispatch(self) -> None:
        """First fit in queue order: a GPU job waiting for a GPU does not block CPU jobs."""
        assert self._pool is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            for queued in list(self._pending):
                picked = self._pool.claim(queued.request.device)
                if picked is None:
                    continue
                slot, note = picked
                self._pending.remove(queued)
                assert self._journal is not None
                self._journal.mark_running(queued.job_id)
                task = asyncio.create_task(self._run(queued, slot, note))
                self._running[queued.job_id] = (queued, slot, task)

    async def _run(self, queued: _Queued, slot: Slot, note: str | None) -> None:
        assert self._pool is not None
        try:
            result = await judging.execute(self._pool, queued.job_id, queued.request, slot, note,
                                           self.limits)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug here must still answer the member
            log.exception("job %s failed in the runner", queued.job_id)
            result = JobResult(job_id=queued.job_id, request=queued.request,
                               state=JobState.FAILED, error_message=f"runner error: {exc}")
        self._running.pop(queued.job_id, None)
        self._wake.set()
        await self._finish(result)

    async def _finish(self, result: JobResult) -> None:
        if self._active.get(result.request.requester) == result.job_id:
            del self._active[result.request.requester]
        await self._deliver(result)
        if self._journal:
            self._journal.remove(result.job_id)
