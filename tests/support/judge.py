"""The problems of the challenge bank, as the judge gets them, and their prepared cases."""

from __future__ import annotations

from bot.core.content.challenges import Challenge, load_challenges
from runner.judge_host import Case, prepare_locally

KEEP_CASES_BYTES = 4 * 2**20  # a problem's cases of one secret kept for a later test, at most
KEEP_ALL_BYTES = 256 * 2**20
_kept: dict[tuple[str, int], tuple[list[Case], int]] = {}


def problem_of(challenge_id: str) -> Challenge:
    found = load_challenges().get(challenge_id)
    assert found is not None, challenge_id
    return found


def _size(cases: list[Case]) -> int:
    """The bytes the cases hold, about: inputs (base64) and the reference's values."""
    def outcome(o: object) -> int:
        return sum(t.numel() * t.element_size() for t in getattr(o, "tensors", {}).values())
    return sum(len(str(c.payload)) + outcome(c.expected) + outcome(c.alt_expected) + len(str(c.alt or ""))
               for c in cases)


def prepared(challenge: Challenge, secret: int, keep: bool = False) -> list[Case]:
    """`judge_host.prepare_locally` of the challenge's reference on this secret (deadline 15 s):
    the cases and the reference's float32 values the judge compares against. The bank test
    (`keep`) leaves small ones for the reference margin test, which takes them instead of
    computing the same values again; one that is not kept is prepared afresh."""
    key = (challenge.id, secret)
    if key in _kept:
        return _kept.pop(key)[0]
    cases = prepare_locally(challenge.spec, challenge.reference, secret)
    size = _size(cases)
    if keep and size <= KEEP_CASES_BYTES and size + sum(n for _, n in _kept.values()) <= KEEP_ALL_BYTES:
        _kept[key] = cases, size
    return cases
