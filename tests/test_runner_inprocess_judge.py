"""Issue 21: mutation survivors of runner/judge.py. The sandbox tests judge real jobs in
subprocesses (left out of the mutation selection); these build the records a job ships with the
harness's own framing and check, in-process, every verdict text a member reads."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from typing import Any

import pytest
import torch

from runner import judge
from runner.judge import JudgeSpec, Record, Verdict
from runner.judge_harness import _save, pack

SPEC = JudgeSpec(tests="def cases():\n    yield 'small', (torch.ones(2, 3),)\n", call="f",
                 grad=True, forbid=("torch.softmax",), atol=0.5, rtol=0.0)


def rec(index: int, name: str, tensors: dict[str, torch.Tensor] | None = None, *,
        shapes: list[str] | None = None, error: str | None = None,
        devices: list[str] | None = None) -> Record:
    return Record(index, name, shapes or [], error, devices or ["cpu"], tensors or {})


def blob(head: dict[str, Any], tensors: dict[str, Any] | None = None) -> bytes:
    return pack(head, _save(tensors) if tensors is not None else b"")


# ---- spec, forbidden names, program -----------------------------------------------------------


def test_the_payload_carries_everything_the_harness_reads() -> None:
    assert SPEC.payload("def f(x): return x") == {
        "tests": SPEC.tests, "call": "f", "grad": True, "forbid": ["torch.softmax"],
        "code": "def f(x): return x", "device": "cpu", "deadline_s": 15.0}
    asked = SPEC.payload("c", "cuda:0", 3.5)
    assert (asked["device"], asked["deadline_s"]) == ("cuda:0", 3.5)
    plain = JudgeSpec(tests="t")
    assert (plain.call, plain.grad, plain.forbid, plain.atol, plain.rtol) == ("", False, (), 1e-5, 1e-4)
    assert plain.payload("c", "cuda:0")["device"] == "cuda:0"


def test_forbidden_names_are_found_as_names_attributes_imports_and_strings() -> None:
    forbid = ("torch.softmax", "F.softmax", "torch.nn.functional.gelu", "einsum")
    assert judge.forbidden_uses("y = torch.softmax(x, 0)", forbid) == ["torch.softmax"]
    assert judge.forbidden_uses("from torch.nn.functional import gelu", forbid) == [
        "torch.nn.functional.gelu"]
    assert judge.forbidden_uses("import torch.nn.functional.gelu as g", forbid) == [
        "torch.nn.functional.gelu"]
    assert judge.forbidden_uses("einsum(a, b)\ngetattr(torch, 'soft' 'max')", forbid) == [
        "einsum", "torch.softmax"]  # a bare name it does not define: a star import
    assert judge.forbidden_uses("getattr(F, 'xx_gelu_yy')", forbid) == ["torch.nn.functional.gelu"]
    assert judge.forbidden_uses("y = x.relu()\nz = 'relu'\nn = 3", forbid) == []
    assert judge.forbidden_uses("def broken(:", forbid) == []


def test_names_and_words_of_the_solution_itself_are_not_uses() -> None:
    forbid = ("torch.nn.functional.one_hot", "torch.softmax")
    own = ('def one_hot(labels, n):\n    """A one_hot without F.one_hot: softmax-free."""\n'
           "    return (labels[:, None] == torch.arange(n)).float()\n"
           "def softmax(x):\n    return x.exp() / x.exp().sum()\n"
           "y = one_hot(t, 3)\nz = softmax(y)\n")
    assert judge.forbidden_uses(own, forbid) == []
    assert judge.forbidden_uses("def f(one_hot):\n    return one_hot + 1", forbid) == []
    assert judge.forbidden_uses("import torch.nn.functional as one_hot\none_hot.relu(x)", forbid) == []
    assert judge.forbidden_uses(own + "w = F.one_hot(t)", forbid) == ["torch.nn.functional.one_hot"]
    assert judge.forbidden_uses(own + "print('uses one_hot')", forbid) == ["torch.nn.functional.one_hot"]
    assert judge.forbidden_uses("from torch.nn.functional import *\ny = one_hot(t)", forbid) == [
        "torch.nn.functional.one_hot"]
    assert judge.forbidden_uses("from torch.nn.functional import one_hot as oh", forbid) == [
        "torch.nn.functional.one_hot"]


def test_the_program_is_the_harness_then_one_call() -> None:
    program = judge.build_program(SPEC, "print('é')", "cuda:1", 4.0)
    harness = judge.HARNESS_PATH.read_text(encoding="utf-8")
    payload = json.dumps(SPEC.payload("print('é')", "cuda:1", 4.0), ensure_ascii=False)
    assert program == harness + f"\nrun_submission(json.loads({payload!r}))\n"
    assert "é" in program and "\\u00e9" not in program
    default = judge.build_program(SPEC, "x")
    assert default.endswith('"device": "cpu", "deadline_s": 15.0}\'))\n')


# ---- parse_records ----------------------------------------------------------------------------


def test_records_are_parsed_with_their_fields_clipped() -> None:
    data = blob({"i": 0, "name": "n" * 150, "shapes": [f"{'s' * 50}{k}" for k in range(10)],
                 "dev": ["cpu", "cuda"]}, {"r.out": torch.ones(2)})
    data += blob({"i": 1, "name": "fails", "error": "E" * 400})
    data += blob({"i": 2, "name": "empty error", "error": ""})
    first, second, third = judge.parse_records(data)
    assert (first.index, first.name, first.shapes, first.error, first.devices) == (
        0, "n" * 100, ["s" * 40] * 8, None, ["cpu", "cuda"])
    assert list(first.tensors) == ["r.out"] and torch.equal(first.tensors["r.out"], torch.ones(2))
    assert (second.index, second.name, second.shapes, second.error, second.devices, second.tensors) == (
        1, "fails", [], "E" * 300, [], {})
    assert third.error is None


@pytest.mark.parametrize("bad", [
    blob({"i": 5, "name": "not a dict"}, [torch.ones(1)]),  # type: ignore[arg-type]
    blob({"i": 5, "name": "int key"}, {1: torch.ones(1)}),
    blob({"i": 5, "name": "not a tensor"}, {"r.out": 3}),
    blob({"name": "no index"}, {"r.out": torch.ones(1)}),
    struct.pack(">II", 3, 0) + b"{x}",
    struct.pack(">II", 2, 4) + b"{}" + b"junk",
    struct.pack(">II", 0, 0),
])
def test_parsing_stops_at_the_first_malformed_record(bad: bytes) -> None:
    good = blob({"i": 0, "name": "ok"}, {"r.out": torch.zeros(1)})
    after = blob({"i": 9, "name": "after"}, {"r.out": torch.zeros(1)})
    assert [r.name for r in judge.parse_records(good + bad + after)] == ["ok"]


def test_a_record_cut_short_is_dropped() -> None:
    good = blob({"i": 0, "name": "ok"}, {"r.out": torch.zeros(1)})
    cut = blob({"i": 1, "name": "cut"}, {"r.out": torch.zeros(1)})
    assert [r.name for r in judge.parse_records(good + cut[:-1])] == ["ok"]
    assert [r.name for r in judge.parse_records(good + cut[:7])] == ["ok"]
    assert [r.name for r in judge.parse_records(good + cut)] == ["ok", "cut"]
    assert judge.parse_records(b"") == []


# ---- comparing values -------------------------------------------------------------------------


def cmp(exp: torch.Tensor, got: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> str | None:
    return judge._compare(exp, got, atol, rtol)


def test_shape_and_dtype_are_named_as_members_read_them() -> None:
    assert cmp(torch.zeros(3), torch.zeros(2, 3)) == "shape 2×3, expected 3"
    assert cmp(torch.zeros(2), torch.tensor(1.0)) == "shape scalar, expected 2"
    assert cmp(torch.zeros(2), torch.zeros(2, dtype=torch.float64)) == "dtype float64, expected float32"
    assert cmp(torch.zeros(0, 3), torch.ones(0, 3)) is None


def test_floats_compare_within_tolerance_and_name_the_error() -> None:
    exp = torch.tensor([1.0, 2.0, float("nan")])
    assert cmp(exp, torch.tensor([1.0, 2.0, float("nan")])) is None
    assert cmp(exp, torch.tensor([1.4, 2.0, float("nan")]), atol=0.5) is None
    assert cmp(exp, torch.tensor([1.5, 2.0, float("nan")])) == (
        "max abs error 0.5 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 2.0])) == (
        "max abs error 0.5 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([100.0]), torch.tensor([109.0]), atol=0.0, rtol=0.1) is None
    assert cmp(torch.tensor([100.0]), torch.tensor([111.0]), atol=0.0, rtol=0.1) == (
        "max abs error 11 (allowed 0 + 0.1·|expected|)")
    assert cmp(torch.tensor([-60000.0], dtype=torch.half), torch.tensor([60000.0], dtype=torch.half)) == (
        "max abs error 1.2e+05 (allowed 1e-05 + 0.0001·|expected|)")  # computed wider than half
    assert cmp(torch.ones(2), torch.tensor([1.0, 3.25]), atol=0.5, rtol=0.25) == (
        "max abs error 2.25 (allowed 0.5 + 0.25·|expected|)")
    assert cmp(torch.ones(3), torch.tensor([float("nan"), 1.0, float("nan")])) == (
        "2 nan value(s) where finite values were expected")
    assert cmp(torch.ones(3), torch.tensor([float("inf"), 1.0, float("-inf")])) == (
        "2 inf value(s) where finite values were expected")
    assert cmp(torch.ones(2), torch.tensor([float("inf"), float("nan")])) == (
        "2 nan value(s) where finite values were expected")
    assert cmp(torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, 1.0])) == (
        "max abs error inf (allowed 1e-05 + 0.0001·|expected|)")

def test_the_error_shown_is_the_real_one_for_nan_inf_and_complex_values() -> None:
    """Bug fixed with this test: matching NaNs (which pass) made the error shown "inf", equal
    infinities too, and a complex output's error ignored the imaginary part ("max abs error 0")."""
    assert cmp(torch.tensor([1.0, float("nan")]), torch.tensor([1.5, float("nan")])) == (
        "max abs error 0.5 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([float("inf"), 1.0]), torch.tensor([float("inf"), 3.0])) == (
        "max abs error 2 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([1 + 1j, 2j]), torch.tensor([1 + 2j, 2j])) == (
        "max abs error 1 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([3 + 0j]), torch.tensor([0 + 4j])) == (
        "max abs error 5 (allowed 1e-05 + 0.0001·|expected|)")
    assert cmp(torch.tensor([1 + 1j]), torch.tensor([1 + 1.000001j])) is None


def test_integers_and_booleans_must_be_equal() -> None:
    assert cmp(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3])) is None
    assert cmp(torch.tensor([1, 2, 3, 4]), torch.tensor([1, 0, 0, 0])) == "3 of 4 values differ"
    assert cmp(torch.tensor([True, False]), torch.tensor([True, True])) == "1 of 2 values differ"


@pytest.mark.parametrize(("key", "label"), [
    ("r.out", "output"), ("r.out.0", "output[0]"), ("r.out.h.1", "output.h[1]"),
    ("r.grad", "gradient"), ("r.grad.0", "gradient of input 1"), ("r.grad.2", "gradient of input 3"),
    ("r", "result"), ("r.0", "result[0]"), ("r.1.loss", "result[1].loss"), ("r.grads.0", "grads[0]"),
])
def test_result_keys_read_as_members_read_them(key: str, label: str) -> None:
    assert judge._what(key) == label


# ---- comparing records ------------------------------------------------------------------------


def test_code_that_did_not_load_fails_every_test() -> None:
    expected = [rec(0, "a", {"r.out": torch.ones(1)})]
    got = [rec(0, "a", {"r.out": torch.ones(1)}), rec(-1, "loading your code", error="SyntaxError: bad")]
    assert judge.compare_records(expected, got, SPEC) == (0, "your code did not load: SyntaxError: bad")


def test_the_first_failing_test_is_named_with_its_inputs() -> None:
    ones = {"r.out": torch.ones(2)}
    expected = [rec(0, "first", ones, shapes=["2×3", "4"]), rec(1, "second", ones, shapes=["5"]),
                rec(2, "third", ones), rec(3, "fourth", ones)]
    expected[1].shapes.append("6×7")
    got = [rec(0, "first", ones), rec(1, "second", {"r.out": torch.zeros(2)}),
           rec(2, "third", {"r.out": torch.zeros(2)})]
    assert judge.compare_records(expected, got, SPEC) == (
        1, "test 'second' (inputs 5, 6×7): output: max abs error 1 (allowed 0.5 + 0·|expected|)")
    assert judge.compare_records(expected[2:3], got[2:3], SPEC) == (
        0, "test 'third': output: max abs error 1 (allowed 0.5 + 0·|expected|)")
    assert judge.compare_records(expected[:1], got[:1], SPEC) == (1, None)
    assert judge.compare_records(expected[3:], got, SPEC) == (
        0, "test 'fourth': no result (the code exited or was stopped before this test)")


def problem(exp: Record, got: Record | None, device: str = "cpu") -> str | None:
    return judge._case_problem(exp, got, SPEC, device)


def test_each_case_problem_reads_as_members_read_it() -> None:
    one = {"r.out": torch.ones(1)}
    exp = rec(0, "a", one)
    assert problem(exp, None) == "no result (the code exited or was stopped before this test)"
    assert problem(exp, rec(0, "b", one)) == "no result for this test"
    assert problem(exp, rec(0, "a", error="NameError: your code does not define f")) == (
        "NameError: your code does not define f")
    assert problem(rec(0, "a", error="boom"), rec(0, "a", one)) == (
        "reference failed on this test (please report it)")
    assert problem(exp, rec(0, "a", one, devices=["cpu", "cuda"])) == (
        "output on cpu, cuda, expected cpu")
    assert problem(exp, rec(0, "a", one, devices=["cuda"]), "cuda:0") is None
    assert problem(exp, rec(0, "a", one, devices=[])) is None
    assert problem(exp, rec(0, "a", one)) is None


def test_missing_and_extra_outputs_are_named() -> None:
    t = torch.ones(1)
    two = rec(0, "a", {"r.out.0": t, "r.out.1": t, "r.out.2": t})
    assert problem(two, rec(0, "a", {"r.out.0": t})) == "output[1] is missing"
    assert problem(rec(0, "a", {"r.out.0": t}), two) == "unexpected output[1] (wrong number of outputs?)"
    assert problem(rec(0, "a", {"r.out:none": torch.zeros(0)}), rec(0, "a", {"r.out": t})) == (
        "output should not be None")
    assert problem(rec(0, "a", {"r.out": t}), rec(0, "a", {"r.out:none": torch.zeros(0)})) == (
        "output is missing")
    assert problem(rec(0, "a", {"r.out.0": t}), rec(0, "a", {"r.out.0": t, "r.out.1:none": t})) == (
        "output[1] should not be None")
    both = {"r.0": t, "r.aux": t}  # key order differs from the order members read
    assert problem(rec(0, "a", both), rec(0, "a", {})) == "aux is missing"
    assert problem(rec(0, "a", {}), rec(0, "a", both)) == "unexpected aux (wrong number of outputs?)"


def test_outputs_are_compared_before_gradients() -> None:
    exp = rec(0, "a", {"r.grad.0": torch.ones(1), "r.out": torch.ones(1), "r.aux": torch.ones(1)})
    wrong_all = rec(0, "a", {"r.grad.0": torch.zeros(1), "r.out": torch.zeros(1), "r.aux": torch.zeros(1)})
    assert problem(exp, wrong_all) == "output: max abs error 1 (allowed 0.5 + 0·|expected|)"
    wrong_rest = rec(0, "a", {"r.grad.0": torch.zeros(1), "r.out": torch.ones(1), "r.aux": torch.zeros(1)})
    assert problem(exp, wrong_rest) == "aux: max abs error 1 (allowed 0.5 + 0·|expected|)"
    wrong_grad = rec(0, "a", {"r.grad.0": torch.zeros(2), "r.out": torch.ones(1), "r.aux": torch.ones(1)})
    assert problem(exp, wrong_grad) == "gradient of input 1: shape 2, expected 1"


# ---- the result line and the verdict ----------------------------------------------------------


def test_exactly_one_result_line_is_read() -> None:
    assert judge.frame_of('hello\nTDJ1 {"finished": true}\n') == {"finished": True}
    assert judge.frame_of("hello\n") is None
    assert judge.frame_of('TDJ1 {"a": 1}\nTDJ1 {"a": 1}\n') is None
    assert judge.frame_of("TDJ1 {not json}\n") is None
    assert judge.frame_of("TDJ1 [1, 2]\n") is None
    assert judge.frame_of(' TDJ1 {"a": 1}\n') is None


def frame(records: bytes, **extra: Any) -> dict[str, Any]:
    return {"records": base64.b64encode(records).decode(), "finished": True, **extra}


EXPECTED = [rec(0, "a", {"r.out": torch.ones(2)}), rec(1, "b", {"r.out": torch.ones(2)})]
BOTH = blob({"i": 0, "name": "a", "dev": ["cpu"]}, {"r.out": torch.ones(2)}) + blob(
    {"i": 1, "name": "b", "dev": ["cpu"]}, {"r.out": torch.ones(2)})


def test_a_missing_result_line_is_no_verdict() -> None:
    assert judge.verdict_of(EXPECTED, None, SPEC, device="cuda:0", peak_memory_mb=12.5) == Verdict(
        0, 2, "no verdict: the judge's result line is missing or was tampered with", device="cuda:0",
        peak_memory_mb=12.5)
    assert judge.verdict_of(EXPECTED, None, SPEC, sandbox_error="killed: wall-time limit 20 s") == Verdict(
        0, 2, "no verdict: killed: wall-time limit 20 s")


def test_a_full_pass_is_solved_with_its_facts() -> None:
    verdict = judge.verdict_of(EXPECTED, frame(BOTH, output="p" * 4100, elapsed_s=2), SPEC,
                               device="cpu", peak_memory_mb=40.0)
    assert verdict == Verdict(2, 2, None, "p" * 4000, 2.0, 40.0, "cpu")
    assert isinstance(verdict.elapsed_s, float) and verdict.solved
    odd = judge.verdict_of(EXPECTED, frame(BOTH, elapsed_s="2"), SPEC)
    assert (odd.elapsed_s, odd.output, odd.solved) == (None, "", True)
    assert judge.verdict_of(EXPECTED, frame(BOTH, elapsed_s=1.5), SPEC).elapsed_s == 1.5


def test_unfinished_oversized_or_unreadable_records_fail() -> None:
    late = judge.verdict_of(EXPECTED, frame(BOTH, finished=False), SPEC)
    assert (late.passed, late.failure, late.solved) == (2, "time limit reached", False)
    half = frame(BOTH[:len(BOTH) // 2 + 200], finished=False)
    cut = judge.verdict_of(EXPECTED, half, SPEC)
    assert (cut.passed, cut.failure) == (
        1, "test 'b': no result (the code exited or was stopped before this test)")
    big = judge.verdict_of(EXPECTED, frame(BOTH, records_over_cap=True), SPEC)
    assert (big.passed, big.failure) == (0, "your outputs were too large to compare")
    garbled = judge.verdict_of(EXPECTED, {"records": "not base64!", "finished": True}, SPEC)
    assert (garbled.passed, garbled.failure) == (
        0, "test 'a': no result (the code exited or was stopped before this test)")
    padded = base64.b64encode(BOTH).decode()
    junk = judge.verdict_of(EXPECTED, {"records": padded[:8] + "!" + padded[8:], "finished": True}, SPEC)
    assert (junk.passed, junk.failure) == (
        0, "test 'a': no result (the code exited or was stopped before this test)")
    empty = judge.verdict_of(EXPECTED, {}, SPEC)
    assert (empty.passed, empty.total, empty.failure) == (
        0, 2, "test 'a': no result (the code exited or was stopped before this test)")


def test_records_are_compared_on_the_device_asked_for() -> None:
    on_gpu = blob({"i": 0, "name": "a", "dev": ["cuda"]}, {"r.out": torch.ones(2)}) + blob(
        {"i": 1, "name": "b", "dev": ["cuda"]}, {"r.out": torch.ones(2)})
    verdict = judge.verdict_of(EXPECTED, frame(on_gpu), SPEC, device="cuda:0")
    assert verdict == Verdict(2, 2, None, device="cuda:0")
    assert judge.verdict_of(EXPECTED, frame(on_gpu), SPEC).failure == (
        "test 'a': output on cuda, expected cpu")


def test_solved_needs_tests_all_passed_and_no_failure() -> None:
    assert Verdict(2, 2).solved
    assert not Verdict(0, 0).solved
    assert not Verdict(1, 2).solved
    assert not Verdict(2, 2, "time limit reached").solved


# ---- the reference -----------------------------------------------------------------------------


class FakeProc:
    def __init__(self, out: bytes = b"", err: bytes = b"", returncode: int = 0, hang: bool = False) -> None:
        self.out, self.err, self.returncode, self.hang = out, err, returncode, hang
        self.sent: bytes | None = None
        self.events: list[str] = []

    async def communicate(self, data: bytes) -> tuple[bytes, bytes]:
        self.sent = data
        if self.hang:
            await asyncio.sleep(3600)
        return self.out, self.err

    def kill(self) -> None:
        self.events.append("kill")

    async def wait(self) -> int:
        self.events.append("wait")
        return -9


def fake_exec(monkeypatch: pytest.MonkeyPatch, proc: FakeProc) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []

    async def create(*args: Any, **kwargs: Any) -> FakeProc:
        calls.append((args, kwargs))
        return proc

    monkeypatch.setattr(judge.asyncio, "create_subprocess_exec", create)
    return calls


async def test_the_reference_runs_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = FakeProc(out=BOTH)
    calls = fake_exec(monkeypatch, proc)
    records = await judge.reference_records(SPEC, "def f(x): return x")
    assert [(r.index, r.name) for r in records] == [(0, "a"), (1, "b")]
    [(args, kwargs)] = calls
    assert args == (judge.sys.executable, "-I", str(judge.HARNESS_PATH), "--reference")
    assert kwargs == {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE,
                      "stderr": asyncio.subprocess.PIPE}
    assert proc.sent is not None and json.loads(proc.sent) == SPEC.payload("def f(x): return x")


async def test_a_failing_reference_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_exec(monkeypatch, FakeProc(err=b"x" * 600 + b"ValueError: bad\xff", returncode=1))
    with pytest.raises(RuntimeError) as error:
        await judge.reference_records(SPEC, "ref")
    assert str(error.value) == "the reference failed: " + ("x" * 600 + "ValueError: bad\ufffd")[-500:]


async def test_a_hanging_reference_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = FakeProc(hang=True)
    fake_exec(monkeypatch, proc)
    with pytest.raises(RuntimeError) as error:
        await judge.reference_records(SPEC, "ref", timeout_s=0.01)
    assert str(error.value) == "the reference timed out"
    assert error.value.__cause__ is None and error.value.__suppress_context__
    assert proc.events == ["kill", "wait"]


def _touched() -> dict[str, torch.Tensor]:
    TOUCHED.append("unpickled")
    return {"r.out": torch.ones(1)}


TOUCHED: list[str] = []


class Evil:
    def __reduce__(self) -> tuple[Any, ...]:
        return (_touched, ())


def test_records_are_loaded_as_weights_only() -> None:
    TOUCHED.clear()
    evil = pack({"i": 0, "name": "evil"}, _save(Evil()))  # type: ignore[arg-type]
    assert judge.parse_records(evil) == []
    assert TOUCHED == []


def test_our_own_code_is_judged_locally(capsys: pytest.CaptureFixture[str]) -> None:
    spec = JudgeSpec(tests="def cases():\n    yield 'two', (torch.ones(2, 3), 4)\n", call="f")
    expected = judge.reference_locally(spec, "def f(x, k):\n    return x * k\n")
    right = judge.judge_locally(spec, "def f(x, k):\n    return k * x\n", expected)
    assert (right.passed, right.total, right.failure, right.solved, right.device) == (1, 1, None, True, "cpu")
    assert capsys.readouterr().out == ""  # the result line is returned, not printed
    slow = judge.judge_locally(spec, "import time\ndef f(x, k):\n    time.sleep(2)\n    return k * x\n",
                               expected, deadline_s=0.2)
    assert (slow.passed, slow.failure) == (
        0, "test 'two' (inputs 2×3, int): no result (the code exited or was stopped before this test)")
    wrong = judge.judge_locally(spec, "def f(x, k):\n    return x + k\n", expected, deadline_s=5.0)
    assert (wrong.passed, wrong.failure) == (
        0, "test 'two' (inputs 2×3, int): output: max abs error 1 (allowed 1e-05 + 0.0001·|expected|)")


def test_the_reference_computed_locally_gives_its_records() -> None:
    spec = JudgeSpec(tests="def cases():\n    yield 'two', (torch.ones(2, 3), 4)\n", call="f")
    [record] = judge.reference_locally(spec, "def f(x, k):\n    return x * k\n")
    assert (record.index, record.name, record.shapes, record.error, record.devices) == (
        0, "two", ["2×3", "int"], None, ["cpu"])
    assert list(record.tensors) == ["r.out"]
    assert torch.equal(record.tensors["r.out"], torch.full((2, 3), 4.0))
