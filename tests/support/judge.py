"""The problems of the challenge bank, as the judge gets them."""

from __future__ import annotations

from bot.core.content.challenges import Challenge, load_challenges


def problem_of(challenge_id: str) -> Challenge:
    found = load_challenges().get(challenge_id)
    assert found is not None, challenge_id
    return found
