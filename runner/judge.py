"""Judging a challenge submission: build the sandbox program, compute the reference's values in
a separate process, and compare what came back into a verdict.

The verdict is decided here, outside the sandbox: the job only ships values (tensors, loaded
with ``torch.load(weights_only=True)``), so printing "passed", patching ``torch.allclose`` or
exiting early cannot change it. Imports nothing from ``bot/``.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import io
import json
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HARNESS_PATH = Path(__file__).with_name("judge_harness.py")
MARK = "TDJ1 "


@dataclass(frozen=True)
class JudgeSpec:
    """What the judge needs of one problem (the bank's schema lives in bot/core/challenges)."""

    tests: str  # Python source defining cases() (and optionally run(sol, *args))
    call: str = ""  # the function the default runner calls
    grad: bool = False  # also compare input gradients
    forbid: tuple[str, ...] = ()
    atol: float = 1e-5
    rtol: float = 1e-4

    def payload(self, code: str, device: str = "cpu", deadline_s: float = 15.0) -> dict[str, Any]:
        return {"tests": self.tests, "call": self.call, "grad": self.grad,
                "forbid": list(self.forbid), "code": code, "device": device,
                "deadline_s": deadline_s}


@dataclass
class Record:
    index: int
    name: str
    shapes: list[str] = field(default_factory=list)
    error: str | None = None
    devices: list[str] = field(default_factory=list)
    tensors: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    passed: int
    total: int
    failure: str | None = None  # the first failing test, summarised without hidden data
    output: str = ""  # what the member's code printed (clipped)
    elapsed_s: float | None = None
    peak_memory_mb: float | None = None
    device: str = "cpu"

    @property
    def solved(self) -> bool:
        return self.total > 0 and self.passed == self.total and self.failure is None


def forbidden_uses(code: str, forbid: tuple[str, ...]) -> list[str]:
    """Forbidden names the code uses: as attributes, imports, strings (getattr tricks), and bare
    names it does not define itself (a star import) — a solution's own `def one_hot` and the
    words of its docstrings are not uses. The harness also replaces each name at run time."""
    leaves: dict[str, str] = {}
    for name in forbid:  # one report per leaf name: torch.softmax and F.softmax are one rule
        leaves.setdefault(name.rpartition(".")[2], name)
    found: set[str] = set()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    own, docstrings = _own_names(tree), _docstrings(tree)
    for node in ast.walk(tree):
        word = None
        if isinstance(node, ast.Name) and node.id not in own:
            word = node.id
        elif isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, ast.alias):
            word = node.name.rpartition(".")[2]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in docstrings:
            found.update(full for leaf, full in leaves.items() if leaf in node.value)
        if word in leaves:
            found.add(leaves[word])
    return sorted(found)


def _own_names(tree: ast.AST) -> set[str]:
    """Names the code binds itself: functions, classes, arguments, assignments, `as` names."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            own.add(node.id)
        elif isinstance(node, ast.alias) and node.asname:
            own.add(node.asname)
    return own


def _docstrings(tree: ast.AST) -> set[ast.Constant]:
    found: set[ast.Constant] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(first.value)
    return found


def build_program(spec: JudgeSpec, code: str, device: str = "cpu",
                  deadline_s: float = 15.0) -> str:
    """The job's source: the harness, then one call with the problem and the member's code."""
    payload = json.dumps(spec.payload(code, device, deadline_s), ensure_ascii=False)
    return (HARNESS_PATH.read_text(encoding="utf-8")
            + f"\nrun_submission(json.loads({payload!r}))\n")


def parse_records(data: bytes) -> list[Record]:
    """Length-prefixed (header JSON, torch.save blob) pairs; anything malformed stops parsing."""
    import torch

    records: list[Record] = []
    pos = 0
    while pos + 8 <= len(data):
        n_head, n_blob = struct.unpack(">II", data[pos:pos + 8])
        pos += 8
        if pos + n_head + n_blob > len(data):
            break
        try:
            head = json.loads(data[pos:pos + n_head])
            blob = data[pos + n_head:pos + n_head + n_blob]
            tensors = torch.load(io.BytesIO(blob), weights_only=True) if blob else {}
            if not isinstance(tensors, dict) or not all(
                    isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in tensors.items()):
                break
            records.append(Record(int(head["i"]), str(head["name"])[:100],
                                  [str(s)[:40] for s in head.get("shapes", [])][:8],
                                  str(head["error"])[:300] if head.get("error") else None,
                                  [str(d) for d in head.get("dev", [])], tensors))
        except Exception:
            break
        pos += n_head + n_blob
    return records


def _compare(exp: Any, got: Any, atol: float, rtol: float) -> str | None:
    import torch

    if got.shape != exp.shape:
        return f"shape {_dims(got.shape)}, expected {_dims(exp.shape)}"
    if got.dtype != exp.dtype:
        return f"dtype {str(got.dtype).removeprefix('torch.')}, expected {str(exp.dtype).removeprefix('torch.')}"
    if exp.numel() == 0:
        return None
    if exp.is_floating_point() or exp.is_complex():
        if torch.allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True):
            return None
        bad = ~torch.isfinite(got) & torch.isfinite(exp)
        if bad.any():
            kind = "nan" if torch.isnan(got[bad]).any() else "inf"
            return f"{int(bad.sum())} {kind} value(s) where finite values were expected"
        wide = torch.complex128 if exp.is_complex() else torch.float64  # .double() drops imag
        diff = (got.to(wide) - exp.to(wide)).abs()
        same = (got == exp) | (torch.isnan(got) & torch.isnan(exp))  # equal infs, NaN for NaN
        diff = torch.where(same, torch.zeros_like(diff), diff)
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
        return f"max abs error {diff.max().item():.3g} (allowed {atol:g} + {rtol:g}·|expected|)"
    if torch.equal(got, exp):
        return None
    wrong = int((got != exp).sum().item())
    return f"{wrong} of {exp.numel()} values differ"


def _dims(shape: Any) -> str:
    return "×".join(str(n) for n in shape) or "scalar"


def _what(key: str) -> str:
    """A result key (r.out.0, r.grad.1, r.grads.0) as members read it: output[0], ..."""
    parts = key.split(".")[1:]
    if parts[:1] == ["grad"]:
        return f"gradient of input {int(parts[1]) + 1}" if len(parts) > 1 else "gradient"
    if parts[:1] == ["out"]:
        parts = ["output", *parts[1:]]
    elif not parts or parts[0].isdigit():
        parts = ["result", *parts]
    return parts[0] + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in parts[1:])


def compare_records(expected: list[Record], got: list[Record], spec: JudgeSpec,
                    device: str = "cpu") -> tuple[int, str | None]:
    """(tests passed, first failure) of the member's records against the reference's."""
    by_index = {r.index: r for r in got}
    if -1 in by_index:
        return 0, f"your code did not load: {by_index[-1].error}"
    passed, failure = 0, None
    for exp in expected:
        problem = _case_problem(exp, by_index.get(exp.index), spec, device)
        if problem is None:
            passed += 1
        elif failure is None:
            inputs = f" (inputs {', '.join(exp.shapes)})" if exp.shapes else ""
            failure = f"test '{exp.name}'{inputs}: {problem}"
    return passed, failure


def _case_problem(exp: Record, got: Record | None, spec: JudgeSpec, device: str) -> str | None:
    if got is None:
        return "no result (the code exited or was stopped before this test)"
    if got.name != exp.name:
        return "no result for this test"
    if got.error:
        return got.error
    if exp.error:
        return "reference failed on this test (please report it)"
    if any(d != device.split(":")[0] for d in got.devices):
        return f"output on {', '.join(got.devices)}, expected {device}"
    missing = sorted(set(exp.tensors) - set(got.tensors), key=_what)
    extra = sorted(set(got.tensors) - set(exp.tensors), key=_what)
    if missing or extra:
        key = (missing or extra)[0]
        if key.endswith(":none"):
            return f"{_what(key.removesuffix(':none'))} should not be None"
        return (f"{_what(key)} is missing" if missing
                else f"unexpected {_what(key.removesuffix(':none'))} (wrong number of outputs?)")
    for key in sorted(exp.tensors, key=lambda k: (not k.startswith("r.out"), k)):
        problem = _compare(exp.tensors[key], got.tensors[key], spec.atol, spec.rtol)
        if problem:
            return f"{_what(key)}: {problem}"
    return None


def frame_of(output: str) -> dict[str, Any] | None:
    """The one result line of a job's stdout; None if absent, repeated or malformed."""
    lines = [line for line in output.splitlines() if line.startswith(MARK)]
    if len(lines) != 1:
        return None
    try:
        frame = json.loads(lines[0][len(MARK):])
    except ValueError:
        return None
    return frame if isinstance(frame, dict) else None


def verdict_of(expected: list[Record], frame: dict[str, Any] | None, spec: JudgeSpec, *,
               device: str = "cpu", peak_memory_mb: float | None = None,
               sandbox_error: str | None = None) -> Verdict:
    total = len(expected)
    if frame is None:
        reason = sandbox_error or "the judge's result line is missing or was tampered with"
        return Verdict(0, total, f"no verdict: {reason}", device=device,
                       peak_memory_mb=peak_memory_mb)
    try:
        data = base64.b64decode(str(frame.get("records", "")), validate=True)
    except ValueError:
        data = b""
    got = parse_records(data)
    passed, failure = compare_records(expected, got, spec, device)
    if frame.get("records_over_cap"):
        failure = "your outputs were too large to compare"
        passed = 0
    elif not frame.get("finished") and failure is None:
        failure = "time limit reached"
    elapsed = frame.get("elapsed_s")
    return Verdict(passed, total, failure, output=str(frame.get("output", ""))[:4000],
                   elapsed_s=float(elapsed) if isinstance(elapsed, (int, float)) else None,
                   peak_memory_mb=peak_memory_mb, device=device)


async def reference_records(spec: JudgeSpec, reference: str, timeout_s: float = 60.0) -> list[Record]:
    """The reference's values, computed in a process of its own (never in the sandbox)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(HARNESS_PATH), "--reference",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    payload = json.dumps(spec.payload(reference)).encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(payload), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise RuntimeError("the reference timed out") from None
    if proc.returncode != 0:
        raise RuntimeError(f"the reference failed: {err.decode(errors='replace')[-500:]}")
    return parse_records(out)


def _harness() -> Any:
    from runner import judge_harness

    return judge_harness


def reference_locally(spec: JudgeSpec, reference: str) -> list[Record]:
    """The reference's values in this process (CI and tools: trusted code only)."""
    return parse_records(_harness().reference_records(spec.payload(reference)))


def judge_locally(spec: JudgeSpec, code: str, expected: list[Record],
                  deadline_s: float = 15.0) -> Verdict:
    """Judge our own code (references, stubs, known-wrong solutions) in a forked child of this
    warm process, without the sandbox: CI proves every test set discriminates this way."""
    line = _harness().run_submission(spec.payload(code, deadline_s=deadline_s), emit=False)
    return verdict_of(expected, frame_of(line), spec)
