"""The judge's program for ONE case: its source is embedded whole in each case's sandbox job (the
sandbox cannot import our checkout), followed by one call with that case's payload.

What the member's process holds is only what computing this case needs: the member's code, the
driver (how the function is called, e.g. building modules), this case's inputs and the weights
of the gradient check. No test source that draws cases, no reference, no other case, no expected
value, no seed of the submission. The process ships values back (safetensors bytes in one result
line); it never says whether they are right: the verdict is decided outside (runner.judge_host).

A parent forks a child that runs the member's code; only the parent writes the result line (the
child's output goes to a file the parent quotes) and the parent is non-dumpable, so the child
cannot reach its fds or memory through /proc. Forging the line would gain nothing anyway: it can
only carry values, which are judged like any others. Standard library + torch + safetensors.
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

MARK = "TDJ2 "
RECORD_CAP = 2_000_000  # bytes of one case's record; the trusted reader has its own caps
GRAPH_CAP = 1_000_000  # characters of one case's traced graph (JSON); the trusted side re-checks
GRAPH_NODES = 5_000
CONST_CAP = 256  # elements of a tensor constant a graph may carry
OUTPUT_CAP = 4_000
ERROR_CAP = 300
META_FD = 3  # the job's metadata socket to the worker (runner.zygote)
ARM_TIMEOUT_S = 10.0
MADV_POPULATE_WRITE = 23  # Linux 5.14


def stages(payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A case's first job and, for a problem in two stages (its tests define `resume`), the
    second: a job of its own, in a fresh process that never held the first one's objects or its
    inputs, given only the record the first job shipped (`carried_stage`)."""
    then = payload.get("then")
    return {k: v for k, v in payload.items() if k != "then"}, then if isinstance(then, dict) else None


def carried_stage(then: dict[str, Any], record: str) -> dict[str, Any]:
    """The second stage's payload: the first stage's record (base64, opaque here) rides along."""
    return {**then, "carried": record}


def decode_tree(tree: Any, tensors: dict[str, Any]) -> Any:
    """Rebuild a case's arguments from their JSON tree and the tensors it names."""
    kind = tree.get("t")
    if kind == "tensor":
        flat = tensors[tree["k"]]
        if "size" in tree:  # a strided view: rebuilt with the layout the case was drawn with
            flat = flat.as_strided(tree["size"], tree["stride"])
        return flat
    if kind in ("list", "tuple"):
        items = [decode_tree(item, tensors) for item in tree["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {key: decode_tree(item, tensors) for key, item in tree["v"]}
    return tree.get("v")


def _flatten(obj: Any, prefix: str, out: dict[str, Any], kinds: dict[str, str]) -> None:
    """Every value a result holds, by key (r.out.0, r.grad.1); non-tensors become kinds."""
    import torch
    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _flatten(item, f"{prefix}.{i}", out, kinds)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _flatten(obj[key], f"{prefix}.{key}", out, kinds)
    elif isinstance(obj, bool):
        out[prefix] = torch.tensor(obj)
    elif isinstance(obj, (int, float)):
        out[prefix] = torch.tensor(float(obj), dtype=torch.float64)
    elif obj is None:
        kinds[prefix] = "none"
    else:
        kinds[prefix] = "type:" + type(obj).__name__[:40]


def _plain(t: Any, key: str, kinds: dict[str, str]) -> Any:
    """A dense, contiguous, plain CPU tensor for safetensors, or None with the kind saying why."""
    import torch
    if t.layout != torch.strided:
        kinds[key] = "sparse"
        return None
    if t.is_quantized or t.is_nested or t.device.type == "meta":
        kinds[key] = "unsupported"
        return None
    t = torch.Tensor.as_subclass(t.detach(), torch.Tensor).cpu().resolve_conj().resolve_neg()
    if t.is_complex():
        kinds[key] = "complex"
        t = torch.view_as_real(t)
    return t.contiguous().clone()


def _default_run(fn: Callable[..., Any], args: tuple, weights: dict[str, Any]) -> dict[str, Any]:
    """Call fn; with weights, also d(sum of weights · outputs)/d(each floating input). An input
    that gets no gradient (None) counts as zeros: that is the judge's definition."""
    import torch
    leaves = []
    if weights:
        for a in args:
            if isinstance(a, torch.Tensor) and a.is_floating_point():
                a.requires_grad_(True)
                leaves.append(a)
    out = fn(*args)
    result: dict[str, Any] = {"out": out}
    if not leaves:
        return result
    flat: dict[str, Any] = {}
    _flatten(out, "r.out", flat, {})
    terms = []
    for key, w in weights.items():
        t = flat.get(key)
        if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.shape == w.shape \
                and t.is_floating_point() and t.requires_grad:
            terms.append((t * w.to(t.dtype)).sum())
    if len(terms) != len(weights):
        if all(isinstance(flat.get(k), torch.Tensor) and flat[k].layout == torch.strided
               and flat[k].is_floating_point() and flat[k].shape == w.shape
               for k, w in weights.items()):
            raise RuntimeError("the output carries no gradient (was the graph cut, e.g. .detach()?)")
        return result  # a shape or type the judge reports on the output itself
    grads = torch.autograd.grad(sum(terms), leaves, allow_unused=True)
    result["grad"] = [torch.zeros_like(a) if g is None else g for a, g in zip(leaves, grads, strict=True)]
    return result


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:ERROR_CAP]}".rstrip(": ")


def _encode_value(value: Any, ids: dict[Any, int]) -> Any:
    """A node argument as JSON: node references, numbers, lists and torch's enum-like values."""
    import torch
    import torch.fx
    if isinstance(value, torch.fx.Node):
        return {"n": ids[value]}
    if isinstance(value, list | tuple):
        return {"l" if isinstance(value, list) else "t": [_encode_value(v, ids) for v in value]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": "cpu"}
    if isinstance(value, torch.layout):
        return {"layout": str(value).removeprefix("torch.")}
    if isinstance(value, torch.memory_format):
        return {"mf": str(value).removeprefix("torch.")}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"a graph argument of type {type(value).__name__}")


def _scalar_ops() -> dict[Any, str]:
    """The Python scalar operations a graph may hold, by the name the replay knows them by: what
    make_fx records when `.item()` or `.tolist()` values are computed with (+, -, *, /, ...)."""
    import builtins
    import math
    import operator

    import torch
    table: dict[Any, str] = {getattr(operator, name): name for name in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "pos", "pow", "abs",
        "eq", "ne", "lt", "le", "gt", "ge")}
    table.update({builtins.abs: "abs", math.floor: "floor", math.ceil: "ceil", math.trunc: "trunc",
                  torch.sym_float: "sym_float", torch.sym_int: "sym_int", torch.sym_max: "sym_max",
                  torch.sym_min: "sym_min", torch.sym_not: "not"})
    return table


def _make_fx(fn: Callable[..., Any], args: tuple) -> Any:
    """make_fx with fake tensors and static shapes: a value read with `.item()` or `.tolist()`
    becomes a symbol whose arithmetic is recorded, so the graph holds no value of this case's
    inputs (tracing on real tensors would raise at `.item()` and bake `.tolist()` or numpy data
    in as constants). A value used in a Python decision cannot become a graph: that raises.
    A real tensor the code holds (a module-level constant) becomes a graph constant, as under a
    real trace, capped like any other."""
    from torch.fx.experimental.proxy_tensor import make_fx
    return make_fx(fn, tracing_mode="fake", _allow_non_fake_inputs=True)(*args)


def trace_graph(fn: Callable[..., Any], args: tuple) -> str:
    """The member's call as an aten-level graph (make_fx), as JSON data: the trusted side checks
    its operations and replays it, so nothing here decides anything."""
    import operator

    import torch
    import torch.utils._pytree as pytree
    trees: list[Any] = []

    def leaves_of(*given: Any) -> list[Any]:  # make_fx flattens the outputs: keep their tree
        leaves, tree = pytree.tree_flatten(fn(*given))
        trees.append(tree)
        return leaves
    gm = _make_fx(leaves_of, args)
    scalar = _scalar_ops()
    nodes: list[dict[str, Any]] = []
    ids: dict[Any, int] = {}
    out: Any = None
    placeholders = 0
    for node in gm.graph.nodes:
        if len(nodes) >= GRAPH_NODES:
            raise ValueError(f"the graph has more than {GRAPH_NODES} operations")
        if node.op == "placeholder":
            entry: dict[str, Any] = {"op": "input", "i": placeholders}
            placeholders += 1
        elif node.op == "get_attr":
            const = getattr(gm, str(node.target))
            if not isinstance(const, torch.Tensor) or const.numel() > CONST_CAP:
                raise ValueError("the graph holds a large constant")
            entry = {"op": "const", "dtype": str(const.dtype).removeprefix("torch."),
                     "shape": list(const.shape), "data": const.detach().cpu().flatten().tolist()}
        elif node.op == "call_function" and node.target is operator.getitem:
            entry = {"op": "getitem", "a": _encode_value(list(node.args), ids)}
        elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            entry = {"op": "call", "f": str(node.target), "a": _encode_value(list(node.args), ids),
                     "k": {k: _encode_value(v, ids) for k, v in node.kwargs.items()}}
        elif node.op == "call_function" and not node.kwargs and _hashable(node.target) \
                and node.target in scalar:
            entry = {"op": "scalar", "f": scalar[node.target], "a": _encode_value(list(node.args), ids)}
        elif node.op == "output":
            leaves = node.args[0]
            nested = trees and _lists_only(trees[-1]) and isinstance(leaves, list | tuple)
            # (flat, [views]) stays nested, as a driver unpacks it
            out = _encode_value(pytree.tree_unflatten(list(leaves), trees[-1]) if nested else leaves, ids)
            continue
        else:
            raise ValueError(f"the graph calls {str(node.target)[:60]}, not an aten operation")
        ids[node] = len(nodes)
        nodes.append(entry)
    return json.dumps({"nodes": nodes, "out": out})


def _lists_only(tree: Any) -> bool:
    """Whether an output's pytree holds only lists and tuples (what a graph's output can say)."""
    return bool(tree.is_leaf() or (tree.type in (list, tuple)
                                   and all(_lists_only(c) for c in tree.children_specs)))


def _hashable(target: Any) -> bool:
    try:
        hash(target)
    except TypeError:
        return False
    return True


def trace_failure(exc: BaseException, code: str) -> dict[str, str]:
    """Why the call could not become a graph, in the judge's terms, and the member's line that
    did it: a Python decision on a tensor value ("branch"), a tensor value turned into a plain
    Python number ("number"), or anything else. Advice for the verdict text only: the trusted side
    decides nothing from it but which of its own sentences to show."""
    import re

    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    kind = "other"
    if isinstance(exc, GuardOnDataDependentSymNode):
        found = re.search(r"data-dependent expression (.+?)(?: \(unhinted|\n|$)", str(exc))
        expr = found.group(1) if found else ""
        kind = "branch" if re.search(r"[<>=!]|\b(?:Eq|Ne|And|Or|Not)\(", expr) else "number"
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "solution.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    found_line: dict[str, str] = {"trace_failure": kind}
    lines = code.splitlines()
    if 0 < line <= len(lines):
        found_line["line"] = f"line {line}: {lines[line - 1].strip()}"[:160]
    return found_line


def compute(case: dict[str, Any], evidence: dict[str, str] | None = None) -> bytes:
    """Run the member's code on this case; the safetensors record of what it returned. With
    `evidence` and a case that asks for it (`trace`), also the call's traced graph."""
    import torch
    from safetensors.torch import load, save
    meta: dict[str, str] = {}
    tensors: dict[str, Any] = {}
    carried: Any = None
    if "carried" in case:  # a second stage: the first one's record is its input, or its failure
        try:
            first = base64.b64decode(case["carried"])
            carried_meta = _record_meta(first)
            if "error" in carried_meta or "load_error" in carried_meta:
                return first
            carried = load(first).get("r")
        except BaseException as exc:
            return save({}, metadata={"error": "the first stage's result could not be read: " + _error(exc)})
    sol: dict[str, Any] = {"__name__": "solution", "torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    try:
        exec(compile(case["code"], "solution.py", "exec"), sol)
    except BaseException as exc:  # SystemExit included
        meta["load_error"] = _error(exc)
        return save({}, metadata=meta)
    try:
        given = load(base64.b64decode(case["inputs"])) if case.get("inputs") else {}
        args = tuple(decode_tree(case["tree"], given))
        weights = {k[2:]: v for k, v in given.items() if k.startswith("w:")}
        torch.manual_seed(int(case.get("seed", 0)))
        fn = sol.get(case["call"]) if case.get("call") else None
        if case.get("driver"):
            ns: dict[str, Any] = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional,
                                  "math": math}
            exec(compile(case["driver"], "driver.py", "exec"), ns)
            result = ns["resume"](sol, carried, *args) if "carried" in case else ns["run"](sol, *args)
        else:
            if fn is None:
                raise NameError(f"your code does not define {case['call']}")
            result = _default_run(fn, args, weights)
        if evidence is not None and case.get("trace"):
            try:  # the inputs again, untouched by the call above (a driver is replayed outside)
                if fn is None:
                    raise NameError(f"your code does not define {case['call']}")
                fresh = tuple(decode_tree(case["tree"], load(base64.b64decode(case["inputs"]))))
                evidence["graph"] = trace_graph(fn, fresh)
            except BaseException as exc:
                evidence["graph_error"] = _error(exc)
                with contextlib.suppress(BaseException):
                    evidence.update(trace_failure(exc, case["code"]))
        flat: dict[str, Any] = {}
        kinds: dict[str, str] = {}
        _flatten(result, "r", flat, kinds)
        for key, t in flat.items():
            plain = _plain(t, key, kinds)
            if plain is not None:
                tensors[key] = plain
        meta["kinds"] = json.dumps(kinds)
        meta["devices"] = json.dumps(sorted({t.device.type for t in flat.values()}))
    except BaseException as exc:  # SystemExit included: calling exit() fails the case
        meta = {"error": _error(exc)}
        tensors = {}
    try:
        return save(tensors, metadata=meta)
    except BaseException as exc:
        return save({}, metadata={"error": _error(exc)})


def _record_meta(record: bytes) -> dict[str, str]:
    """The metadata of a safetensors record, read from its header."""
    (n,) = struct.unpack("<Q", record[:8])
    meta = json.loads(record[8:8 + n]).get("__metadata__") or {}
    return meta if isinstance(meta, dict) else {}


def _tripwire(name: str) -> Callable[..., Any]:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} is not allowed in this challenge")
    return forbidden


def forbid(names: list[str]) -> None:
    """Replace each forbidden dotted name (torch.nn.LayerNorm) in this process: advice that turns
    the obvious uses into a clear error, never a verdict (other names reach the same kernel)."""
    import importlib
    for dotted in names:
        mod_name, _, attr = dotted.rpartition(".")
        owner: Any = None
        try:
            owner = importlib.import_module(mod_name)
        except ImportError:
            head, _, sub = mod_name.rpartition(".")
            with contextlib.suppress(Exception):
                owner = getattr(importlib.import_module(head), sub)
        with contextlib.suppress(Exception):
            if owner is not None and hasattr(owner, attr):
                setattr(owner, attr, _tripwire(dotted))


def fixed_mmap_threshold() -> None:
    """Map each large block on its own and unmap it when freed (M_MMAP_THRESHOLD fixed at 128 KiB,
    not glibc's dynamic threshold), so freed tensors leave no heap behind for later ones to reuse
    uncounted or to be counted again."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).mallopt(-3, 128 * 1024)


def limit_memory(mb: int) -> None:
    """Let the code add at most `mb` MiB of data from here on: RLIMIT_DATA, soft and hard, set
    before the member's code runs, so it cannot be raised again (a problem's rule about memory,
    e.g. 'keep no graph alive', is decided by the kernel, not by anything the code reports).
    Large blocks are mapped and unmapped on their own (a fixed mmap threshold), so what counts is
    what the code keeps alive: with glibc's dynamic threshold, freed 16 MB tensors stay in a
    growing heap and a correct checkpointed stack would seem to keep every block's activations.
    The member can only change that to count more against itself."""
    import resource
    fixed_mmap_threshold()
    with open("/proc/self/status", "rb") as status:
        data_kb = next(int(line.split()[1]) for line in status if line.startswith(b"VmData:"))
    limit = data_kb * 1024 + mb * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)  # an unprivileged job can lower its hard limit, never raise it
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def own_every_page() -> None:
    """Copy now every writable page this process still shares with the processes it was
    forked from (MADV_POPULATE_WRITE), so that the cgroup's count grows afterwards only with
    what the member's code adds: a fork's copy-on-write would otherwise charge pages as the code
    merely touches objects (a refcount, a GC pass), tens of MB that are not its doing."""
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    with open("/proc/self/maps") as maps:
        regions = [line.split()[:2] for line in maps]
    for span, perms in regions:
        if perms[1] == "w" and perms[3] == "p":
            start, end = (int(x, 16) for x in span.split("-"))
            madvise(start, end - start, MADV_POPULATE_WRITE)  # a failure only counts more


def arm_memory_cap() -> None:
    """Ask the worker, outside the sandbox, to cap this job's memory cgroup at what it uses now
    plus the problem's allowance (the worker knows the allowance; this only says when). The
    cgroup counts what RLIMIT_DATA does not: shared memory, files in /tmp and /dev/shm, pipe
    buffers. Fd 3 is the job's metadata socket; it is closed here, before the member's code,
    and the worker answers one request per job only."""
    import socket
    own_every_page()
    # then free heap (what the parent parsed and dropped) leaves the count: reused by the
    # member's code, its pages are charged again
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).malloc_trim(0)
    with socket.socket(fileno=META_FD) as sock:
        sock.settimeout(ARM_TIMEOUT_S)
        sock.send(b"arm_memory")
        reply = sock.recv(16)
    if reply not in (b"armed", b"unarmed"):  # unarmed: no memory cgroup on this host
        raise RuntimeError("the judge could not set this problem's memory limit")


def _child(case: dict[str, Any], res_path: str, out_path: str, graph_path: str) -> None:
    code = 0
    try:
        out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.closerange(META_FD + 1 if case.get("arm") else META_FD, 65536)
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        sys.stderr = sys.stdout
        import torch
        torch.set_num_threads(1)  # one slot, one core; and a forked OpenMP pool would hang
        from safetensors.torch import load, save  # noqa: F401  (imported before the limit)
        if not case.get("trace"):  # with a traced graph the ops decide (and a tripwire would
            forbid(list(case.get("forbid", ())))  # break the tracer): only in the member's child
        if case.get("memory_mb"):
            if case.get("arm"):
                arm_memory_cap()
            limit_memory(int(case["memory_mb"]))
        evidence: dict[str, str] = {}
        record = compute(case, evidence)
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
        with open(res_path, "wb") as res:
            res.write(record)
        if evidence:
            with open(graph_path, "w", encoding="utf-8") as graph:
                json.dump(evidence, graph)
    except BaseException:
        code = 1
        with contextlib.suppress(BaseException):
            import traceback
            traceback.print_exc(limit=3)
            sys.stdout.flush()
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


def run_case(case: dict[str, Any], emit: bool = True) -> str:
    """Fork, compute the case in the child, return (and print) the one result line."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    work = tempfile.mkdtemp(prefix="judge-")
    res_path, out_path, graph_path = (os.path.join(work, name) for name in ("r", "o", "g"))
    sys.stdout.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(case, res_path, out_path, graph_path)
    finished = _wait(pid, float(case.get("deadline_s", 15)))
    elapsed = time.monotonic() - start
    record, size = _tail(res_path, RECORD_CAP + 1)
    output, out_size = _tail(out_path, OUTPUT_CAP)
    graph, graph_size = _tail(graph_path, GRAPH_CAP + 1)
    line = MARK + json.dumps({
        "finished": finished, "elapsed_s": round(elapsed, 3),
        "record": base64.b64encode(record).decode() if 0 < size <= RECORD_CAP else "",
        "record_over_cap": size > RECORD_CAP,
        "output": output.decode("utf-8", "replace"), "output_cut": out_size > OUTPUT_CAP,
        "evidence": graph.decode("utf-8", "replace") if graph_size <= GRAPH_CAP else "",
        "evidence_over_cap": graph_size > GRAPH_CAP,
    })
    for name in (res_path, out_path, graph_path):
        with contextlib.suppress(OSError):
            os.unlink(name)
    with contextlib.suppress(OSError):
        os.rmdir(work)
    if emit:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    return line
