"""`torchdrill content verify`: the banks' snippets and answer keys, run the way /run runs.

CI checks the banks in warm interpreters on its own torch; this runs them through this
host's sandbox (the runner's pool of templates, /run's limits) on the torch that serves
members, and judges each run with the same rules as `content check --run`
(`bot.core.content.keys.snippet_failures`). By default on CPU slots, skipping questions
marked ``device: cuda``; with ``device=cuda`` only those, on this host's GPU slots, and
refused (never run on CPU instead) when the host has no GPU or its torch has no CUDA.

It lives on the bot's side, beside bot/snippet_pool.py (the warm pool `content check --run`
uses): it reads banks, and the runner imports nothing of the bot. It needs the runner extra.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field

from bot.core.content.bank import Bank, Library, Problem, Question
from bot.core.content.keys import Outcome, snippet_failures
from runner.gpus import detect_gpus
from runner.jobs import Device, Limits
from runner.outcome import verdict
from runner.pool import LocalPool
from runner.sandbox import Gpu, RawOutcome
from runner.settings import RunnerSettings
from runner.versions import Runtime

SCRIPT = "snippet.py"  # the name the template compiles a job under
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class Verified:
    problems: list[Problem]
    disagreeing: list[str]  # ids of the questions whose runs contradict them, in bank order
    ran: int  # snippets run (after --sample)
    runnable: int  # runnable snippets of the questions for this device
    runtime: Runtime | None
    skipped: int = 0  # runnable snippets of questions claiming another device
    agreed: list[str] = field(default_factory=list)  # ids every snippet of which ran and agreed
    devices: dict[str, str] = field(default_factory=dict)  # question id -> the GPU's name (or cpu)


class NoCudaError(RuntimeError):
    """``--device cuda`` on a host that cannot run CUDA: refused, nothing recorded."""


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


def for_device(question: Question, device: str) -> bool:
    """Whether a verify run on ``device`` (cpu or cuda) runs this question."""
    return (question.device or "cpu") == device


def pick(library: Library, sample: int | None, seed: int,
         device: str = "cpu") -> list[tuple[Bank, Question, int]]:
    """Every runnable snippet for the device, or `sample` of them chosen with `seed`, in bank order."""
    jobs = [(bank, q, i) for bank in library.banks for q in bank.questions
            for i, s in enumerate(q.code) if s.runnable and for_device(q, device)]
    if sample is not None and sample < len(jobs):
        keep = set(random.Random(seed).sample(range(len(jobs)), max(0, sample)))
        jobs = [job for n, job in enumerate(jobs) if n in keep]
    return jobs


async def run_in_sandbox(programs: list[str], settings: RunnerSettings,
                         gpus: list[Gpu] | None = None) -> tuple[
        list[tuple[Outcome, str]], Runtime | None]:
    """Run each program on a fresh pool: on CPU slots, or on these GPUs' slots when given.
    Returns (outcome, device label of the slot) in the order given."""
    pool = LocalPool(settings, gpus=gpus or [])
    limits = settings.limits()
    await pool.start()
    if gpus and not (pool.runtime and pool.runtime.cuda):
        await pool.close()
        raise NoCudaError("the sandbox's torch has no CUDA (a CPU build); device: cuda claims "
                          "need a CUDA build of torch")

    async def one(n: int, program: str) -> tuple[Outcome, str]:
        slot, _ = await pool.acquire(Device.GPU if gpus else Device.CPU)
        try:
            raw = await slot.run(f"verify-{n}", program, limits)
        finally:
            await pool.release(slot)
        return to_outcome(raw, limits), slot.gpu.name if slot.gpu else slot.device_label

    try:
        outcomes = await asyncio.gather(*(one(n, p) for n, p in enumerate(programs)))
    finally:
        await pool.close()
    return list(outcomes), pool.runtime


def verify(library: Library, settings: RunnerSettings, *, sample: int | None = None,
           seed: int = 0, device: str = "cpu") -> Verified:
    """Run the chosen snippets through the sandbox; a problem per disagreement.

    ``device="cuda"`` runs only ``device: cuda`` questions, on GPU slots; it raises
    NoCudaError before running anything when this host has no GPU or no CUDA torch."""
    counts = {d: sum(s.runnable for q in library.questions if for_device(q, d) for s in q.code)
              for d in ("cpu", "cuda")}
    gpus: list[Gpu] | None = None
    if device == "cuda":
        gpus = detect_gpus(settings.gpus)
        if not gpus:
            raise NoCudaError("this host has no CUDA GPU (nvidia-smi lists none); device: cuda "
                              "claims are verified on a GPU, never on CPU instead")
    jobs = pick(library, sample, seed, device)
    ran, runtime = asyncio.run(
        run_in_sandbox([q.code[i].program() for _, q, i in jobs], settings, gpus))
    failures = [snippet_failures(q, i, outcome) for (_, q, i), (outcome, _) in zip(jobs, ran, strict=True)]
    problems = [Problem(bank.path, bank.line_of(q.id, "code", i), failure)
                for (bank, q, i), found in zip(jobs, failures, strict=True) for failure in found]
    ids = list(dict.fromkeys(q.id for (_, q, _), found in zip(jobs, failures, strict=True) if found))
    devices = {q.id: label for (_, q, _), (_, label) in zip(jobs, ran, strict=True)}
    whole = {q.id for q in library.questions
             if sum(s.runnable for s in q.code) == sum(job[1] is q for job in jobs)}
    agreed = [qid for qid in dict.fromkeys(q.id for _, q, _ in jobs) if qid in whole and qid not in ids]
    other = "cuda" if device == "cpu" else "cpu"
    return Verified(problems, ids, len(jobs), counts[device], runtime,
                    skipped=counts[other] if device == "cpu" else 0, agreed=agreed, devices=devices)
