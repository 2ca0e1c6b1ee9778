"""Rules about *how* a result is computed, decided from evidence held outside the member's process.

A problem that forbids operations (`forbid_ops`: aten overload packets such as `aten._softmax`)
has each case job trace the member's call with make_fx into an aten-level graph, shipped as JSON
data (runner.judge_harness.trace_graph). Here, on the trusted side, each graph is read with caps,
its operations are checked against the forbidden packets (every Python name of a kernel — a
private alias, `torch.ops.aten`, `torch._C._nn`, a string built at run time — reaches the same
aten op), and the graph is replayed in a sandbox job that holds no member code
(runner.judge_replay): on the case's inputs it must reproduce the outputs the member's code
returned, and on a second input drawn here it must reproduce the reference, so a benign graph
cannot front for another computation nor be specialised to one input. A graph that is missing,
too large, unreadable or does not reproduce is a verdict, never a crash.

A problem marked `traced` gets the same graph and replay with nothing forbidden: its rule ("no
Python branch on a value", "views of one buffer", the latter through its driver replayed with the
graph) shows in whether the replay reproduces the outputs, decided outside.

The graph may also hold Python scalar arithmetic on values read with `.item()` / `.tolist()`
(traced as symbols, so the graph is not specialised to one input); the replay computes it from a
fixed table of scalar operations on numbers only. A value used in a Python decision cannot be
traced: the verdict names that and how to write it instead, with the member's line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

GRAPH_CAP = 1_000_000  # characters of one graph's JSON
GRAPH_NODES = 5_000
UNCHECKED = "your computation could not be checked: "
FORBIDDEN = "your code uses {op}, which this problem forbids (under any name)"
_CHECKS = "this problem's judge checks the operations your function runs, so "
BRANCHES = ("your code branches on a tensor value in Python{where}: an `if`, `max()` or a comparison "
            "on it; " + _CHECKS + "write it with tensor operations such as torch.where or clamp")
NUMBER = ("your code turns a tensor value into a plain Python number{where}; " + _CHECKS
          + "keep it a tensor (t.exp(), not math.exp(t.item()); no float(t))")
UNRECORDED = UNCHECKED + ("its operations could not be recorded on this test{where}; " + _CHECKS
                          + "compute with torch operations only (no numpy)")
WHERE = " (the line is below)"
TRACE_FAILURES = {"branch": BRANCHES, "number": NUMBER}


@dataclass(frozen=True)
class Graph:
    text: str  # the JSON as shipped (what the replay job receives)
    ops: frozenset[str]  # aten overload names it calls


def read_graph(evidence: Any) -> Graph | str:
    """The graph of one case job's evidence, or why it cannot be checked (the member's words
    never come back: only ours)."""
    if not isinstance(evidence, str) or not evidence:
        return UNCHECKED + "no graph came back"
    if len(evidence) > GRAPH_CAP:
        return UNCHECKED + "its graph is larger than the judge accepts"
    try:
        shipped = json.loads(evidence)
        if not isinstance(shipped, dict):
            raise ValueError
        if "graph_error" in shipped and "graph" not in shipped:
            text = TRACE_FAILURES.get(str(shipped.get("trace_failure")), UNRECORDED)
            return text.format(where=WHERE if member_line(evidence) else "")
        text = shipped["graph"]
        graph = json.loads(text)
    except (ValueError, KeyError, TypeError, RecursionError):
        return UNCHECKED + "its graph could not be read"
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        return UNCHECKED + "its graph could not be read"
    if len(nodes) > GRAPH_NODES:
        return UNCHECKED + f"its graph has more than {GRAPH_NODES} operations"
    ops = frozenset(str(n.get("f"))[:120] for n in nodes if n.get("op") == "call")
    return Graph(text, ops)


def member_line(evidence: Any) -> str | None:
    """The member's line a failed trace names (their own text: shown only in a code block)."""
    try:
        line = json.loads(evidence).get("line") if isinstance(evidence, str) and evidence else None
    except (ValueError, AttributeError, RecursionError):
        return None
    return line[:160] if isinstance(line, str) and line else None


def packet(op: str) -> str:
    """aten._softmax.default -> aten._softmax (every overload of a forbidden op is forbidden)."""
    return ".".join(op.split(".")[:2])


def forbidden_op(graph: Graph, forbid_ops: tuple[str, ...]) -> str | None:
    """The verdict text for the first forbidden operation the graph calls, if any."""
    used = sorted({packet(op) for op in graph.ops} & set(forbid_ops))
    return FORBIDDEN.format(op=used[0]) if used else None


def same_inputs(a: tuple[dict[str, Any], dict[str, Any]], b: tuple[dict[str, Any], dict[str, Any]]) -> bool:
    """Whether two encoded cases (tree, tensors) have the same structure, shapes, dtypes and
    non-tensor values: only then can a graph traced on one replay the other."""
    tree_a, tensors_a = a
    tree_b, tensors_b = b
    return tree_a == tree_b and all(
        k in tensors_b and t.shape == tensors_b[k].shape and t.dtype == tensors_b[k].dtype
        for k, t in tensors_a.items())
