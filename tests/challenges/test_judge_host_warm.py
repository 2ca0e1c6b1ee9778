"""The trusted judge host is warm: torch is imported once per worker, and each submission is a
fresh fork of that process (its own cases and expected values, killed when it is done), so a
/submit no longer waits 1-2 s for torch's import. A host that has died is started again."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from runner import judging
from runner.judging import TrustedHost
from tests.support.judge import problem_of

CHALLENGE = problem_of("stable-softmax")
ASK = {"spec": CHALLENGE.spec.to_dict(), "reference": CHALLENGE.reference, "secret": 7,
       "deadline_s": 5.0}


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def gone(pid: int) -> bool:
    """Bounded wait for a killed process to leave /proc (its parent's kernel reaps it)."""
    deadline = asyncio.get_running_loop().time() + 10
    while Path(f"/proc/{pid}").exists():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def test_each_submission_is_a_fresh_fork_of_the_warm_host_and_dies_with_it() -> None:
    async with TrustedHost() as first:
        ready = await first.ask(ASK)
        assert first.pid is not None and len(ready["cases"]) == 7
        warm = judging.host_forker().proc.pid
        assert parent_of(first.pid) == warm and first.pid != os.getpid()
    assert await gone(first.pid)
    async with TrustedHost() as second:
        assert second.pid is not None and second.pid != first.pid
        assert parent_of(second.pid) == warm  # the same warm host: torch imported once
        assert (await second.ask(ASK))["cases"] == ready["cases"]  # same secret, same cases


async def test_a_warm_host_that_died_is_started_again() -> None:
    forker = judging.host_forker()
    forker.proc.kill()
    forker.proc.wait()
    async with TrustedHost() as host:
        assert "cases" in await host.ask(ASK)
        assert host.pid is not None
        assert parent_of(host.pid) == judging.host_forker().proc.pid != forker.proc.pid


async def test_a_warm_host_that_cannot_take_a_submission_is_replaced_once() -> None:
    broken = judging.host_forker()
    broken.control.close()  # alive, but the next spawn fails
    async with TrustedHost() as host:
        assert "cases" in await host.ask(ASK)
        assert host.pid is not None
        fresh = judging.host_forker()
        assert fresh is not broken and parent_of(host.pid) == fresh.proc.pid
    assert broken.closed and broken.proc.poll() is not None  # the old one was stopped
