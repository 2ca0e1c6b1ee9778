"""Run many bank snippets fast: a few warm interpreters (bot/snippet_worker.py), not one each.

CI and ``torchdrill content check --run`` execute every runnable snippet and executable key.
A new interpreter per snippet costs a torch import each time; here a few workers import it
once and reset between jobs. Snippets that need a process of their own (threads, DDP,
DataLoader workers, ``isolate: true``) still get a fresh ``python snippet.py``. A worker
that times out, crashes or is left dirty is replaced, so one bad snippet costs one job.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bot.core.content.bank import Snippet
from bot.core.content.keys import Outcome

WORKER = Path(__file__).with_name("snippet_worker.py")
TIMEOUT_S = 120
JOBS_PER_WORKER = 60  # bound what one interpreter accumulates (compiled graphs, caches)
ENV = {
    "CUDA_VISIBLE_DEVICES": "",  # like the CPU CI machines
    "OMP_NUM_THREADS": "1",  # several snippets run at once on a small machine
    "PYTHONDONTWRITEBYTECODE": "1",
}
# Code that must not share an interpreter: it forks, spawns, starts threads that outlive it, or
# registers process-wide names (custom ops, compiled extensions) a later snippet may reuse.
NEEDS_OWN_PROCESS = re.compile(
    r"multiprocessing|mp\.spawn|torch\.distributed|init_process_group|num_workers\s*=\s*[1-9]"
    r"|threading|os\._exit|os\.fork|ThreadPool|ProcessPool"
    r"|torch\.library|custom_op|cpp_extension"
)
_TRACE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def needs_own_process(snippet: Snippet) -> bool:
    return snippet.isolate or bool(NEEDS_OWN_PROCESS.search(snippet.program()))


def _env() -> dict[str, str]:
    return {**os.environ, **ENV}


def run_isolated(snippet: Snippet, timeout: float = TIMEOUT_S) -> Outcome:
    """Run the snippet's program as ``python snippet.py`` in a fresh temporary directory."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="snippet-") as tmp:
        script = Path(tmp) / "snippet.py"
        script.write_text(snippet.program(), encoding="utf-8")
        try:
            done = subprocess.run([sys.executable, script.name], cwd=tmp, env=_env(),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            return Outcome(None, _text(exc.stdout), _text(exc.stderr), time.monotonic() - started,
                           note=f"timed out after {timeout:.0f}s")
    error, line = _traceback_facts(done.stderr, script.name) if done.returncode else (None, None)
    return Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - started,
                   error=error, error_line=line)


def _traceback_facts(stderr: str, script_name: str) -> tuple[str | None, int | None]:
    """The exception line and deepest program line of a traceback printed by python."""
    if "Traceback (most recent call last)" not in stderr and "SyntaxError" not in stderr:
        return None, None
    lines = [m for m in _TRACE_LINE.finditer(stderr) if m["file"].endswith(script_name)]
    tail = [ln for ln in stderr.strip().splitlines() if ln and not ln.startswith(" ")]
    return (tail[-1][:300] if tail else None), (int(lines[-1]["line"]) if lines else None)


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data or ""


class _Worker:
    """One warm interpreter; ``run`` sends a job and waits, killing it past the timeout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=_env(), text=True, cwd=tempfile.gettempdir(),
        )
        self.jobs = 0
        self.alive = self._read(TIMEOUT_S) is not None

    def _read(self, timeout: float) -> dict | None:
        timer = threading.Timer(timeout, self.proc.kill)
        timer.start()
        try:
            line = self.proc.stdout.readline() if self.proc.stdout else ""
        finally:
            timer.cancel()
        return json.loads(line) if line else None

    def run(self, program: str, timeout: float) -> Outcome:
        started = time.monotonic()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"program": program}) + "\n")
            self.proc.stdin.flush()
            result = self._read(timeout)
        except (OSError, ValueError):
            result = None
        self.jobs += 1
        if result is None:
            self.alive = False
            elapsed = time.monotonic() - started
            died = self.proc.poll()
            note = (f"timed out after {timeout:.0f}s" if elapsed >= timeout
                    else f"the interpreter died (exit {died})")
            self.close()
            return Outcome(None, "", "", elapsed, note=note)
        if result["dirty"] or self.jobs >= JOBS_PER_WORKER:
            self.alive = False
            self.close()
        return Outcome(result["returncode"], result["stdout"], result["stderr"], result["seconds"],
                       error=result["error"], error_line=result["error_line"])

    def close(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_all(snippets: Sequence[Snippet], workers: int = 2, timeout: float = TIMEOUT_S) -> list[Outcome]:
    """Outcomes in the order given; ``workers`` warm interpreters share the jobs."""
    outcomes: list[Outcome | None] = [None] * len(snippets)
    jobs: queue.Queue[int] = queue.Queue()
    for index in sorted(range(len(snippets)), key=lambda i: not needs_own_process(snippets[i])):
        jobs.put(index)  # slow isolated ones first, so they overlap with the warm ones

    def serve() -> None:
        worker: _Worker | None = None
        try:
            while True:
                try:
                    index = jobs.get_nowait()
                except queue.Empty:
                    return
                snippet = snippets[index]
                if needs_own_process(snippet):
                    outcomes[index] = run_isolated(snippet, timeout)
                    continue
                if worker is None or not worker.alive:
                    worker = _Worker()
                outcomes[index] = worker.run(snippet.program(), timeout)
        finally:
            if worker is not None:
                worker.close()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [o if o is not None else Outcome(None, "", "", 0.0, note="not run") for o in outcomes]
