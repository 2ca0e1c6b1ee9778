"""Forbidden operations as a verdict from evidence held outside the member's process, through a
real sandbox slot as the worker runs it (runner.judging): every other name of a forbidden kernel
is the same aten op in the graph traced in the case job, and a graph faked inside the member's
process is caught by the replay job (no member code), which must reproduce the member's outputs
and the reference on a second secret input."""

from __future__ import annotations

import os
import textwrap
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.core.content.challenges import Challenge, load_challenges
from runner import judging
from runner.isolation import Level, detect
from runner.jobs import Device, JobRequest, Limits
from runner.judge import Verdict, judge_job
from runner.pool import LocalPool
from runner.settings import RunnerSettings

pytestmark = pytest.mark.asyncio(loop_scope="module")
REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
FULL = detect().level is Level.FULL
needs_namespaces = pytest.mark.skipif(
    not FULL and not REQUIRE, reason=f"needs bubblewrap: {detect().problem}")
LIMITS = Limits(timeout_s=20, cpu_time_s=40, memory_mb=1024, max_procs=64, file_size_mb=8,
                output_cap_bytes=1_000_000, display_chars=500)
SOFTMAX = load_challenges().get("stable-softmax")
LOGSUMEXP = load_challenges().get("logsumexp")
FIRST = "test 'basic' (inputs 4×10, int): "
FORBIDDEN = FIRST + "your code uses {}, which this problem forbids (under any name)"
NOT_REPRODUCED = FIRST + ("your computation could not be checked: the graph traced from your code "
                          "does not reproduce its outputs")
UNRECORDED = ("your computation could not be checked: its operations could not be recorded on this "
              "test (the line is below); this problem's judge checks the operations your function "
              "runs, so compute with torch operations only (no numpy)")
SPECIALISED = FIRST + ("your computation could not be checked: the graph traced from your code "
                       "gives wrong values on other inputs of the same shapes")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LocalPool]:
    conf = RunnerSettings(cpu_slots=1, gpus=[], disk_mb=32, allow_weak_isolation=not FULL)
    slots = LocalPool(conf, gpus=[])
    await slots.start()
    yield slots
    await slots.close()


async def judge(pool: LocalPool, code: str, challenge: Challenge | None = SOFTMAX) -> Verdict:
    assert challenge is not None
    picked = pool.claim(Device.CPU)
    assert picked is not None
    slot, note = picked
    request = JobRequest(textwrap.dedent(code), "t:member", {}, Device.CPU,
                         judge=judge_job(challenge.id, challenge.spec, challenge.reference))
    result = await judging.execute(pool, "judge", request, slot, note, LIMITS)
    assert result.verdict is not None
    return Verdict.from_dict(result.verdict)


@needs_namespaces
async def test_the_honest_reference_passes_with_its_evidence(pool: LocalPool) -> None:
    assert SOFTMAX is not None and "aten._softmax" in SOFTMAX.forbid_ops
    verdict = await judge(pool, SOFTMAX.reference)
    assert (verdict.passed, verdict.total, verdict.failure) == (7, 7, None)


ALIASES = {
    "a private alias": ("torch._softmax(x, dim, False)", "aten._softmax"),
    "torch.ops.aten": ("torch.ops.aten._softmax.default(x, dim, False)", "aten._softmax"),
    "torch._C._VariableFunctions": ("torch._C._VariableFunctions.softmax(x, dim)", "aten._softmax"),
    "torch._C._nn through F's own module": (
        "torch._C._nn.softmax(x, dim) if hasattr(torch._C._nn, 'softmax') "
        "else torch._C.TensorBase.softmax(x, dim)", "aten._softmax"),
    "the public name itself": ("torch.nn.functional.softmax(x, dim)", "aten._softmax"),
    "a name built at run time": ("getattr(torch, '_soft' + 'max')(x, dim, False)", "aten._softmax"),
    "a Tensor method found by string": ("getattr(x, 'log_' + 'softmax')(dim).exp()", "aten._log_softmax"),
    "log_softmax(...).exp()": ("torch.log_softmax(x, dim).exp()", "aten._log_softmax"),
}


@needs_namespaces
@pytest.mark.parametrize("name", list(ALIASES))
async def test_every_name_of_a_forbidden_kernel_is_the_same_forbidden_op(pool: LocalPool, name: str) -> None:
    body, op = ALIASES[name]
    verdict = await judge(pool, f"import torch\ndef softmax(x, dim):\n    return {body}\n")
    assert (verdict.passed, verdict.failure) == (0, FORBIDDEN.format(op)), name


@needs_namespaces
async def test_a_benign_graph_fronting_for_a_forbidden_computation_does_not_reproduce(pool: LocalPool) -> None:
    """The member patches make_fx in their process so the tracer sees an innocent function:
    the replay job computes that function's values, which are not the ones the code returned."""
    verdict = await judge(pool, """
        import torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        real = proxy_tensor.make_fx
        proxy_tensor.make_fx = lambda fn, **kw: real(lambda x, dim: x * 1.0, **kw)
        def softmax(x, dim):
            return torch._softmax(x, dim, False)
    """)  # only the empty batch, where x * 1.0 is the (empty) answer, passes
    assert (verdict.passed, verdict.failure) == (1, NOT_REPRODUCED)


@needs_namespaces
async def test_a_graph_that_only_replays_this_tests_answer_fails_on_the_second_input(pool: LocalPool) -> None:
    """A graph holding the returned values as a constant reproduces them on this test's inputs;
    on the second input drawn outside it does not give the reference's values."""
    verdict = await judge(pool, """
        import torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        real = proxy_tensor.make_fx
        answer = {}
        def fake(fn, **kw):
            return real(lambda x, dim: torch.tensor(answer["out"].tolist()) + x * 0, **kw)
        proxy_tensor.make_fx = fake
        def softmax(x, dim):
            answer["out"] = torch._softmax(x.detach(), dim, False)
            return torch._softmax(x, dim, False)
    """)
    assert (verdict.passed, verdict.failure) == (0, SPECIALISED)


@needs_namespaces
async def test_a_forged_or_missing_graph_is_a_verdict_not_a_crash(pool: LocalPool) -> None:
    """The member's process writes its own evidence file, or breaks the tracer."""
    broken = await judge(pool, """
        import torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        def refuse(*a, **k):
            raise RuntimeError("no tracing here")
        proxy_tensor.make_fx = refuse
        def softmax(x, dim):
            return torch._softmax(x, dim, False)
    """)
    assert (broken.passed, broken.failure, broken.detail) == (
        0, FIRST + UNRECORDED, 'line 5: raise RuntimeError("no tracing here")')
    forge = """
        import json, sys, torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        def refuse(*a, **k):
            raise RuntimeError("no tracing here")
        proxy_tensor.make_fx = refuse
        def softmax(x, dim):
            frame = sys._getframe(1)
            while frame is not None and not isinstance(frame.f_locals.get("evidence"), dict):
                frame = frame.f_back
            frame.f_locals["evidence"]["graph"] = json.dumps({"nodes": NODES, "out": {"n": 1}})
            return torch._softmax(x, dim, False)
    """
    sneaky = '[{"op": "input", "i": 0}, {"op": "call", "f": "aten.__class__.__init__", "a": {"l": []}}]'
    forged = await judge(pool, forge.replace("NODES", sneaky))
    assert (forged.passed, forged.failure) == (
        0, NOT_REPRODUCED + " (the replay met an operation name it cannot use)")
    huge = await judge(pool, forge.replace("NODES", '[{"op": "input", "i": 0}] * 5001'))
    assert (huge.passed, huge.failure) == (
        0, FIRST + "your computation could not be checked: its graph has more than 5000 operations")


# ---- values read with .item() / .tolist(): traced as symbols, replayed on the second input ----

ITEM_SOLUTIONS = {
    "softmax, one .item() max per row": (SOFTMAX, """
        import torch

        def softmax(x, dim):
            rows = x.movedim(dim, -1)
            flat = rows.reshape(-1, rows.shape[-1])
            if flat.shape[0] == 0:
                return x.clone()
            out = []
            for r in flat:
                m = r.max().item()
                e = (r - m).exp()
                out.append(e / e.sum())
            return torch.stack(out).reshape(rows.shape).movedim(-1, dim)
    """),
    "softmax, the row maxima through .tolist()": (SOFTMAX, """
        import torch

        def softmax(x, dim):
            rows = x.movedim(dim, -1)
            flat = rows.reshape(-1, rows.shape[-1])
            maxima = flat.amax(dim=-1).tolist() if flat.shape[0] else []
            out = [((r - m) * 1.0).exp() for r, m in zip(flat, maxima)]
            out = [e / e.sum() for e in out]
            return torch.stack(out).reshape(rows.shape).movedim(-1, dim) if out else x.clone()
    """),
    "logsumexp, one .item() shift per row, arithmetic on it": (LOGSUMEXP, """
        import torch

        def logsumexp(x, dim):
            rows = x.movedim(dim, -1)
            out = []
            for r in rows.reshape(-1, rows.shape[-1]):
                m = r.max().clamp(min=-3e38).item()  # finite even for an all -inf row
                s = (r - m).exp().sum()
                safe = torch.where(s > 0, s, 1.0)
                out.append(torch.where(s > 0, safe.log() + m * 1.0, float("-inf")))
            return torch.stack(out).reshape(rows.shape[:-1])
    """),
}


@needs_namespaces
@pytest.mark.parametrize("name", list(ITEM_SOLUTIONS))
async def test_a_correct_solution_reading_values_with_item_or_tolist_passes(pool: LocalPool, name: str) -> None:
    """Traced with fake tensors, an .item() value is a symbol in the graph (not this input's
    number), so the replay recomputes it on the second secret input and the solution passes."""
    challenge, code = ITEM_SOLUTIONS[name]
    assert challenge is not None and challenge.forbid_ops
    verdict = await judge(pool, code, challenge)
    assert (verdict.passed, verdict.total, verdict.failure) == (7, 7, None), name


@needs_namespaces
async def test_a_forbidden_kernel_read_through_item_is_still_the_forbidden_op(pool: LocalPool) -> None:
    verdict = await judge(pool, """
        import torch

        def softmax(x, dim):
            s = torch._softmax(x, dim, False)
            return s * (s.sum().item() * 0.0 + 1.0)
    """)
    assert (verdict.passed, verdict.failure) == (0, FORBIDDEN.format("aten._softmax"))


BRANCHES = ("your code branches on a tensor value in Python (the line is below): an `if`, `max()` or "
            "a comparison on it; this problem's judge checks the operations your function runs, so "
            "write it with tensor operations such as torch.where or clamp")
NUMBER = ("your code turns a tensor value into a plain Python number (the line is below); this "
          "problem's judge checks the operations your function runs, so keep it a tensor (t.exp(), "
          "not math.exp(t.item()); no float(t))")


@needs_namespaces
async def test_a_branch_on_a_tensor_value_is_named_with_its_line_and_how_to_write_it(pool: LocalPool) -> None:
    """Right values, but which path runs depends on the input: no graph can stand for it."""
    verdict = await judge(pool, """
        import torch

        def softmax(x, dim):
            if x.abs().max() > 50:
                x = x - x.amax(dim=dim, keepdim=True)
            e = x.exp()
            return e / e.sum(dim=dim, keepdim=True)
    """)
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, FIRST + BRANCHES, "line 5: if x.abs().max() > 50:")


@needs_namespaces
async def test_a_table_looked_up_by_a_python_number_of_the_input_is_refused(pool: LocalPool) -> None:
    """Answers kept by an input's value (computed with the forbidden kernel): the lookup needs a
    plain number, which the trace refuses, so it is a verdict, never a pass."""
    verdict = await judge(pool, """
        import torch

        seen = {}

        def softmax(x, dim):
            key = float(x.detach().sum()) if x.numel() else 0.0
            seen[key] = seen.get(key, torch._softmax(x, dim, False))
            return seen[key]
    """)
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, FIRST + NUMBER, "line 7: key = float(x.detach().sum()) if x.numel() else 0.0")


# ---- issue 29, class 2: a rule checked in the member's process was believed ---------------------
# traceable-clip's driver traced the function with torch.fx.symbolic_trace in the member's
# process, and flatten-grads' driver wrote into the flat buffer there: both are `traced` now, so
# the graph is replayed outside (a driver with the graph as the member's function).
CLIP = load_challenges().get("traceable-clip")
FLATTEN = load_challenges().get("flatten-grads")
CLIP_FIRST = "test 'mixed rows' (inputs 5×5): "
FLATTEN_FIRST = "test 'mixed shapes' (inputs list of 3): "
NOT_REPRODUCED_TEXT = ("your computation could not be checked: the graph traced from your code "
                       "does not reproduce its outputs")


@needs_namespaces
async def test_the_traced_problems_references_pass_with_their_evidence(pool: LocalPool) -> None:
    assert CLIP is not None and FLATTEN is not None and CLIP.traced and FLATTEN.traced
    for challenge, total in ((CLIP, 5), (FLATTEN, 4)):
        verdict = await judge(pool, challenge.reference, challenge)
        assert (verdict.passed, verdict.total, verdict.failure) == (total, total, None), challenge.id


@needs_namespaces
async def test_a_patched_tracer_no_longer_passes_a_branch_on_a_value(pool: LocalPool) -> None:
    """The audit's attack: the branching known-wrong solution with symbolic_trace replaced by the
    identity passed 5/5 when the trace ran in the member's driver."""
    assert CLIP is not None
    verdict = await judge(pool, """
        import torch
        torch.fx.symbolic_trace = lambda f: f

        def soft_clip(x):
            peak = x.abs().amax(dim=-1, keepdim=True)
            if (peak > 1).any():
                return x / torch.clamp(peak, min=1.0)
            return x
    """, CLIP)
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, CLIP_FIRST + BRANCHES, "line 7: if (peak > 1).any():")


@needs_namespaces
async def test_a_branch_behind_a_forged_graph_of_one_path_does_not_reproduce(pool: LocalPool) -> None:
    """make_fx patched to record one branch's path (the identity): the replay computes that path,
    which is not what the code returned on rows above 1."""
    assert CLIP is not None
    verdict = await judge(pool, """
        import torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        real = proxy_tensor.make_fx
        proxy_tensor.make_fx = lambda fn, **kw: real(lambda x: x * 1.0, **kw)

        def soft_clip(x):
            peak = x.abs().amax(dim=-1, keepdim=True)
            if (peak > 1).any():
                return x / torch.clamp(peak, min=1.0)
            return x
    """, CLIP)
    assert verdict.failure == CLIP_FIRST + NOT_REPRODUCED_TEXT


@needs_namespaces
async def test_copies_posing_as_views_fail_even_with_a_patched_write(pool: LocalPool) -> None:
    """The audit's attacks on flatten-grads: copies already doubled (no shared memory), and copies
    that a patched Tensor.mul_ doubles when the driver writes into `flat`. The driver replayed
    outside with the traced graph writes into a buffer no member code can reach."""
    assert FLATTEN is not None
    doubled = await judge(pool, """
        import torch

        def flatten(tensors):
            flat = torch.cat([t.reshape(-1) for t in tensors])
            return flat, [t.clone() * 2 for t in tensors]
    """, FLATTEN)
    assert doubled.passed == 0 and (doubled.failure or "").startswith(FLATTEN_FIRST + "views[0]: ")
    patched = await judge(pool, """
        import torch
        original = torch.Tensor.mul_
        copies = []

        def mul_(self, other):
            for copy in copies:
                original(copy, other)
            return original(self, other)
        torch.Tensor.mul_ = mul_

        def flatten(tensors):
            flat = torch.cat([t.reshape(-1) for t in tensors])
            copies[:] = [t.clone() for t in tensors]
            return flat, list(copies)
    """, FLATTEN)
    assert (patched.passed, patched.failure) == (0, FLATTEN_FIRST + NOT_REPRODUCED_TEXT)


@needs_namespaces
async def test_a_forged_graph_of_copies_behind_real_views_does_not_reproduce(pool: LocalPool) -> None:
    """Real views in the member's process, but the tracer fed a function returning copies: the
    replayed copies do not follow the write into `flat`."""
    assert FLATTEN is not None
    verdict = await judge(pool, """
        import torch
        import torch.fx.experimental.proxy_tensor as proxy_tensor
        real = proxy_tensor.make_fx

        def copies(tensors):
            return torch.cat([t.reshape(-1) for t in tensors]), [t.clone() for t in tensors]
        proxy_tensor.make_fx = lambda fn, **kw: real(copies, **kw)

        def flatten(tensors):
            flat = torch.cat([t.reshape(-1) for t in tensors])
            views, offset = [], 0
            for t in tensors:
                views.append(flat[offset:offset + t.numel()].view(t.shape))
                offset += t.numel()
            return flat, views
    """, FLATTEN)
    assert verdict.passed == 0 and (verdict.failure or "").startswith(FLATTEN_FIRST + NOT_REPRODUCED_TEXT)
