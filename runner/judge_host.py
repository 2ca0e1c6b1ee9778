"""The trusted side of the judge: draws each case's inputs from the submission's secret seed,
computes the reference's values, and turns what the member's sandbox jobs shipped into a verdict.

It runs in a process of its own started by the worker (runner.judging), never in the sandbox and
never in the bot: it holds the test source, the reference, every case and every expected value.
What the member's jobs shipped is read with runner.tensor_io's capped reader; a record that does
not pass is the verdict "your output could not be read", never an allocation here.
Failure texts name shapes, dtypes, counts and the size of an error relative to the tolerance,
never an expected value.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import judge_evidence, judge_harness, judge_replay, tensor_io
from runner.judge import JudgeSpec, Verdict

NO_RESULT = "no result (the code exited or was stopped before this test)"
UNREADABLE = "your output could not be read"
RAISED = "your code raised an error"
NOT_LOADED = "your code did not load"
REFERENCE_FAILED = "the reference failed on this test (please report it)"
NOT_RUN = "not run: an earlier test hit a limit"
TIME_LIMIT = "time limit reached"
FRAME_CAP = 64 * 1024 * 1024


def case_seed(secret: int, index: int) -> int:
    """A case's own seed: from the submission's secret, telling nothing about other cases."""
    digest = hashlib.sha256(f"{secret}:{index}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def load_cases(tests_src: str, secret: int) -> tuple[dict[str, Any], list[tuple[str, tuple]]]:
    """The hidden tests: `cases()` yields (name, args) pairs, each drawn after its own seed."""
    import torch
    ns: dict[str, Any] = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math}
    exec(compile(tests_src, "tests.py", "exec"), ns)
    gen, i = ns["cases"](), 0
    cases: list[tuple[str, tuple]] = []
    while True:
        torch.manual_seed(case_seed(secret, i))
        try:
            name, args = next(gen)
        except StopIteration:
            return ns, cases
        cases.append((str(name), tuple(args)))
        i += 1


def driver_source(tests_src: str) -> str:
    """What of the tests goes into the member's process: everything but cases() (which draws the
    inputs), and only when the problem has a driver run(sol, *args)."""
    tree = ast.parse(tests_src)
    if not any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body):
        return ""
    tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "cases")]
    return ast.unparse(tree)


def encode_args(args: tuple, tensors: dict[str, Any]) -> dict[str, Any]:
    """A JSON tree of the arguments; tensors go to `tensors` by key, strided views with their
    layout (so a non-contiguous case stays non-contiguous in the member's process)."""
    import torch

    def enc(value: Any) -> dict[str, Any]:
        if isinstance(value, torch.Tensor):
            key = f"a{len(tensors)}"
            value = value.detach()
            if value.is_contiguous():
                tensors[key] = value
                return {"t": "tensor", "k": key}
            span = 1 + sum((n - 1) * s for n, s in zip(value.shape, value.stride(), strict=True)) \
                if value.numel() else 0
            tensors[key] = value.as_strided((span,), (1,))
            return {"t": "tensor", "k": key, "size": list(value.shape), "stride": list(value.stride())}
        if isinstance(value, list | tuple):
            return {"t": "list" if isinstance(value, list) else "tuple", "v": [enc(v) for v in value]}
        if isinstance(value, dict):
            return {"t": "dict", "v": [[str(k), enc(v)] for k, v in value.items()]}
        if value is None or isinstance(value, bool | int | float | str):
            return {"t": "value", "v": value}
        raise TypeError(f"a case argument of type {type(value).__name__} cannot be sent")
    return enc(list(args))


def _shape(arg: Any) -> str:
    shape = getattr(arg, "shape", None)
    if shape is not None:
        return "×".join(str(n) for n in shape) or "scalar"
    if isinstance(arg, list | tuple):
        if len(arg) > 2:
            return f"list of {len(arg)}"
        return "[" + ", ".join(_shape(a) for a in arg) + "]"
    return type(arg).__name__


@dataclass
class Outcome:
    """One case's values as read back: tensors by key, kinds of what is not a plain tensor."""

    tensors: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    load_error: str | None = None


def outcome_of(record: bytes) -> Outcome:
    """A checked record as an Outcome; tensor_io.Unreadable when it is not one."""
    meta, tensors = tensor_io.read(record)
    try:
        kinds = json.loads(meta.get("kinds", "{}"))
    except ValueError as exc:
        raise tensor_io.Unreadable("bad kinds") from exc
    if not isinstance(kinds, dict) or not all(tensor_io.valid_name(k) and isinstance(v, str)
                                              for k, v in kinds.items()):
        raise tensor_io.Unreadable("bad kinds")
    if len(kinds) > tensor_io.TENSOR_CAP or set(kinds) & set(tensors) - {
            k for k, v in kinds.items() if v == "complex"}:
        raise tensor_io.Unreadable("bad kinds")
    return Outcome(tensors, kinds, meta.get("error"), meta.get("load_error"))


@dataclass
class Case:
    name: str
    shapes: list[str]
    payload: dict[str, Any]  # what the member's process gets (without the code)
    expected: Outcome
    alt: dict[str, Any] | None = None  # a second input of the same shapes ({tree, inputs})
    alt_expected: Outcome | None = None  # the reference's values on it


def prepare(spec: JudgeSpec, reference: str, secret: int, deadline_s: float) -> list[Case]:
    """Every case's inputs and the reference's values on them."""
    import torch
    _, cases = load_cases(spec.tests, secret)
    driver = driver_source(spec.tests)
    staged = _defines(spec.tests, "resume")
    # a second draw of every case, for replaying a traced graph on inputs the member never saw
    others = load_cases(spec.tests, case_seed(secret, 40_000))[1] if spec.graph_evidence else []
    prepared = []
    for i, (name, args) in enumerate(cases):
        first_args, then_args = args if staged else (args, ())
        tensors: dict[str, Any] = {}
        tree = encode_args(first_args, tensors)
        payload = {"call": spec.call, "driver": driver, "tree": tree,
                   "seed": case_seed(secret, 10_000 + i), "deadline_s": deadline_s,
                   "inputs": base64.b64encode(tensor_io.write(tensors)).decode()}
        if spec.case_memory_mb:
            payload["memory_mb"] = spec.case_memory_mb
        if spec.forbid:
            payload["forbid"] = list(spec.forbid)
        if staged:  # the second stage's inputs: never in the first stage's job
            then_tensors: dict[str, Any] = {}
            payload["then"] = {**payload, "tree": encode_args(then_args, then_tensors),
                               "seed": case_seed(secret, 30_000 + i),
                               "inputs": base64.b64encode(tensor_io.write(then_tensors)).decode()}
        alt = alt_expected = None
        if spec.graph_evidence:
            payload["trace"] = True
            alt_tensors: dict[str, Any] = {}
            alt_tree = encode_args(others[i][1], alt_tensors) if i < len(others) else None
            if alt_tree is not None and judge_evidence.same_inputs((tree, tensors), (alt_tree, alt_tensors)):
                alt = {"tree": alt_tree, "inputs": base64.b64encode(tensor_io.write(alt_tensors)).decode()}
                alt_expected = outcome_of(judge_harness.compute({**payload, **alt, "code": reference}))
        expected = outcome_of(reference_record(payload, reference))
        if spec.grad and not driver and expected.error is None:
            gen = torch.Generator().manual_seed(case_seed(secret, 20_000 + i))
            weights = {f"w:{key}": torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype)
                       for key, t in expected.tensors.items()
                       if t.is_floating_point() and key not in expected.kinds}
            if weights:
                tensors.update(weights)
                payload["inputs"] = base64.b64encode(tensor_io.write(tensors)).decode()
                expected = outcome_of(judge_harness.compute({**payload, "code": reference}))
        prepared.append(Case(name, [_shape(a) for a in (*first_args, *then_args)], payload, expected,
                             alt, alt_expected))
    return prepared


def _defines(tests_src: str, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.parse(tests_src).body)


def reference_record(payload: dict[str, Any], reference: str) -> bytes:
    """The reference's record of a case, through both stages of a problem in two."""
    first, then = judge_harness.stages(payload)
    record = judge_harness.compute({**first, "code": reference})
    if then is not None:
        carried = judge_harness.carried_stage(then, base64.b64encode(record).decode())
        record = judge_harness.compute({**carried, "code": reference})
    return record


# ---- comparing ---------------------------------------------------------------------------------


def _dims(shape: Any) -> str:
    return "×".join(str(n) for n in shape) or "scalar"


def _what(key: str) -> str:
    """A result key (r.out.0, r.grad.1, r.grads.0) as members read it: output[0], ...
    Only for keys the reference's result has: their names are the bank's, not the member's."""
    parts = key.split(".")[1:]
    if parts[:1] == ["grad"]:
        return f"gradient of input {int(parts[1]) + 1}" if len(parts) > 1 else "gradient"
    if parts[:1] == ["out"]:
        parts = ["output", *parts[1:]]
    elif not parts or parts[0].isdigit():
        parts = ["result", *parts]
    return parts[0] + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in parts[1:])


def _unexpected(key: str, expected: set[str]) -> str:
    """A key only the member's result has, by position: its dict keys are the member's own text,
    so a name the reference's result does not use is never shown (only its place)."""
    parts = key.split(".")
    known = {".".join(k.split(".")[:n]) for k in expected for n in range(1, k.count(".") + 2)}
    shown = parts[:1]
    for part in parts[1:]:
        if not (part.isdigit() or ".".join([*shown, part]) in known):
            break
        shown.append(part)
    where = ".".join(shown)
    if where in known and where != key:
        return f"unexpected entry in {_what(where)} (a dict key the expected result does not have)"
    return f"unexpected {_what(where)} (wrong number of outputs?)"


def _is_gradient(key: str) -> bool:
    return any(part.startswith("grad") for part in key.split(".")[1:])


def _size(ratio: float) -> str:
    if not math.isfinite(ratio) or ratio > 1e12:
        return "far more than"
    return f"up to {10 ** math.ceil(math.log10(max(ratio, 1.0))):g}×"


def compare(exp: Any, got: Any, atol: float, rtol: float) -> str | None:
    """What is wrong with `got`, in words that never reveal an expected value."""
    import torch
    if got.shape != exp.shape:
        return f"shape {_dims(got.shape)}, expected {_dims(exp.shape)}"
    if got.dtype != exp.dtype:
        return f"dtype {str(got.dtype).removeprefix('torch.')}, expected {str(exp.dtype).removeprefix('torch.')}"
    if exp.numel() == 0:
        return None
    one = exp.numel() == 1
    if exp.is_floating_point() or exp.is_complex():
        if torch.allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True):
            return None
        bad = ~torch.isfinite(got) & torch.isfinite(exp)
        if bad.any():
            kind = "nan" if torch.isnan(got[bad]).any() else "inf"
            return f"{int(bad.sum())} {kind} value(s) where finite values were expected"
        wide = torch.complex128 if exp.is_complex() else torch.float64
        g, e = got.to(wide), exp.to(wide)
        same = (g == e) | (torch.isnan(g) & torch.isnan(e))
        err = torch.where(same, torch.zeros_like(g.real if g.is_complex() else g).to(torch.float64),
                          (g - e).abs().to(torch.float64))
        err = torch.nan_to_num(err, nan=math.inf)
        tol = atol + rtol * e.abs().to(torch.float64)
        odd = ~same & ~torch.isfinite(e)  # an infinite or nan expected value, not matched
        wrong = (err > tol) | odd
        ratios = torch.where(odd, math.inf, err / tol.clamp_min(1e-300))
        ratio = float(ratios[wrong].max()) if wrong.any() else math.inf
        size = _size(ratio)
        if one:
            return f"wrong value (off by {size} the allowed error)"
        return f"{int(wrong.sum())} of {exp.numel()} values wrong (the worst off by {size} the allowed error)"
    if torch.equal(got, exp):
        return None
    if one:
        return "wrong value"
    return f"{int((got != exp).sum())} of {exp.numel()} values differ"


_TYPE_NAME = re.compile(r"[^A-Za-z0-9_]")


def _kind_problem(key: str, kind: str) -> str | None:
    what = _what(key)
    if kind == "sparse":
        return f"{what} is a sparse tensor; return a dense (strided) one"
    if kind == "unsupported":
        return f"{what} is a tensor the judge cannot compare (quantized, nested or meta); return a plain one"
    if kind.startswith("type:"):
        name = _TYPE_NAME.sub("", kind[5:])[:40] or "value"
        return f"{what} is a {name}; expected a tensor or a number"
    return None


def _complex(t: Any) -> Any:
    import torch
    return torch.view_as_complex(t) if t.dim() and t.shape[-1] == 2 and t.dtype in (
        torch.float32, torch.float64) else t


def case_problem(exp: Outcome, got: Outcome, spec: JudgeSpec) -> tuple[str, str | None] | None:
    """(failure, the member's own text) of one case, or None when it passes."""
    import torch
    if got.error:
        return RAISED, got.error
    if exp.error:
        return REFERENCE_FAILED, None
    exp_keys, got_keys = set(exp.tensors) | set(exp.kinds), set(got.tensors) | set(got.kinds)
    order = lambda k: (not k.startswith("r.out"), _what(k))  # noqa: E731
    for key in sorted(exp_keys | got_keys, key=order):  # outputs first, then gradients
        if key not in exp_keys:
            return _unexpected(key, exp_keys), None
        if key in got.kinds and (problem := _kind_problem(key, got.kinds[key])):
            return problem, None
        if key not in got_keys:
            return f"{_what(key)} is missing", None
        ek, gk = exp.kinds.get(key), got.kinds.get(key)
        if ek == "none" and gk == "none":
            continue
        if ek == "none":
            return f"{_what(key)} should be None", None
        want = exp.tensors[key]
        have: Any
        if gk == "none":
            if not _is_gradient(key):
                return f"{_what(key)} should not be None", None
            have = torch.zeros_like(want)  # a missing gradient counts as zeros
        else:
            have = got.tensors.get(key)
        if (ek == "complex") != (gk == "complex") and gk != "none":
            name = lambda t, c: ("complex" if c else str(t.dtype).removeprefix("torch."))  # noqa: E731
            return f"{_what(key)}: dtype {name(have, gk == 'complex')}, expected {name(want, ek == 'complex')}", None
        if ek == "complex":
            want, have = _complex(want), _complex(have)
        problem = compare(want, have, spec.atol, spec.rtol)
        if problem:
            return f"{_what(key)}: {problem}", None
    return None


Problem = tuple[str, str | None] | None


def case_problems(cases: list[Case], results: list[dict[str, Any]], spec: JudgeSpec) -> list[Problem]:
    """Each case's problem with its values (None: right), from its sandbox result."""
    problems: list[Problem] = []
    for i, case in enumerate(cases):
        res = results[i] if i < len(results) else {"skipped": True}
        try:
            problems.append(_result_problem(case, res, spec))
        except Exception:  # whatever a record holds, it is a verdict, never a crash here
            problems.append((UNREADABLE, None))
    return problems


def evidence_plan(cases: list[Case], results: list[dict[str, Any]], problems: list[Problem],
                  spec: JudgeSpec) -> tuple[list[Problem], list[dict[str, Any]], list[tuple[int, str]]]:
    """For a problem with forbidden ops or `traced`: each right case's graph is read and checked here; the
    replay jobs (and which case and input each is) that must confirm it, run in the sandbox."""
    problems = list(problems)
    jobs: list[dict[str, Any]] = []
    which: list[tuple[int, str]] = []
    for i, case in enumerate(cases):
        if problems[i] is not None or i >= len(results):
            continue
        graph = judge_evidence.read_graph(results[i].get("evidence"))
        if isinstance(graph, str):
            problems[i] = graph, judge_evidence.member_line(results[i].get("evidence"))
            continue
        if used := judge_evidence.forbidden_op(graph, spec.forbid_ops):
            problems[i] = used, None
            continue
        # a driver (bank code, trusted) is replayed with the graph as the member's function
        driven = {"driver": case.payload["driver"], "call": spec.call} if case.payload.get("driver") else {}
        jobs.append({"graph": graph.text, "tree": case.payload["tree"], "inputs": case.payload["inputs"], **driven})
        which.append((i, "case"))
        if case.alt is not None:
            jobs.append({"graph": graph.text, **case.alt, **driven})
            which.append((i, "alt"))
    return problems, jobs, which


_REASON = re.compile(r"[^A-Za-z0-9 ]")  # the replay's words (a sandbox job's): letters only here
NOT_REPRODUCED = judge_evidence.UNCHECKED + "the graph traced from your code does not reproduce its outputs"
SPECIALISED = judge_evidence.UNCHECKED + ("the graph traced from your code gives wrong values on "
                                          "other inputs of the same shapes")


def replay_problems(cases: list[Case], results: list[dict[str, Any]], problems: list[Problem],
                    which: list[tuple[int, str]], replayed: dict[str, Any], spec: JudgeSpec) -> list[Problem]:
    """The replay job's outputs against the member's own outputs (case) and the reference (alt)."""
    problems = list(problems)
    try:
        meta, tensors = tensor_io.read(base64.b64decode(str(replayed.get("record") or ""), validate=True),
                                       tensor_io.Caps(tensors=256, total=32 * 1024 * 1024))
        errors = json.loads(meta.get("errors", "{}"))
        if not isinstance(errors, dict):
            raise ValueError
    except (ValueError, tensor_io.Unreadable):
        for i, _ in which:
            problems[i] = problems[i] or (judge_evidence.UNCHECKED + "its graph could not be replayed", None)
        return problems
    for j, (i, kind) in enumerate(which):
        if problems[i] is not None:
            continue
        text = NOT_REPRODUCED if kind == "case" else SPECIALISED
        if str(j) in errors:
            problems[i] = (f"{text} (the replay met {_REASON.sub('', str(errors[str(j)]))[:100]})", None)
            continue
        got = {key.split(":", 1)[1]: t for key, t in tensors.items() if key.startswith(f"{j}:")}
        if kind == "case":
            member = outcome_of(base64.b64decode(results[i]["record"], validate=True))
            want = _replayed_keys(member, cases[i])
        else:
            reference = cases[i].alt_expected
            assert reference is not None
            want = _replayed_keys(reference, cases[i])
        if set(got) != set(want) or any(compare(want[k], got[k], spec.atol, spec.rtol) for k in want):
            problems[i] = (text, None)
    return problems


def _replayed_keys(outcome: Outcome, case: Case) -> dict[str, Any]:
    """What a replay gives back: the outputs (not the gradients), or all a driver returns."""
    driven = bool(case.payload.get("driver"))
    return {k: t for k, t in outcome.tensors.items() if driven or k.startswith("r.out")}


def verdict_of(cases: list[Case], results: list[dict[str, Any]], problems: list[Problem]) -> Verdict:
    """The verdict of a submission from each case's problem (None: passed)."""
    passed, failure, detail, output = 0, None, None, ""
    elapsed, peak = 0.0, None
    for i, case in enumerate(cases):
        res = results[i] if i < len(results) else {"skipped": True}
        elapsed += float(res.get("elapsed_s") or 0.0)
        if isinstance(res.get("peak_memory_mb"), int | float):
            peak = max(peak or 0.0, float(res["peak_memory_mb"]))
        problem = problems[i]
        if problem is None:
            passed += 1
            output = output or str(res.get("output", ""))
            continue
        if failure is None:
            text, detail = problem
            inputs = f" (inputs {', '.join(case.shapes)})" if case.shapes else ""
            failure = text if text == NOT_LOADED else f"test '{case.name}'{inputs}: {text}"
            output = str(res.get("output", "")) or output
    return Verdict(passed, len(cases), failure, detail, output[:4000], round(elapsed, 3), peak)


def verdict(cases: list[Case], results: list[dict[str, Any]], spec: JudgeSpec) -> Verdict:
    """The verdict by values alone (a problem without graph evidence)."""
    return verdict_of(cases, results, case_problems(cases, results, spec))


def _result_problem(case: Case, res: dict[str, Any], spec: JudgeSpec) -> tuple[str, str | None] | None:
    if res.get("skipped"):
        return NOT_RUN, None
    if res.get("record_over_cap"):
        return UNREADABLE + " (it is larger than the judge accepts)", None
    raw = res.get("record") or ""
    if not raw:
        if res.get("sandbox_error"):  # the sandbox's own verdict: a kernel limit, the wall time
            return f"no result: {res['sandbox_error']}", None
        if res.get("finished") is False:
            return TIME_LIMIT, None
        return NO_RESULT, None
    try:
        got = outcome_of(base64.b64decode(raw, validate=True))
    except (ValueError, tensor_io.Unreadable):
        return UNREADABLE, None
    if got.load_error:
        return NOT_LOADED, got.load_error
    return case_problem(case.expected, got, spec)


def judge_locally(spec: JudgeSpec, reference: str, code: str, secret: int = 0,
                  deadline_s: float = 15.0) -> Verdict:
    """Judge our own code (references, stubs, known-wrong solutions) through the same cases,
    harness and verdict, in forked children of this warm process instead of the sandbox (a
    memory rule's cases: of a clean one, see `_run_locally`): CI proves every test set
    discriminates this way."""
    return judge_prepared(spec, prepare_locally(spec, reference, secret, deadline_s), code)


def prepare_locally(spec: JudgeSpec, reference: str, secret: int = 0, deadline_s: float = 15.0) -> list[Case]:
    """`prepare` in this warm process, for judge_prepared: a test that judges several solutions
    on one secret draws the cases and computes the reference's values once, as the judge does
    once per submission."""
    return prepare(spec, reference, secret, deadline_s)


def judge_prepared(spec: JudgeSpec, cases: list[Case], code: str, until_failure: bool = False) -> Verdict:
    """judge_locally on the cases prepare_locally gave (of the same spec and reference).
    `until_failure`: no case is run after the first one whose values are wrong, for code known
    to be wrong: its verdict's failure is the same text (the first failing case's; the cases
    before it are still checked in full, graph evidence included), only the cases after it
    count as not run."""
    if spec.graph_evidence:  # imported once here, not in every forked child's time limit
        import torch.fx.experimental.proxy_tensor  # noqa: F401
    results: list[dict[str, Any]] = []
    for case in cases:
        first, then = judge_harness.stages(case.payload)
        frame = _run_locally(first, code)
        if then is not None and frame.get("finished") and frame.get("record"):
            frame = _run_locally(judge_harness.carried_stage(then, frame["record"]), code)
        results.append(frame)
        if not frame.get("finished"):
            break
        if until_failure and case_problems([case], [frame], spec)[0] is not None:
            break
    problems = case_problems(cases, results, spec)
    if spec.graph_evidence:
        problems, jobs, which = evidence_plan(cases, results, problems, spec)
        if jobs:
            record = judge_replay.replay_all(jobs)
            problems = replay_problems(cases, results, problems, which,
                                       {"record": base64.b64encode(record).decode()}, spec)
    return verdict_of(cases, results, problems)


def _run_locally(payload: dict[str, Any], code: str) -> dict[str, Any]:
    case = {**payload, "code": code}
    # a memory rule's RLIMIT_DATA cannot see free heap being reused: such a case is forked from
    # a process whose heap is clean, never from this one (a test process that has freed
    # hundreds of MB would let a known-wrong solution keep its activations uncounted)
    line = _clean_forker().run(case) if payload.get("memory_mb") else \
        judge_harness.run_case(case, emit=False)
    frame: dict[str, Any] = json.loads(line[len(judge_harness.MARK):])
    return frame


FORKER = """
import json, os, struct, sys
sys.path.insert(0, {root!r})
import torch  # noqa: F401  (as warm as a slot's template)
from runner import judge_harness
judge_harness.fixed_mmap_threshold()  # what this process reads and frees is unmapped at once
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
while (head := stdin.read(4)):
    case = stdin.read(struct.unpack(">I", head)[0])
    pid = os.fork()
    if pid == 0:  # the case's parent: it parses, then run_case forks the child that runs code
        line = judge_harness.run_case(json.loads(case), emit=False).encode()
        stdout.write(struct.pack(">I", len(line)) + line)
        stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)
"""


class _CleanForker:
    """A warm process (torch and the harness imported) that runs no case itself: each case is
    a fork of it, whose heap holds nothing freed by earlier work."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[1])
        self.proc = subprocess.Popen([sys.executable, "-c", FORKER.format(root=root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, case: dict[str, Any]) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        body = json.dumps(case).encode()
        self.proc.stdin.write(struct.pack(">I", len(body)) + body)
        self.proc.stdin.flush()
        head = self.proc.stdout.read(4)
        if len(head) < 4:
            raise RuntimeError("the clean case forker died")
        return self.proc.stdout.read(struct.unpack(">I", head)[0]).decode()

    def alive(self) -> bool:
        return self.proc.poll() is None


_forker: _CleanForker | None = None


def _clean_forker() -> _CleanForker:
    global _forker
    if _forker is None or not _forker.alive():
        _forker = _CleanForker()
    return _forker


# ---- the process the worker talks to ------------------------------------------------------------


def _read_frame(stream: Any) -> Any:
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    if n > FRAME_CAP:
        raise ValueError("frame too large")
    return json.loads(stream.read(n))


def _write_frame(stream: Any, data: Any) -> None:
    body = json.dumps(data).encode()
    stream.write(struct.pack(">I", len(body)) + body)
    stream.flush()


def serve(inp: Any, out: Any) -> None:
    """Worker protocol over two binary streams, one submission:
    <- {spec, reference, secret, deadline_s}   -> {cases: [payload...]} or {error}
    <- {results: [...]}                        -> {verdict: {...}}, or first (forbidden ops)
                                                  {replay: {jobs}} <- {replayed: {record}}"""
    ask = _read_frame(inp)
    if ask is None:
        return
    spec = JudgeSpec.from_dict(ask["spec"])
    try:
        import torch
        torch.set_num_threads(1)
        cases = prepare(spec, ask["reference"], int(ask["secret"]), float(ask["deadline_s"]))
    except Exception as exc:
        _write_frame(out, {"error": f"{type(exc).__name__}: {exc}"[:500]})
        return
    _write_frame(out, {"cases": [c.payload for c in cases]})
    got = _read_frame(inp)
    if got is None:
        return
    results = list(got.get("results", []))
    problems = case_problems(cases, results, spec)
    if spec.graph_evidence:
        problems, jobs, which = evidence_plan(cases, results, problems, spec)
        if jobs:  # replayed in a sandbox job of its own (no member code), by the worker
            _write_frame(out, {"replay": {"jobs": jobs}})
            replayed = _read_frame(inp)
            if replayed is None:
                return
            problems = replay_problems(cases, results, problems, which,
                                       dict(replayed.get("replayed") or {}), spec)
    _write_frame(out, {"verdict": verdict_of(cases, results, problems).to_dict()})


def _quiet_stdout() -> None:
    """Anything printed (a reference's print) goes to stderr, never into the frames."""
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def forker_main(control_fd: int) -> None:
    """The warm judge host: imports torch once, runs nothing itself, and forks one child per
    submission, which serves it over the stream socket the worker sends (SCM_RIGHTS) on the
    control socket, then exits. A submission gets a fresh process as before, without paying
    torch's import (1-2 s) each time. Nothing runs a torch op here: a forked OpenMP pool hangs."""
    import signal
    import socket

    import torch  # noqa: F401

    _quiet_stdout()
    control = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps our children
    while True:
        msg, fds, _, _ = socket.recv_fds(control, 16, 1)
        if not msg:
            return  # the worker has gone
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                with socket.socket(fileno=fds[0]) as conn:
                    conn.sendall(struct.pack(">I", os.getpid()))
                    with conn.makefile("rb") as inp, conn.makefile("wb") as out:
                        serve(inp, out)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(fds[0])
