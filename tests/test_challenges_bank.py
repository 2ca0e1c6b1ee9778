"""Every challenge's test set discriminates: the reference passes all tests, the starter stub
fails at least one, and every known-wrong solution fails. Judged in forked children of this
warm process (our own code only; hostile code is tested through the sandbox elsewhere)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.core.content.challenges import (
    CHALLENGE_DIR,
    check_challenges,
    load_challenge,
    load_challenges,
)
from bot.core.model.topics import TOPICS
from runner.judge import forbidden_uses, judge_locally, reference_locally

BANK = load_challenges()


def test_the_bank_loads_cleanly_and_covers_the_catalogue() -> None:
    assert [str(p) for p in BANK.problems] == []
    assert len(BANK.challenges) >= 40
    assert set(Counter(c.difficulty for c in BANK.challenges)) == {1, 2, 3}
    topics = {c.topic for c in BANK.challenges}
    assert topics <= set(TOPICS) and len(topics) >= 12, topics
    assert len({c.id for c in BANK.challenges}) == len(BANK.challenges)


@pytest.mark.parametrize("challenge", BANK.challenges, ids=lambda c: c.id)
def test_reference_passes_stub_and_wrong_solutions_fail(challenge) -> None:
    spec = challenge.spec
    expected = reference_locally(spec, challenge.reference)
    assert len(expected) >= 3, "at least three hidden tests"
    assert [r.name for r in expected if r.error] == []
    ref = judge_locally(spec, challenge.reference, expected)
    assert (ref.passed, ref.total, ref.failure) == (len(expected), len(expected), None)
    stub = judge_locally(spec, challenge.stub, expected)
    assert not stub.solved and stub.failure
    for i, wrong in enumerate(challenge.wrong):
        verdict = judge_locally(spec, wrong, expected)
        assert not verdict.solved, f"wrong[{i}] passes every test"
        assert not forbidden_uses(wrong, challenge.forbid) or verdict.failure


def test_a_broken_challenge_file_is_reported_with_its_line(tmp_path: Path) -> None:
    good = (CHALLENGE_DIR / "stable-softmax.yaml").read_text(encoding="utf-8")
    (tmp_path / "challenges").mkdir()
    bad = tmp_path / "challenges" / "stable-softmax.yaml"
    bad.write_text(good.replace("topic: tensors", "topic: tensor-magic")
                   .replace("difficulty: 1", "difficulty: 4"), encoding="utf-8")
    messages = sorted(str(p) for p in check_challenges(tmp_path))
    assert messages == [
        f"{bad}:3: topic: Value error, unknown topic 'tensor-magic'; choose one of: "
        + ", ".join(TOPICS),
        f"{bad}:4: difficulty: Input should be less than or equal to 3",
    ]


def test_code_that_does_not_parse_or_uses_a_forbidden_name_is_reported(tmp_path: Path) -> None:
    good = (CHALLENGE_DIR / "stable-softmax.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "stable-softmax.yaml"
    bad.write_text(good.replace("      e = shifted.exp()\n      return e / e.sum(dim=dim, keepdim=True)",
                                "      return torch.softmax(x, dim)")
                   .replace("def softmax(x: torch.Tensor, dim: int) -> torch.Tensor:",
                            "def softmax(x dim):"), encoding="utf-8")
    challenge, problems = load_challenge(bad)
    assert challenge is None
    assert [p.message for p in problems] == [
        "stable-softmax: stub does not parse: line 3: invalid syntax",
        "stable-softmax: the reference uses forbidden torch.softmax",
    ]


def test_forbidden_names_are_found_through_attributes_imports_and_strings() -> None:
    forbid = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.LayerNorm")
    assert forbidden_uses("F.scaled_dot_product_attention(q, k, v)", forbid) == [forbid[0]]
    assert forbidden_uses("from torch.nn import LayerNorm", forbid) == [forbid[1]]
    assert forbidden_uses("getattr(F, 'scaled_dot_product_attention')", forbid) == [forbid[0]]
    assert forbidden_uses("q @ k.transpose(-2, -1)", forbid) == []


def _double(arg: object) -> object:
    import torch

    if isinstance(arg, torch.Tensor) and arg.is_floating_point():
        return arg.detach().double()
    return arg


def _checkable(arg: object) -> bool:
    import torch

    return (isinstance(arg, torch.Tensor) and arg.is_floating_point() and arg.numel() > 0
            and bool(torch.isfinite(arg).all()) and float(arg.abs().max()) < 1e3)


@pytest.mark.parametrize("challenge", [c for c in BANK.challenges if c.gradcheck], ids=lambda c: c.id)
def test_reference_gradients_pass_gradcheck_in_float64(challenge) -> None:
    """The judge compares members' gradients with the reference's: those are proven right."""
    import torch

    from runner.judge_harness import load_cases

    namespace: dict[str, object] = {}
    exec(challenge.reference, namespace)  # our own reference solution
    fn = namespace[challenge.call]
    _, cases = load_cases(challenge.tests)
    checked = 0
    for name, args in cases:
        args = tuple(_double(a) for a in args)
        slots = [i for i, a in enumerate(args) if _checkable(a)]
        if not slots or any(isinstance(a, torch.Tensor) and a.is_floating_point() and i not in slots
                            for i, a in enumerate(args)):
            continue  # empty, non-finite or huge inputs: finite differences say nothing there
        inputs = tuple(args[i].clone().requires_grad_() for i in slots)

        def call(*xs: torch.Tensor, args: tuple = args, slots: list[int] = slots) -> object:
            full = list(args)
            for i, x in zip(slots, xs, strict=True):
                full[i] = x
            return fn(*full)

        assert torch.autograd.gradcheck(call, inputs, eps=1e-6, atol=1e-5), name
        checked += 1
    assert checked >= 2


def test_readme_states_the_bank_as_it_is() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    topics = len({c.topic for c in BANK.challenges})
    assert f"({len(BANK.challenges)} problems, {topics} topics, difficulties 1–3" in readme
