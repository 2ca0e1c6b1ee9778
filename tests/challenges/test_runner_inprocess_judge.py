"""The judge's trusted side, in-process: the capped record reader, the words of every verdict
(never an expected value), every shape of output, the wire verdict the bot reads, and what a
case's payload holds (one case's inputs, nothing else). The sandbox tests judge real jobs."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest
import torch
from safetensors.torch import save

from runner import judge_harness, judge_host, tensor_io
from runner.judge import JudgeSpec, Verdict, judge_job
from runner.judge_host import Outcome, case_problem, compare, judge_locally, prepare

SOFTMAX = JudgeSpec(
    tests=("def cases():\n    yield 'rows', (torch.randn(4, 6), -1)\n"
           "    yield 'non-contiguous', (torch.randn(6, 4).t(), 1)\n"
           "    yield 'scalar sum', (torch.randn(5), 0)\n"),
    call="softmax", grad=True, atol=1e-5, rtol=1e-4)
REFERENCE = ("import torch\ndef softmax(x, dim):\n    s = x - x.amax(dim=dim, keepdim=True)\n"
             "    e = s.exp()\n    return e / e.sum(dim=dim, keepdim=True)\n")


def judged(code: str, spec: JudgeSpec = SOFTMAX, reference: str = REFERENCE, secret: int = 7) -> Verdict:
    return judge_locally(spec, reference, code, secret)


# ---- the capped reader: a hostile record is a verdict, never an allocation ----------------------


def header(entries: dict[str, Any], body: bytes) -> bytes:
    head = json.dumps(entries).encode()
    return struct.pack("<Q", len(head)) + head + body


@pytest.mark.parametrize(("data", "why"), [
    (b"", "too short"),
    (struct.pack("<Q", 10**9) + b"{}", "header size out of bounds"),
    (header({"a": {"dtype": "F32", "shape": [2**31, 2**31], "data_offsets": [0, 8]}}, b"\0" * 8),
     "bad dtype or shape for 'a'"),
    (header({"a": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 8]}}, b"\0" * 8),
     "declared size of 'a' does not match its bytes"),
    (header({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
             "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8),
     "byte ranges overlap or leave gaps"),
    (header({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     "byte ranges overlap or leave gaps"),
    (header({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
     "bytes after the last tensor"),
    (header({f"t{i}": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]} for i in range(65)}, b""),
     "too many tensors"),
    (header({"a": {"dtype": "OBJ", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
     "bad dtype or shape for 'a'"),
    (header({"__metadata__": {"error": 3}}, b""), "bad metadata"),
    (struct.pack("<Q", 4) + b"[1] ", "header is not a mapping"),
])
def test_hostile_records_are_refused_before_anything_is_allocated(data: bytes, why: str) -> None:
    with pytest.raises(tensor_io.Unreadable) as refused:
        tensor_io.read(data)
    assert str(refused.value) == why


def test_a_record_over_the_byte_cap_is_refused() -> None:
    big = save({"a": torch.zeros(3 * 1024 * 1024)})  # 12 MiB > 8 MiB
    with pytest.raises(tensor_io.Unreadable, match="too many bytes"):
        tensor_io.read(big)
    meta, tensors = tensor_io.read(save({"a": torch.arange(3.0)}, metadata={"k": "v"}))
    assert meta == {"k": "v"} and torch.equal(tensors["a"], torch.arange(3.0))


def case_verdict(record: bytes) -> tuple[str, str | None] | None:
    cases = prepare(SOFTMAX, REFERENCE, 1, 5.0)
    raw = base64.b64encode(record).decode()
    return judge_host._result_problem(cases[0], {"record": raw, "finished": True}, SOFTMAX)


def test_a_record_that_trips_the_comparison_is_could_not_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = prepare(SOFTMAX, REFERENCE, 1, 5.0)

    def tripped(*args: object) -> None:
        raise IndexError("a shape the comparison did not expect")

    monkeypatch.setattr(judge_host, "_result_problem", tripped)
    assert judge_host.verdict(cases[:1], [{"record": "x"}], SOFTMAX).failure == (
        "test 'rows' (inputs 4×6, int): your output could not be read")


def test_an_unreadable_record_is_the_verdict_could_not_be_read() -> None:
    overlapping = header({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                          "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    assert case_verdict(overlapping) == ("your output could not be read", None)
    assert case_verdict(b"\xff" * 40) == ("your output could not be read", None)
    bad_kinds = save({"r.out": torch.zeros(4, 6)}, metadata={"kinds": "[1]"})
    assert case_verdict(bad_kinds) == ("your output could not be read", None)
    odd = save({"r.grad.0": torch.zeros(4, 6)}, metadata={"kinds": json.dumps({"r.out": "complex"})})
    cases = prepare(SOFTMAX, REFERENCE, 1, 5.0)
    raw = base64.b64encode(odd).decode()
    assert judge_host.verdict(cases[:1], [{"record": raw, "finished": True}], SOFTMAX).failure == (
        "test 'rows' (inputs 4×6, int): output: dtype complex, expected float32")
    over = judge_host._result_problem(prepare(SOFTMAX, REFERENCE, 1, 5.0)[0],
                                      {"record": "", "record_over_cap": True}, SOFTMAX)
    assert over == ("your output could not be read (it is larger than the judge accepts)", None)


# ---- comparing: words that never reveal an expected value ---------------------------------------


def test_value_failures_give_counts_and_a_relative_size_never_the_expected_value() -> None:
    exp = torch.tensor([1.0, 2.0, 4.0])
    assert compare(exp, exp.clone(), 1e-5, 1e-4) is None
    assert compare(exp, torch.tensor([1.0, 2.5, 4.0]), 1e-5, 1e-4) == (
        "1 of 3 values wrong (the worst off by up to 10000× the allowed error)")
    assert compare(torch.tensor(3.0), torch.tensor(0.0), 1e-5, 1e-4) == (
        "wrong value (off by up to 10000× the allowed error)")
    assert compare(torch.tensor(3.0), torch.tensor(3.0004), 1e-5, 1e-4) == (
        "wrong value (off by up to 10× the allowed error)")
    for probe in (0.0, 1.0, -7.5):  # a 0-d output's failure text does not contain its value
        text = compare(torch.tensor(1234.5678), torch.tensor(probe), 1e-5, 1e-4) or ""
        assert "1234" not in text and "1.23" not in text
    assert compare(exp, torch.tensor([1.0, float("nan"), 4.0]), 1e-5, 1e-4) == (
        "1 nan value(s) where finite values were expected")
    assert compare(torch.tensor([1.0, float("-inf")]), torch.tensor([1.0, float("nan")]), 1e-5, 1e-4) == (
        "1 of 2 values wrong (the worst off by far more than the allowed error)")
    assert compare(torch.tensor([float("inf")]), torch.tensor([5.0]), 1e-5, 1e-4) == (
        "wrong value (off by far more than the allowed error)")
    assert compare(torch.zeros(2), torch.zeros(2, 1), 1e-5, 1e-4) == "shape 2×1, expected 2"
    assert compare(torch.zeros(2), torch.zeros(2, dtype=torch.float64), 1e-5, 1e-4) == (
        "dtype float64, expected float32")
    assert compare(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 0]), 0, 0) == "2 of 3 values differ"
    assert compare(torch.tensor(5), torch.tensor(4), 0, 0) == "wrong value"


def outcome(tensors: dict[str, torch.Tensor] | None = None, **kinds: str) -> Outcome:
    return Outcome(tensors or {}, {k.replace("_", "."): v for k, v in kinds.items()})


def test_every_shape_of_output_gets_a_verdict() -> None:
    exp = outcome({"r.out": torch.ones(2), "r.grad.0": torch.ones(2)})
    grads_none = outcome({"r.out": torch.ones(2)}, r_grad_0="none")
    zero_grad = outcome({"r.out": torch.ones(2), "r.grad.0": torch.zeros(2)})
    assert case_problem(exp, grads_none, SOFTMAX) == (
        "gradient of input 1: 2 of 2 values wrong (the worst off by up to 10000× the allowed error)", None)
    assert case_problem(zero_grad, grads_none, SOFTMAX) is None  # a missing gradient is zeros
    assert case_problem(exp, outcome({"r.grad.0": torch.ones(2)}, r_out="sparse"), SOFTMAX) == (
        "output is a sparse tensor; return a dense (strided) one", None)
    assert case_problem(exp, outcome({"r.grad.0": torch.ones(2)}, r_out="none"), SOFTMAX) == (
        "output should not be None", None)
    assert case_problem(exp, outcome({"r.grad.0": torch.ones(2)}, r_out="type:<!channel>str"), SOFTMAX) == (
        "output is a channelstr; expected a tensor or a number", None)
    assert case_problem(exp, outcome({"r.grad.0": torch.ones(2)}, r_out="unsupported"), SOFTMAX) == (
        "output is a tensor the judge cannot compare (quantized, nested or meta); return a plain one", None)
    cplx = outcome({"r.out": torch.ones(2, 2), "r.grad.0": torch.ones(2)}, r_out="complex")
    assert case_problem(exp, cplx, SOFTMAX) == ("output: dtype complex, expected float32", None)
    assert case_problem(exp, outcome({"r.out": torch.ones(2)}), SOFTMAX) == (
        "gradient of input 1 is missing", None)
    assert case_problem(exp, Outcome(error="ValueError: <!here>"), SOFTMAX) == (
        "your code raised an error", "ValueError: <!here>")


def test_sparse_complex_none_and_strided_outputs_through_the_harness() -> None:
    sparse = judged("def softmax(x, dim):\n    return (x * 0).to_sparse()\n")
    assert sparse.failure == "test 'rows' (inputs 4×6, int): output is a sparse tensor; return a dense (strided) one"
    none = judged("def softmax(x, dim):\n    return None\n")
    assert none.failure == "test 'rows' (inputs 4×6, int): output should not be None"
    cplx = judged("import torch\ndef softmax(x, dim):\n    return torch.complex(x, x)\n")
    assert cplx.failure == "test 'rows' (inputs 4×6, int): output: dtype complex, expected float32"
    words = judged("def softmax(x, dim):\n    return 'hello'\n")
    assert words.failure == "test 'rows' (inputs 4×6, int): output is a str; expected a tensor or a number"
    strided = judged(REFERENCE + "_s = softmax\ndef softmax(x, dim):\n    return _s(x, dim).t().contiguous().t()\n")
    assert strided.solved, strided.failure


def test_the_reference_made_contiguous_passes_the_non_contiguous_case() -> None:
    """Bug fixed: the gradient weights followed the output's memory layout (randn_like)."""
    for secret in range(5):
        verdict = judged(REFERENCE + "_s = softmax\ndef softmax(x, dim):\n    return _s(x, dim).contiguous()\n",
                         secret=secret)
        assert verdict.solved, (secret, verdict.failure)


def test_known_wrong_code_judged_until_its_first_failure_gets_the_full_judges_failure() -> None:
    """How the bank test judges stubs and known-wrong solutions: cases prepared once per secret,
    no case run after the first failing one. Its failure and detail are the whole judge's; only
    the cases after it are not run. Right code runs every case."""
    wrong = ("import torch\ndef softmax(x, dim):\n    s = torch.softmax(x, dim)\n"
             "    return s if x.is_contiguous() else 2 * s\n")  # wrong on the second case only
    full = judged(wrong)
    assert (full.passed, full.total) == (2, 3)
    assert (full.failure or "").startswith("test 'non-contiguous' (inputs 4×6, int): output: ")
    cases = judge_host.prepare_locally(SOFTMAX, REFERENCE, 7)
    fast = judge_host.judge_prepared(SOFTMAX, cases, wrong, until_failure=True)
    assert (fast.passed, fast.total, fast.failure, fast.detail) == (1, 3, full.failure, full.detail)
    right = judge_host.judge_prepared(SOFTMAX, cases, REFERENCE, until_failure=True)
    assert (right.passed, right.total, right.failure) == (3, 3, None)


def test_a_correct_solution_whose_input_gets_no_gradient_passes() -> None:
    """Bug fixed: a None input gradient (target.detach()) raised in the bot."""
    spec = JudgeSpec(tests="def cases():\n    yield 'pair', (torch.randn(3), torch.randn(3))\n",
                     call="mse", grad=True)
    reference = "def mse(p, t):\n    return ((p - t.detach()) ** 2).mean()\n"
    assert judged(reference, spec, reference).solved
    both = judged("def mse(p, t):\n    return ((p - t) ** 2).mean()\n", spec, reference)
    assert (both.passed, (both.failure or "")[:48]) == (0, "test 'pair' (inputs 3, 3): gradient of input 2: ")


def test_an_exception_message_is_the_members_text_apart_from_ours() -> None:
    verdict = judged("def softmax(x, dim):\n    raise ValueError('<!channel> [click](https://evil.example)')\n")
    assert verdict.failure == "test 'rows' (inputs 4×6, int): your code raised an error"
    assert verdict.detail == "ValueError: <!channel> [click](https://evil.example)"
    unloaded = judged("raise SystemExit('@everyone')\n")
    assert (unloaded.passed, unloaded.failure, unloaded.detail) == (0, "your code did not load", "SystemExit: @everyone")


# ---- what crosses into the member's process ----------------------------------------------------


def test_a_cases_payload_holds_one_cases_inputs_and_no_test_source_or_expected_value() -> None:
    cases = prepare(SOFTMAX, REFERENCE, 123, 5.0)
    assert [c.name for c in cases] == ["rows", "non-contiguous", "scalar sum"]
    first = cases[0].payload
    assert set(first) == {"call", "driver", "tree", "seed", "deadline_s", "inputs"}
    assert first["driver"] == ""  # no run(): nothing of the tests goes in
    blob = json.dumps(first)
    assert "cases" not in blob and "amax" not in blob and "123" not in blob
    inputs = tensor_io.read(base64.b64decode(first["inputs"]))[1]
    assert sorted(inputs) == ["a0", "w:r.out"]  # this case's x and the gradient weights
    assert not any(torch.equal(inputs["a0"], t) for t in cases[0].expected.tensors.values())
    other = prepare(SOFTMAX, REFERENCE, 124, 5.0)[0].payload
    assert tensor_io.read(base64.b64decode(other["inputs"]))[1]["a0"].ne(inputs["a0"]).any()


def test_a_strided_case_stays_strided_in_the_members_process() -> None:
    payload = prepare(SOFTMAX, REFERENCE, 5, 5.0)[1].payload
    given = tensor_io.read(base64.b64decode(payload["inputs"]))[1]
    [x, dim] = judge_harness.decode_tree(payload["tree"], given)
    assert (x.shape, x.is_contiguous(), dim) == (torch.Size([4, 6]), False, 1)


def test_the_driver_is_the_tests_without_cases() -> None:
    tests = ("class M(nn.Module):\n    pass\n\ndef cases():\n    yield 'a', (1,)\n\n"
             "def run(sol, n):\n    return sol['f'](n)\n")
    assert judge_host.driver_source(tests) == "class M(nn.Module):\n    pass\n\ndef run(sol, n):\n    return sol['f'](n)"
    assert judge_host.driver_source("def cases():\n    yield 'a', (1,)\n") == ""


def test_case_seeds_are_secret_derived_and_distinct() -> None:
    seeds = {judge_host.case_seed(99, i) for i in range(20)}
    assert len(seeds) == 20 and judge_host.case_seed(99, 0) != judge_host.case_seed(100, 0)


# ---- the wire verdict the bot reads ------------------------------------------------------------


def test_the_verdict_round_trips_and_is_typed_and_capped_from_the_wire() -> None:
    verdict = Verdict(3, 5, "test 'a': wrong", "E: x", "printed", 1.5, 20.0, "cpu")
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict
    huge = Verdict.from_dict({"passed": 1, "total": 2, "failure": "f" * 999, "detail": "d" * 999,
                              "output": "o" * 9999, "elapsed_s": True, "device": ["x"]})
    assert (len(huge.failure or ""), len(huge.detail or ""), len(huge.output)) == (300, 400, 4000)
    assert (huge.elapsed_s, huge.device) == (None, "cpu")
    unreadable = Verdict(0, 0, "no verdict: the judge's answer could not be read")
    assert Verdict.from_dict({"passed": 3, "total": 2}) == unreadable
    assert Verdict.from_dict("nope") == unreadable
    assert not unreadable.solved and Verdict(2, 2).solved and not Verdict(2, 2, "x").solved


def test_a_judge_job_carries_the_problem_for_the_worker() -> None:
    job = judge_job("p", SOFTMAX, REFERENCE)
    assert job == {"problem": "p", "spec": SOFTMAX.to_dict(), "reference": REFERENCE}
    assert JudgeSpec.from_dict(json.loads(json.dumps(job["spec"]))) == SOFTMAX


# ---- forbidden operations: the traced graph, checked and replayed outside ------------------------

NO_SOFTMAX = JudgeSpec(tests=SOFTMAX.tests, call="softmax", grad=True,
                       forbid_ops=("aten._softmax", "aten._log_softmax"))


def test_a_forbidden_op_under_any_name_fails_and_the_reference_passes() -> None:
    assert judged(REFERENCE, NO_SOFTMAX).solved
    for body in ("torch._softmax(x, dim, False)", "torch.ops.aten._softmax.default(x, dim, False)",
                 "getattr(torch._C._VariableFunctions, 'soft' + 'max')(x, dim)"):
        verdict = judged(f"import torch\ndef softmax(x, dim):\n    return {body}\n", NO_SOFTMAX)
        assert (verdict.passed, verdict.failure) == (0, (
            "test 'rows' (inputs 4×6, int): your code uses aten._softmax, "
            "which this problem forbids (under any name)")), body


def test_a_graph_that_does_not_reproduce_the_outputs_is_could_not_be_checked() -> None:
    verdict = judged("import torch\nimport torch.fx.experimental.proxy_tensor as p\nreal = p.make_fx\n"
                     "p.make_fx = lambda fn, **kw: real(lambda x, dim: x.exp(), **kw)\n"
                     "def softmax(x, dim):\n    return torch._softmax(x, dim, False)\n", NO_SOFTMAX)
    assert (verdict.passed, verdict.failure) == (0, (
        "test 'rows' (inputs 4×6, int): your computation could not be checked: "
        "the graph traced from your code does not reproduce its outputs"))


def test_graph_evidence_is_read_with_caps_and_replayed_only_through_aten_overloads() -> None:
    from runner import judge_evidence, judge_replay
    assert judge_evidence.read_graph("") == judge_evidence.UNCHECKED + "no graph came back"
    assert judge_evidence.read_graph("x" * 1_000_001) == (
        judge_evidence.UNCHECKED + "its graph is larger than the judge accepts")
    assert judge_evidence.read_graph('{"graph": "[[[["}') == (
        judge_evidence.UNCHECKED + "its graph could not be read")
    graph = judge_evidence.read_graph(json.dumps({"graph": json.dumps(
        {"nodes": [{"op": "input", "i": 0}, {"op": "call", "f": "aten._softmax.default",
                                              "a": {"l": [{"n": 0}, 1, False]}}], "out": {"n": 1}})}))
    assert isinstance(graph, judge_evidence.Graph)
    assert judge_evidence.forbidden_op(graph, ("aten._softmax",)) == (
        "your code uses aten._softmax, which this problem forbids (under any name)")
    for name in ("aten.__class__.__init__", "builtins.eval.default", "aten.nonexistent_op.default",
                 "aten.add.__call__"):
        with pytest.raises(judge_replay.Refused):
            judge_replay.resolve(name)
    assert judge_replay.resolve("aten.add.Tensor") is torch.ops.aten.add.Tensor
