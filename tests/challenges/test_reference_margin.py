"""Every reference passes with margin on every seed (issue 29): the judge compares a member's
values with the reference's float32 values, so the reference's own float32 error must be well
inside the problem's tolerance, on many secret seeds, or an exact solution passes by luck.

For each problem and secret seed the judge's own cases are drawn (`judge_host.prepare`, which
also computes the float32 values a member is judged against), the reference runs again through
the judge's harness on the same inputs with float32 made float64 (inputs, the default dtype, and
so every tensor a driver creates), and the judge's own comparison (`judge_host.compare`) must
accept the float32 values at a quarter of the tolerance. Random draws inside the run (a driver's
`nn.Linear` initialisation, a dropout mask) are made in float32 and widened, so both runs see the
same numbers. Integer and boolean outputs must be equal. The reference is our own code, so it
runs in this process, not in the sandbox. The cases of secrets 1-3 are the bank test's own
(tests/support/judge.prepared): computed once for both tests when they run in one session.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from bot.core.content.challenges import load_challenges
from runner import judge_harness, tensor_io
from runner.judge_host import Outcome, compare, outcome_of, prepare
from tests.support.judge import prepared

BANK = load_challenges()
# 4 seeds in CI (8 were run when the margins were set, 2026-12-05: the failures they found were
# at seeds 1 and 7, and both problems' tolerances were fixed); the suite's time is a budget
SEEDS = range(4)
FEWER_SEEDS = {  # problem: seeds, where one seed costs tens of seconds of CPU (both precisions)
    "chunked-cross-entropy": range(1),  # 3000 × 16384 and 1600 × 32768 logits
    "fix-loss-accumulation": range(1),  # fifty 1024 × 4096 forward passes
}
MARGIN = 0.25  # of atol + rtol·|exact|
# problem: {output key: why the reference returns it in float32 whatever its inputs}
FLOAT32_BY_CONTRACT = {
    "chunked-cross-entropy": {"r.out.0": "the loss is summed in float64 and returned as float32"},
}
# problem: (its cases whose point is float32 or lower-precision numerics, () for all; why)
NOT_IN_FLOAT64 = {
    "autocast-linear": ((), "bfloat16 autocast: the bfloat16 rounding is what is judged"),
    "clip-grad-norm": ((), "float16 gradients whose norm is summed in float32: the reference asks "
                           "linalg.vector_norm for a float32 result, which a float64 input refuses"),
    "dynamic-loss-scaler-step": (("a gradient that overflows once scaled",),
                                 "1e36 × 65536 overflows float32 (the case's point), not float64"),
}
aten = torch.ops.aten
DRAWS_IN_PLACE = {aten.uniform_, aten.normal_, aten.bernoulli_, aten.exponential_,
                  aten.log_normal_, aten.cauchy_, aten.geometric_, aten.random_}
DRAWN_TENSORS = {aten.randn, aten.rand}  # dtype: the argument, else the default
DRAWS_LIKE = {aten.randn_like, aten.rand_like, aten.normal, aten.bernoulli, aten.native_dropout,
              aten.multinomial, aten.poisson}  # dtype: the argument, else their tensor's


def _to32(x: Any) -> Any:
    return x.float() if isinstance(x, torch.Tensor) and x.dtype == torch.float64 else x


def _to64(x: Any) -> Any:
    return x.double() if isinstance(x, torch.Tensor) and x.dtype == torch.float32 else x


class Float32Draws(TorchDispatchMode):
    """Random draws on float64 tensors made in float32 and widened: the same generator bits as
    the float32 run (a float64 draw uses other bits, so other numbers)."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        packet = func.overloadpacket
        if packet in DRAWS_IN_PLACE and args[0].dtype == torch.float64:
            drawn = torch.empty_like(args[0], dtype=torch.float32)
            func(drawn, *args[1:], **kwargs)
            return args[0].copy_(drawn)
        if packet in DRAWN_TENSORS and (kwargs.get("dtype") or torch.get_default_dtype()) == torch.float64:
            return func(*args, **{**kwargs, "dtype": torch.float32}).double()
        if packet in DRAWS_LIKE and kwargs.get("dtype") in (None, torch.float64) and any(
                isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args):
            narrowed = {**kwargs, "dtype": torch.float32} if kwargs.get("dtype") else kwargs
            return tree_map(_to64, func(*tree_map(_to32, args), **narrowed))
        return func(*args, **kwargs)


def _widened(stage: dict[str, Any]) -> dict[str, Any]:
    if "inputs" not in stage:
        return stage
    given = tensor_io.read(base64.b64decode(stage["inputs"]))[1]
    widened = tensor_io.write({key: _to64(t) for key, t in given.items()})
    return {**stage, "inputs": base64.b64encode(widened).decode()}


def in_float64(payload: dict[str, Any], reference: str) -> Outcome:
    """The reference's values on the case's inputs (and gradient weights) made float64, through
    both stages of a problem in two (the first stage's record carried as the judge carries it)."""
    first, then = judge_harness.stages(payload)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with Float32Draws():
            record = judge_harness.compute({**_widened(first), "code": reference})
            if then is not None:
                carried = judge_harness.carried_stage(_widened(then), base64.b64encode(record).decode())
                record = judge_harness.compute({**carried, "code": reference})
    finally:
        torch.set_default_dtype(default)
    return outcome_of(record)


def test_the_exceptions_name_problems_of_the_bank() -> None:
    for challenge_id, (cases, why) in NOT_IN_FLOAT64.items():
        challenge = BANK.get(challenge_id)
        assert challenge is not None and why, challenge_id
        names = {c.name for c in prepare(challenge.spec, challenge.reference, 1, 15.0)}
        assert set(cases) <= names, challenge_id
    for challenge_id in {*FEWER_SEEDS, *FLOAT32_BY_CONTRACT}:
        assert BANK.get(challenge_id) is not None, challenge_id


@pytest.mark.parametrize("challenge", BANK.challenges, ids=lambda c: c.id)
def test_the_reference_is_within_a_quarter_of_the_tolerance_on_every_seed(challenge) -> None:
    spec = challenge.spec
    skipped, why = NOT_IN_FLOAT64.get(challenge.id, (None, ""))
    if skipped == ():
        pytest.skip(why)
    atol, rtol = spec.atol * MARGIN, spec.rtol * MARGIN
    for secret in FEWER_SEEDS.get(challenge.id, SEEDS):
        for case in prepared(challenge, secret):  # the bank test's, where it kept them
            if skipped and case.name in skipped:
                continue
            judged, exact = case.expected, in_float64(case.payload, challenge.reference)
            where = f"{challenge.id}, test {case.name!r}, secret {secret}"
            assert exact.error is None and judged.error is None, (where, exact.error, judged.error)
            assert (set(exact.tensors), exact.kinds) == (set(judged.tensors), judged.kinds), where
            for key, got in judged.tensors.items():
                want = exact.tensors[key]
                if got.is_floating_point():
                    assert got.dtype != torch.float32 or want.dtype == torch.float64 \
                        or key in FLOAT32_BY_CONTRACT.get(challenge.id, {}), (
                        f"{where}: {key} stays {want.dtype} in the float64 run; "
                        "list the problem in NOT_IN_FLOAT64 with the reason")
                    problem = compare(want.double(), got.double(), atol, rtol)
                else:
                    problem = compare(want, got, 0, 0)
                assert problem is None, f"{where}: {key}: {problem} (at a quarter of the tolerance)"
