"""Every challenge's test set discriminates: the reference passes all tests, the starter stub
fails at least one, and every known-wrong solution fails. Judged in forked children of this
warm process (our own code only; hostile code is tested through the sandbox elsewhere)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.core.challenges import CHALLENGE_DIR, check_challenges, load_challenge, load_challenges
from bot.core.topics import TOPICS
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
