"""`torchdrill content verify`: the banks' snippets and answer keys, run the way /run runs.

CI checks the banks in warm interpreters on its own torch; this runs them through this
host's sandbox (the runner's pool of templates, /run's limits) on the torch that serves
members, and judges each run with the same rules as `content check --run`
(`bot.core.content.keys.snippet_failures`). Only CPU slots: the banks are verified on CPU.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass

from bot.core.content.bank import Bank, Library, Problem, Question
from bot.core.content.keys import Outcome, snippet_failures
from runner.jobs import Device, Limits
from runner.outcome import verdict
from runner.pool import LocalPool
from runner.sandbox import RawOutcome
from runner.settings import RunnerSettings
from runner.versions import Runtime

SCRIPT = "snippet.py"  # the name the template compiles a job under
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class Verified:
    problems: list[Problem]
    disagreeing: list[str]  # ids of the questions whose runs contradict them, in bank order
    ran: int  # snippets run (after --sample)
    runnable: int  # runnable snippets in the library
    runtime: Runtime | None


def traceback_facts(stderr: str) -> tuple[str | None, int | None]:
    """The final exception's first line and its deepest frame in the snippet, read from the
    last traceback only (a message quoting other frames, like dynamo's "from user code",
    or an earlier chained exception does not count). A SyntaxError has no header."""
    lines = stderr.splitlines()
    headers = [n for n, line in enumerate(lines) if line == "Traceback (most recent call last):"]
    if headers:
        begin = headers[-1] + 1
    else:
        frames = [n for n, line in enumerate(lines) if (m := _FRAME.match(line))
                  and m["file"].endswith(SCRIPT)]
        if not frames:
            return None, None
        begin = frames[-1]
    line_no: int | None = None
    for line in lines[begin:]:
        match = _FRAME.match(line)
        if match:
            if match["file"].endswith(SCRIPT):
                line_no = int(match["line"])
        elif line.strip() and not line.startswith(" "):
            return line[:300], line_no
    return None, line_no


def to_outcome(raw: RawOutcome, limits: Limits) -> Outcome:
    """The sandbox's raw view in the judge's terms (no returncode = did not finish)."""
    stdout = raw.stdout.decode(errors="replace")
    stderr = raw.stderr.decode(errors="replace")
    _, message = verdict(raw, limits)
    setup_failed = raw.exit_code == 126 and stderr.startswith("sandbox setup failed")
    if raw.killed or raw.exit_code is None or raw.exit_code < 0 or setup_failed:
        last = stderr.strip().splitlines()[-1:]
        note = message or (last[0] if last else "the run did not finish")
        return Outcome(None, stdout, stderr, raw.duration_s, note=f"in the sandbox: {note}")
    error, line = traceback_facts(stderr) if raw.exit_code else (None, None)
    return Outcome(raw.exit_code, stdout, stderr, raw.duration_s, error=error, error_line=line)


def pick(library: Library, sample: int | None, seed: int) -> list[tuple[Bank, Question, int]]:
    """Every runnable snippet, or `sample` of them chosen with `seed`, in bank order."""
    jobs = [(bank, q, i) for bank in library.banks for q in bank.questions
            for i, s in enumerate(q.code) if s.runnable]
    if sample is not None and sample < len(jobs):
        keep = set(random.Random(seed).sample(range(len(jobs)), max(0, sample)))
        jobs = [job for n, job in enumerate(jobs) if n in keep]
    return jobs


async def run_in_sandbox(programs: list[str], settings: RunnerSettings) -> tuple[
        list[Outcome], Runtime | None]:
    """Run each program on a CPU slot of a fresh pool; outcomes in the order given."""
    pool = LocalPool(settings, gpus=[])
    limits = settings.limits()
    await pool.start()

    async def one(n: int, program: str) -> Outcome:
        slot, _ = await pool.acquire(Device.CPU)
        try:
            raw = await slot.run(f"verify-{n}", program, limits)
        finally:
            await pool.release(slot)
        return to_outcome(raw, limits)

    try:
        outcomes = await asyncio.gather(*(one(n, p) for n, p in enumerate(programs)))
    finally:
        await pool.close()
    return list(outcomes), pool.runtime


def verify(library: Library, settings: RunnerSettings, *, sample: int | None = None,
           seed: int = 0) -> Verified:
    """Run the chosen snippets through the sandbox; a problem per disagreement."""
    runnable = sum(s.runnable for q in library.questions for s in q.code)
    jobs = pick(library, sample, seed)
    outcomes, runtime = asyncio.run(
        run_in_sandbox([q.code[i].program() for _, q, i in jobs], settings))
    problems = [Problem(bank.path, bank.line_of(q.id, "code", i), failure)
                for (bank, q, i), outcome in zip(jobs, outcomes, strict=True)
                for failure in snippet_failures(q, i, outcome)]
    ids = list(dict.fromkeys(q.id for (_, q, i), o in zip(jobs, outcomes, strict=True)
                             if snippet_failures(q, i, o)))
    return Verified(problems, ids, len(jobs), runnable, runtime)
