"""The judge's program: its source is embedded whole in each challenge job (the sandbox cannot
import our checkout), and the same functions compute the reference's values outside it.

Inside the job a parent forks a child that runs the member's code; only the parent writes the
one result line to stdout (the child's output goes to a file the parent quotes), and the parent
is made non-dumpable so the child cannot open its fds or memory through /proc. The line holds
values, never a verdict: the verdict is computed outside the sandbox against the reference.
Standard library + torch only.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import math
import os
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

MARK = "TDJ1 "
SEED = 20260
RECORDS_CAP = 600_000
OUTPUT_CAP = 4_000


def _tripwire(name: str) -> Callable[..., Any]:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} is not allowed in this challenge")
    return forbidden


def _forbid(names: list[str]) -> None:
    """Replace each forbidden dotted name (e.g. torch.nn.LayerNorm) in the running process."""
    import importlib
    for dotted in names:
        mod_name, _, attr = dotted.rpartition(".")
        try:
            owner = importlib.import_module(mod_name)
        except ImportError:
            head, _, sub = mod_name.rpartition(".")
            with contextlib.suppress(Exception):
                owner = getattr(importlib.import_module(head), sub)
        with contextlib.suppress(Exception):
            if hasattr(owner, attr):
                setattr(owner, attr, _tripwire(dotted))


def _flatten(obj: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    import torch
    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _flatten(item, f"{prefix}.{i}", out)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _flatten(obj[key], f"{prefix}.{key}", out)
    elif isinstance(obj, bool):
        out[prefix] = torch.tensor(obj)
    elif isinstance(obj, (int, float)):
        out[prefix] = torch.tensor(float(obj), dtype=torch.float64)
    elif obj is None:
        out[prefix + ":none"] = torch.zeros(0)
    else:
        raise TypeError(f"returned a {type(obj).__name__}; expected tensors")
    return out


def _shape(arg: Any) -> str:
    shape = getattr(arg, "shape", None)
    if shape is not None:
        return "×".join(str(n) for n in shape) or "scalar"
    if isinstance(arg, (list, tuple)):
        if len(arg) > 2:
            return f"list of {len(arg)}"
        return "[" + ", ".join(_shape(a) for a in arg) + "]"
    return type(arg).__name__


def load_cases(tests_src: str) -> tuple[dict[str, Any], list[tuple[str, tuple]]]:
    """The hidden tests: `cases()` yields (name, args) pairs; each is drawn after its own seed."""
    import torch
    ns = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math}
    exec(compile(tests_src, "tests.py", "exec"), ns)
    gen, cases, i = ns["cases"](), [], 0
    while True:
        torch.manual_seed(SEED + i)
        try:
            name, args = next(gen)
        except StopIteration:
            return ns, cases
        cases.append((name, tuple(args)))
        i += 1


def _default_run(fn: Callable[..., Any], args: tuple, grad: bool) -> dict[str, Any]:
    import torch
    leaves = []
    if grad:
        for a in args:
            if isinstance(a, torch.Tensor) and a.is_floating_point():
                a.requires_grad_(True)
                leaves.append(a)
    out = fn(*args)
    result = {"out": out}
    if grad and leaves:
        flat = _flatten(out, "out", {})
        outs = [t for t in flat.values() if t.is_floating_point() and t.requires_grad]
        if not outs:
            raise RuntimeError("the output carries no gradient (was the graph cut, e.g. .detach()?)")
        torch.manual_seed(SEED - 1)
        loss = sum((t * torch.randn_like(t)).sum() for t in outs)
        grads = torch.autograd.grad(loss, leaves, allow_unused=True)
        result["grad"] = [g for g in grads]
    return result


def evaluate(spec: dict[str, Any], write: Callable[[dict, bytes], Any], *, forbid: bool = True) -> None:
    """Run every case of `spec` against the code in spec['code']; `write(record)` each result.
    Forbidden names are tripwired in this process (only ever a judge child, never the reference's)."""
    import torch
    tests_ns, cases = load_cases(spec["tests"])
    if forbid:
        _forbid(spec.get("forbid", ()))
    sol = {"__name__": "solution", "torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    try:
        exec(compile(spec["code"], "solution.py", "exec"), sol)
    except BaseException as exc:
        error = f"{type(exc).__name__}: {str(exc)[:300]}".rstrip(": ")
        write({"i": -1, "name": "loading your code", "error": error}, b"")
        return
    device = spec.get("device", "cpu")
    for i, (name, args) in enumerate(cases):
        head = {"i": i, "name": name, "shapes": [_shape(a) for a in args]}
        try:
            if device != "cpu":
                args = tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in args)
            torch.manual_seed(SEED + 1000 + i)
            if "run" in tests_ns:
                result = tests_ns["run"](sol, *args)
            else:
                fn = sol.get(spec["call"])
                if fn is None:
                    raise NameError(f"your code does not define {spec['call']}")
                result = _default_run(fn, args, spec.get("grad", False))
            flat = _flatten(result, "r", {})
            head["dev"] = sorted({t.device.type for t in flat.values()})
            blob = _save({k: t.detach().cpu() for k, t in flat.items()})
        except BaseException as exc:  # SystemExit included: calling exit() fails the case
            head["error"] = f"{type(exc).__name__}: {str(exc)[:300]}".rstrip(": ")
            blob = b""
        write(head, blob)


def _save(tensors: dict[str, Any]) -> bytes:
    import io

    import torch
    buf = io.BytesIO()
    torch.save(tensors, buf)
    return buf.getvalue()


def pack(head: dict[str, Any], blob: bytes) -> bytes:
    data = json.dumps(head).encode()
    return struct.pack(">II", len(data), len(blob)) + data + blob


def reference_records(spec: dict[str, Any]) -> bytes:
    """The reference's records (trusted code, no fork): bytes in the same framing."""
    chunks = []
    evaluate(spec, lambda head, blob: chunks.append(pack(head, blob)), forbid=False)
    return b"".join(chunks)


def _child(spec: dict[str, Any], res_path: str, out_path: str) -> None:
    code = 0
    try:
        out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.closerange(3, 65536)
        res = open(res_path, "ab", buffering=0)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        sys.stderr = sys.stdout
        import torch
        torch.set_num_threads(1)  # one slot, one core; and a forked OpenMP pool would hang

        def write(head: dict[str, Any], blob: bytes) -> None:
            res.write(pack(head, blob))
        evaluate(spec, write)
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
    except BaseException:
        code = 1
    os._exit(code)


def _wait(pid: int, deadline_s: float) -> bool:
    """Wait for the child at most deadline_s; True if it finished, False if it was killed."""
    try:
        fd = os.pidfd_open(pid)
        ready, _, _ = select.select([fd], [], [], deadline_s)
        os.close(fd)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return bool(ready)
    except (AttributeError, OSError):
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return True
            time.sleep(0.005)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False


def _tail(path: str, cap: int) -> tuple[bytes, int]:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - cap))
            return f.read(cap), size
    except OSError:
        return b"", 0


def run_submission(spec: dict[str, Any], emit: bool = True) -> str:
    """Fork, run the member's code in the child, return (and print) the one result line."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    work = tempfile.mkdtemp(prefix="judge-")
    res_path, out_path = os.path.join(work, "r"), os.path.join(work, "o")
    sys.stdout.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(spec, res_path, out_path)
    finished = _wait(pid, float(spec.get("deadline_s", 15)))
    elapsed = time.monotonic() - start
    with open(res_path, "ab"):
        pass
    records, size = _tail(res_path, RECORDS_CAP + 1)
    output, out_size = _tail(out_path, OUTPUT_CAP)
    line = MARK + json.dumps({
        "finished": finished, "elapsed_s": round(elapsed, 3),
        "records": base64.b64encode(records[:RECORDS_CAP]).decode() if size <= RECORDS_CAP else "",
        "records_over_cap": size > RECORDS_CAP,
        "output": output.decode("utf-8", "replace"), "output_cut": out_size > OUTPUT_CAP,
    })
    for name in (res_path, out_path):
        with contextlib.suppress(OSError):
            os.unlink(name)
    with contextlib.suppress(OSError):
        os.rmdir(work)
    if emit:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    return line


def _reference_main() -> None:
    """`python -I judge_harness.py --reference` reads one spec (JSON) and writes its records."""
    spec = json.loads(sys.stdin.read())
    data = reference_records(spec)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--reference"]:
    _reference_main()
