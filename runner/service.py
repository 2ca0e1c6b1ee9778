"""The runner as the chat adapters see it: submit, cancel, ask the position, get results.

Adapters depend on this module and `runner.jobs` only; which backend runs behind it is a
setting (`runner.factory.make_runner`, which sits above the backends so none of them
imports back into the module that chooses between them).
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from runner.jobs import JobRequest, JobResult, Submitted

if TYPE_CHECKING:
    from runner.versions import Runtime

log = logging.getLogger(__name__)
ResultCallback = Callable[[JobResult], Awaitable[None]]


def attach_explanation(result: JobResult) -> JobResult:
    """Explain well-known PyTorch errors; the catalogue is optional on a runner-only host."""
    if result.stderr and result.explanation is None:
        try:
            from runner.explain import explain
        except ImportError:
            return result
        try:
            result.explanation = explain(result.stderr)
        except Exception:  # a catalogue bug must not lose the member's result
            log.exception("explain() failed for job %s", result.job_id)
    return result


class RunnerService(abc.ABC):
    def __init__(self) -> None:
        self._callbacks: list[ResultCallback] = []

    @property
    def runtime(self) -> Runtime | None:
        """The torch/CUDA/devices this runner serves /run with, where it runs jobs itself
        (None for a queue whose workers are other hosts: they log their own at start)."""
        return None

    def on_result(self, callback: ResultCallback) -> None:
        """Results, including INTERRUPTED ones found at start, are delivered here."""
        self._callbacks.append(callback)

    async def _deliver(self, result: JobResult) -> bool:
        """True when every callback took the result (Redis mode retries otherwise)."""
        attach_explanation(result)
        ok = True
        for callback in self._callbacks:
            try:
                await callback(result)
            except Exception:
                ok = False
                log.exception("result callback failed for job %s", result.job_id)
        return ok

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def submit(self, request: JobRequest) -> Submitted:
        """Queue a job; raises JobRejected with a message for the member."""

    @abc.abstractmethod
    async def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False if it is unknown or already finished."""

    @abc.abstractmethod
    async def position(self, job_id: str) -> int | None:
        """1 = next to run, 0 = running now, None = unknown or finished."""

    @abc.abstractmethod
    async def active_job(self, requester: str) -> str | None:
        """The requester's queued or running job (one at a time), None when there is none."""

    async def cancel_mine(self, requester: str) -> str | None:
        """Cancel the requester's own job; its id, or None when they had none (or it had
        just finished). Nobody can reach another member's job through this."""
        job_id = await self.active_job(requester)
        if job_id is None or not await self.cancel(job_id):
            return None
        return job_id
