"""Replays traced graphs (JSON data, never code) on given inputs: the judge's check that the graph a
member's case job shipped is the computation that produced its outputs.

A problem with a driver (`run(sol, *args)`, bank code) has the driver run here with the graph as
`sol[call]`, so what the driver observes of the results (a write into a flat buffer showing in its
views) is observed where the member's code cannot interfere.

Its source is a sandbox job of its own (runner.judging), run with no member code in it: the graph
is interpreted node by node, and the only functions it can call are aten operator overloads
resolved by name (`torch.ops.aten.<name>.<overload>`, checked to be an OpOverload), indexing a
node's tuple result, and a fixed table of Python scalar operations (+, -, *, /, //, %, **, abs,
comparisons, floor/ceil/trunc, int/float, min/max: what `.item()` values are computed with)
applied to plain numbers only, never to a tensor (so no operator can reach a kernel). Nothing
here decides a verdict: the outputs go back as a safetensors record that the trusted side
(runner.judge_host) reads with its caps and compares. Standard library + torch + safetensors.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any

MARK = "TDJR "
OP_NAME = re.compile(r"^aten\.([a-z_][a-z0-9_]{0,80})\.([A-Za-z0-9_]{1,40})$")
CONST_CAP = 256
POW_CAP = 64  # an integer power's exponent: larger ones are refused, not computed
INT_CAP = 2**63  # an integer result beyond it is refused (repeated squaring would grow without end)


class Refused(ValueError):
    """The graph asks for something the replay does not do."""


def resolve(name: str) -> Any:
    """The aten overload `name` names, or Refused: never any other attribute or callable."""
    import torch
    found = OP_NAME.match(name)
    if not found or found.group(1).startswith("__") or found.group(2).startswith("__"):
        raise Refused("an operation name it cannot use")
    try:
        overload = getattr(getattr(torch.ops.aten, found.group(1)), found.group(2))
    except (AttributeError, RuntimeError) as exc:
        raise Refused("an unknown operation") from exc
    if not isinstance(overload, torch._ops.OpOverload) or overload.namespace != "aten":
        raise Refused("an unknown operation")
    return overload


def _scalar(name: str, args: list[Any]) -> Any:
    """A scalar operation of the fixed table on plain numbers (bool, int, float), or Refused."""
    import math
    import operator
    table: dict[str, Any] = {n: getattr(operator, n) for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "pos", "pow", "abs",
        "eq", "ne", "lt", "le", "gt", "ge")}
    table.update(floor=math.floor, ceil=math.ceil, trunc=math.trunc, sym_float=float, sym_int=int,
                 sym_max=max, sym_min=min, **{"not": operator.not_})
    fn = table.get(name)
    if fn is None or not 1 <= len(args) <= 2 or not all(type(a) in (bool, int, float) for a in args):
        raise Refused("a scalar operation it cannot do")
    if name == "pow" and isinstance(args[-1], int) and abs(args[-1]) > POW_CAP:
        raise Refused("a power too large")
    result = fn(*args)
    if isinstance(result, int) and abs(result) > INT_CAP:
        raise Refused("a number too large")
    return result


def _value(data: Any, values: list[Any], depth: int = 0) -> Any:
    import torch
    if depth > 8:
        raise Refused("arguments nested too deeply")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, dict) and len(data) == 1:
        (key, item), = data.items()
        if key == "n" and isinstance(item, int) and 0 <= item < len(values):
            return values[item]
        if key in ("l", "t") and isinstance(item, list):
            items = [_value(v, values, depth + 1) for v in item]
            return items if key == "l" else tuple(items)
        if key == "device" and item == "cpu":
            return torch.device("cpu")
        kinds = {"dtype": torch.dtype, "layout": torch.layout, "mf": torch.memory_format}
        if key in kinds and isinstance(item, str) and re.fullmatch(r"[a-z0-9_]{1,30}", item):
            found = getattr(torch, item, None)
            if isinstance(found, kinds[key]):
                return found
    raise Refused("an argument it cannot read")


def _const(node: dict[str, Any]) -> Any:
    import torch
    dtype, shape, data = node.get("dtype"), node.get("shape"), node.get("data")
    if not (isinstance(shape, list) and all(isinstance(n, int) and 0 <= n <= CONST_CAP for n in shape)
            and isinstance(data, list) and len(data) <= CONST_CAP):
        raise Refused("a constant it cannot read")
    kind = _value({"dtype": dtype}, [])
    return torch.tensor(data, dtype=kind).reshape(shape)


def replay(graph: dict[str, Any], args: tuple) -> Any:
    """Run the graph on args (flattened as make_fx flattened them): the output tree it returns."""
    import operator

    import torch.utils._pytree as pytree
    leaves = pytree.tree_flatten(args)[0]
    values: list[Any] = []
    for node in graph["nodes"]:
        op = node.get("op")
        if op == "input":
            i = node.get("i")
            if not isinstance(i, int) or not 0 <= i < len(leaves):
                raise Refused("an input the case does not have")
            values.append(leaves[i])
        elif op == "const":
            values.append(_const(node))
        elif op == "getitem":
            seq, index = _value(node.get("a"), values)
            if not isinstance(seq, tuple | list) or not isinstance(index, int):
                raise Refused("an index it cannot use")
            values.append(operator.getitem(seq, index))
        elif op == "scalar":
            args = _value(node.get("a"), values)
            if not isinstance(args, list):
                raise Refused("an argument it cannot read")
            values.append(_scalar(str(node.get("f")), args))
        elif op == "call":
            fn = resolve(str(node.get("f")))
            kwargs = node.get("k") or {}
            if not isinstance(kwargs, dict):
                raise Refused("an argument it cannot read")
            values.append(fn(*_value(node.get("a"), values),
                             **{str(k): _value(v, values) for k, v in kwargs.items()}))
        else:
            raise Refused("a node it cannot read")
    return _value(graph.get("out"), values)


def _flatten(obj: Any, prefix: str, out: dict[str, Any]) -> None:
    """Output keys as the harness names them (r.out, r.out.0, r.<driver's key>, ...)."""
    import torch
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided or obj.is_complex():
            raise Refused("an output it cannot compare")
        out[prefix] = obj.detach().contiguous().clone()
    elif isinstance(obj, list | tuple):
        for i, item in enumerate(obj):
            _flatten(item, f"{prefix}.{i}", out)
    elif isinstance(obj, dict):  # a driver's result, keyed as the harness keys it
        for key in sorted(obj, key=str):
            _flatten(obj[key], f"{prefix}.{key}", out)
    elif isinstance(obj, bool):
        out[prefix] = torch.tensor(obj)
    elif isinstance(obj, int | float):
        out[prefix] = torch.tensor(float(obj), dtype=torch.float64)
    elif obj is not None:
        raise Refused("an output it cannot compare")


def decode_args(tree: Any, tensors: dict[str, Any]) -> Any:
    """A case's arguments from their JSON tree (the format of runner.judge_host.encode_args)."""
    kind = tree.get("t")
    if kind == "tensor":
        flat = tensors[tree["k"]]
        return flat.as_strided(tree["size"], tree["stride"]) if "size" in tree else flat
    if kind in ("list", "tuple"):
        items = [decode_args(item, tensors) for item in tree["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {key: decode_args(item, tensors) for key, item in tree["v"]}
    return tree.get("v")


def drive(driver: str, call: str, graph: dict[str, Any], args: tuple) -> Any:
    """The problem's driver `run(sol, *args)` (bank code: the tests without cases()) with the graph
    as the member's function: what the driver does with the results (write into a buffer, read
    the views) happens here, where no member code can intercept it."""
    import math

    import torch
    ns: dict[str, Any] = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math}
    exec(compile(driver, "driver.py", "exec"), ns)
    return ns["run"]({call: lambda *given: replay(graph, given)}, *args)


def replay_all(jobs: list[dict[str, Any]]) -> bytes:
    """Each job's outputs under '<job>:<key>'; a job that fails is named in the metadata."""
    import torch
    from safetensors.torch import load, save
    torch.manual_seed(0)
    tensors: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for j, job in enumerate(jobs):
        try:
            args = tuple(decode_args(job["tree"], load(base64.b64decode(job["inputs"]))))
            graph = json.loads(job["graph"])
            out: dict[str, Any] = {}
            if job.get("driver"):
                _flatten(drive(job["driver"], str(job["call"]), graph, args), "r", out)
            else:
                _flatten(replay(graph, args), "r.out", out)
            tensors.update({f"{j}:{key}": t for key, t in out.items()})
        except Refused as exc:
            errors[str(j)] = str(exc)[:100]
        except Exception as exc:  # an aten error on these arguments: it did not reproduce
            errors[str(j)] = f"it raised {type(exc).__name__}"
    return save(tensors, metadata={"errors": json.dumps(errors)})


def replay_main(payload: dict[str, Any]) -> None:
    """The sandbox job's entry: one result line holding the record."""
    import torch
    torch.set_num_threads(1)
    record = replay_all(list(payload["jobs"]))
    sys.stdout.write(MARK + json.dumps({"record": base64.b64encode(record).decode()}) + "\n")
    sys.stdout.flush()
