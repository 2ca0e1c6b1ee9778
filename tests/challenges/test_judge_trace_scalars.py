"""The traced graph of a forbid_ops problem, in-process: values read with `.item()` / `.tolist()`
become symbols whose scalar arithmetic the replay recomputes (from a fixed table, on plain
numbers only); what cannot become a graph is named; and the fake-tensor trace, which `.item()`
leads to, sees the same forbidden kernel behind every public function as the real one. The
sandbox tests (tests/challenges/test_judge_evidence.py) judge real jobs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

from bot.core.content.challenges import load_challenges
from runner import judge_evidence, judge_harness, judge_replay

BANK = load_challenges()


def traced(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads(judge_harness.trace_graph(fn, args))
    return graph


def test_item_and_tolist_values_are_symbols_recomputed_on_another_input() -> None:
    def member(x: torch.Tensor) -> torch.Tensor:
        m = x.max().item()
        first = x[0].tolist()
        return x - m * 2 + (-m) + m ** 2 / 3 - m // 2 + abs(sum(first)) - torch.sym_max(m, 0.0) \
            + x * (m > 0)

    graph = traced(member, torch.randn(3, 4))
    assert {n["f"] for n in graph["nodes"] if n["op"] == "scalar"} == {
        "abs", "add", "floor", "gt", "mul", "neg", "pow", "sym_float", "sym_max", "truediv"}
    assert not [n for n in graph["nodes"] if n["op"] == "const"]  # no number of this input
    other = torch.randn(3, 4) * 50
    assert torch.allclose(judge_replay.replay(graph, (other,)), member(other))


def test_scalar_operations_take_plain_numbers_only_from_a_fixed_table() -> None:
    """An operator on a tensor would reach a kernel the op check never saw: refused."""
    def graph(name: str, *args: Any) -> dict[str, Any]:
        return {"nodes": [{"op": "input", "i": 0},
                          {"op": "scalar", "f": name, "a": {"l": list(args)}}], "out": {"n": 1}}

    assert judge_replay.replay(graph("mul", 3, 2.5), (torch.zeros(1),)) == 7.5
    assert judge_replay.replay(graph("sym_int", -2.7), (torch.zeros(1),)) == -2
    for name, args in [("mul", ({"n": 0}, 2)), ("matmul", (1, 2)), ("__import__", ("os",)),
                       ("pow", (2, 10**6)), ("mul", (2**40, 2**40)), ("add", ("a", "b")),
                       ("add", (1, 2, 3))]:
        with pytest.raises(judge_replay.Refused):
            judge_replay.replay(graph(name, *args), (torch.zeros(1),))


SCALE = torch.tensor([1.0, 2.0, 3.0, 4.0])


def test_a_tensor_the_code_holds_is_a_graph_constant_as_under_a_real_trace() -> None:
    graph = traced(lambda x: x * SCALE, torch.randn(3, 4))
    assert [n["op"] for n in graph["nodes"]] == ["input", "const", "call"]
    other = torch.randn(3, 4)
    assert torch.equal(judge_replay.replay(graph, (other,)), other * SCALE)


BRANCH_LINE = "line 3: if x.max() > 0:"


@pytest.mark.parametrize(("body", "kind", "line"), [
    ("    if x.max() > 0:\n        return x\n    return -x\n", "branch", BRANCH_LINE),
    ("    return x - max(x[0].tolist())\n", "branch", "line 3: return x - max(x[0].tolist())"),
    ("    return x - float(x.max())\n", "number", "line 3: return x - float(x.max())"),
    ("    import math\n    return x * math.exp(x.max().item())\n", "number",
     "line 4: return x * math.exp(x.max().item())"),
    ("    return torch.from_numpy(x.numpy())\n", "other", "line 3: return torch.from_numpy(x.numpy())"),
])
def test_what_cannot_become_a_graph_is_named_with_the_members_line(body: str, kind: str, line: str) -> None:
    code = "import torch\ndef member(x):\n" + body
    ns: dict[str, Any] = {}
    exec(compile(code, "solution.py", "exec"), ns)
    with pytest.raises(Exception) as failed:
        judge_harness.trace_graph(ns["member"], (torch.randn(3, 4),))
    evidence = {"graph_error": "x", **judge_harness.trace_failure(failed.value, code)}
    assert evidence == {"graph_error": "x", "trace_failure": kind, "line": line}
    text = judge_evidence.read_graph(json.dumps(evidence))
    assert text == {"branch": judge_evidence.BRANCHES, "number": judge_evidence.NUMBER}.get(
        kind, judge_evidence.UNRECORDED).format(where=judge_evidence.WHERE)
    assert judge_evidence.member_line(json.dumps(evidence)) == line


X, T = torch.randn(4, 8), torch.rand(4, 8)
Q, Y = torch.randn(2, 3, 5, 4), torch.tensor([1, 2, 3, 0])
YI, MASK = torch.tensor([1, -100, 3, -100]), torch.ones(5, 5, dtype=torch.bool).tril()
Q4, KV = torch.randn(2, 4, 5, 4), torch.randn(2, 2, 5, 4)
Routes = list[tuple[Callable[..., Any], tuple[Any, ...]]]
SDPA: Routes = [  # every CPU route of scaled_dot_product_attention: the fused kernel, or its math path
    (lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True), (Q,)),
    (lambda a, m: F.scaled_dot_product_attention(a, a, a, attn_mask=m), (Q, MASK)),
    (lambda a, m: F.scaled_dot_product_attention(a, a, a, attn_mask=m), (Q, MASK.float().log())),
    (lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True, dropout_p=1e-30), (Q,)),
    (lambda a: torch.ops.aten._scaled_dot_product_attention_math(a, a, a, None, 0.0, True)[0], (Q,)),
    (lambda a: torch._safe_softmax(a, -1), (Q,)),
]
PUBLIC: dict[str, Routes] = {  # each forbid_ops problem's public functions, and what they are called with
    "stable-softmax": [(lambda x: F.softmax(x, -1), (X,))],
    "layer-norm": [(lambda x: F.layer_norm(x, (8,)), (X,)), (lambda x: F.group_norm(x, 1), (X,))],
    "logsumexp": [(lambda x: torch.logsumexp(x, -1), (X,))],
    "huber-loss": [(lambda a, b: F.huber_loss(a, b), (X, T)), (lambda a, b: F.smooth_l1_loss(a, b), (X, T))],
    "bce-with-logits": [(lambda a, b: F.binary_cross_entropy_with_logits(a, b), (X, T)),
                        (lambda a, b: F.binary_cross_entropy(a.sigmoid(), b), (X, T))],
    "pairwise-distances": [(lambda a, b: torch.cdist(a, b), (X, T))],
    "conv2d-unfold": [(lambda a, w: F.conv2d(a, w), (torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3)))],
    "causal-attention": SDPA,
    "label-smoothing-ce": [(lambda a, y: F.cross_entropy(a, y, label_smoothing=0.1), (X, Y)),
                           (lambda a, y: F.nll_loss(a.log_softmax(-1), y), (X, Y))],
    "ce-ignore-smoothing": [(lambda a, y: F.cross_entropy(a, y, ignore_index=-100, label_smoothing=0.1), (X, YI)),
                            (lambda a, y: F.cross_entropy(a, y, ignore_index=2, label_smoothing=0.2), (X, Y)),
                            (lambda a, y: F.nll_loss(a.log_softmax(-1), y, ignore_index=-100), (X, YI)),
                            (lambda a, y: F.nll_loss(a.log_softmax(-1).reshape(4, 8, 1, 1), y.reshape(4, 1, 1)), (X, Y))],
    "gqa-causal": [(lambda a, kv: F.scaled_dot_product_attention(a, kv, kv, is_causal=True, enable_gqa=True), (Q4, KV)),
                   (lambda a, kv, m: F.scaled_dot_product_attention(a, kv, kv, attn_mask=m, enable_gqa=True),
                    (Q4, KV, MASK)),
                   *SDPA],
    "packed-causal-attention": SDPA,
    "padded-causal-attention": SDPA,
}


def test_every_forbid_ops_problem_names_its_public_functions_here() -> None:
    assert set(PUBLIC) == {c.id for c in BANK.challenges if c.forbid_ops}


@pytest.mark.parametrize("problem", list(PUBLIC))
def test_the_fake_tensor_trace_sees_the_same_forbidden_kernel_as_the_real_one(problem: str) -> None:
    """A member can always make the judge trace with fake tensors (one `.item()` does it): the
    library must not take another path there (a type check that skips a fused kernel would let
    the public function pass as ordinary ops)."""
    challenge = BANK.get(problem)
    assert challenge is not None
    for fn, args in PUBLIC[problem]:
        found = []
        for mode in ("real", "fake"):
            gm = make_fx(fn, tracing_mode=mode)(*args)
            ops = {judge_evidence.packet(str(n.target)) for n in gm.graph.nodes if n.op == "call_function"}
            found.append(ops & set(challenge.forbid_ops))
        assert found[0] and found[0] == found[1], (problem, found)
