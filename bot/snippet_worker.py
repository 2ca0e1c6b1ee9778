"""A warm interpreter that runs bank snippets one after another (started by bot/snippet_pool.py).

Importing torch costs more than most snippets, so one process runs many. Each job still gets
what a fresh ``python snippet.py`` would: a new ``__main__`` namespace, an empty temporary
working directory holding the script, its own stdout/stderr (file descriptors, so C-level
output is caught too), and torch's global state reset to a new interpreter's defaults.
A job that leaves threads behind marks the worker dirty and the pool replaces it.

Protocol: one JSON job per line on stdin ``{"program": ...}``; one JSON result per line on
the file descriptor that was stdout at start-up.
"""

from __future__ import annotations

import builtins
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings
from typing import Any, TextIO, TypedDict

TORCH_DEFAULT_SEED = 67280421310721  # torch.initial_seed() of a new interpreter


def _torch_defaults() -> Any:
    try:
        import torch
    except ImportError:  # the pool also runs in environments without torch
        return None
    return torch, torch.get_num_threads()


def _reset_torch(state: Any) -> None:
    if state is None:
        return
    torch, threads = state
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.manual_seed(TORCH_DEFAULT_SEED)
    torch.use_deterministic_algorithms(False)
    torch.autograd.set_detect_anomaly(False)
    torch.set_default_device(None)
    torch.set_printoptions(profile="default")
    torch.set_float32_matmul_precision("highest")
    torch.set_num_threads(threads)
    torch.set_flush_denormal(False)
    torch.set_warn_always(False)
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()


def _deepest_line(exc: BaseException, script: str) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename == script:
        return exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == script]
    return frames[-1].lineno if frames else None


class Baseline(TypedDict):
    """The interpreter state a job starts from and is put back to."""

    cwd: str
    path: list[str]
    environ: dict[str, str]
    filters: list[Any]
    threads: int
    recursion: int
    stdin: TextIO
    devnull: int
    stderr: int


def run_job(program: str, torch_state: Any, baseline: Baseline) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix="snippet-")
    capture = tempfile.mkdtemp(prefix="snippet-io-")
    script = os.path.join(workdir, "snippet.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(program)
    out_path, err_path = os.path.join(capture, "out"), os.path.join(capture, "err")
    out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT)
    err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.close(out_fd)
    os.close(err_fd)
    os.chdir(workdir)
    sys.path[0] = workdir
    sys.argv = [script]
    main = types.ModuleType("__main__")  # a real module: pickle and inspect find its classes
    main.__file__ = script
    main.__builtins__ = builtins  # type: ignore[attr-defined]  # exec's globals need it; ModuleType does not declare it
    namespace = main.__dict__
    worker_main = sys.modules["__main__"]
    sys.modules["__main__"] = main
    returncode, error, line = 0, None, None
    started = time.monotonic()
    try:
        exec(compile(program, script, "exec"), namespace)  # bank snippets are our own code
    except SystemExit as exc:
        code = exc.code
        returncode = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
    except BaseException as exc:  # report whatever the snippet raised
        returncode = 1
        error = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
        line = _deepest_line(exc, script)
        traceback.print_exception(exc)
    seconds = time.monotonic() - started
    sys.modules["__main__"] = worker_main
    real_out, real_err = sys.__stdout__, sys.__stderr__
    assert real_out is not None and real_err is not None  # the pool starts workers with both pipes
    sys.stdout, sys.stderr = real_out, real_err
    sys.stdin = baseline["stdin"]
    real_out.flush()
    real_err.flush()
    os.dup2(baseline["devnull"], 1)
    os.dup2(baseline["stderr"], 2)
    dirty = threading.active_count() > baseline["threads"]
    namespace.clear()
    _restore(baseline, workdir)
    try:
        _reset_torch(torch_state)
    except Exception:  # an unresettable state retires the worker
        dirty = True
    with open(out_path, encoding="utf-8", errors="replace") as fh:
        stdout = fh.read()
    with open(err_path, encoding="utf-8", errors="replace") as fh:
        stderr = fh.read()
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.rmtree(capture, ignore_errors=True)
    return {"returncode": returncode, "stdout": stdout, "stderr": stderr, "seconds": seconds,
            "error": error, "error_line": line, "dirty": dirty}


def _restore(baseline: Baseline, workdir: str) -> None:
    os.chdir(baseline["cwd"])
    sys.path[:] = baseline["path"]
    os.environ.clear()
    os.environ.update(baseline["environ"])
    warnings.filters[:] = baseline["filters"]  # type: ignore[index]  # a list; typeshed says Sequence
    sys.setrecursionlimit(baseline["recursion"])
    gc.enable()
    warnings._filters_mutated()  # type: ignore[attr-defined]  # private, untyped: forget "already shown" marks
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(workdir):
            del sys.modules[name]  # modules the snippet wrote and imported


def main() -> None:
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    jobs = os.fdopen(os.dup(0), "r", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # a snippet reading stdin gets EOF, not jobs
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, "")
    torch_state = _torch_defaults()
    baseline: Baseline = {
        "cwd": os.getcwd(), "path": list(sys.path), "environ": dict(os.environ),
        "filters": list(warnings.filters), "threads": threading.active_count(),
        "recursion": sys.getrecursionlimit(), "stdin": sys.stdin,
        "devnull": os.open(os.devnull, os.O_WRONLY), "stderr": os.dup(2),
    }
    os.dup2(baseline["devnull"], 1)
    results.write(json.dumps({"ready": True}) + "\n")
    results.flush()
    for line in jobs:
        job = json.loads(line)
        results.write(json.dumps(run_job(job["program"], torch_state, baseline)) + "\n")
        results.flush()


if __name__ == "__main__":
    main()
