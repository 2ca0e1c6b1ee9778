"""Stored calibration estimates, as the core reads them (the port; bot.storage.estimates
implements it).

Every multiple-choice answer updates, when it is revealed (``bot.storage.estimates.
apply_revealed``: a channel post's at its reveal, a private answer at once), the member's
ability in the question's topic and the question's difficulty in its bank scope (built-in questions
across all communities, a community's questions within it) by one online step
(``bot.core.learning.online.update``). ``torchdrill learning refit`` replaces them with the
batch Rasch / 2PL fit (``bot.core.learning.irt``). Readers (readiness, adaptive picks, the
quality lab) then need no replay of a member's history: ``calibrator_from`` turns the stored
beliefs into the ``OnlineCalibrator`` they already take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from bot.core.content.community import is_community_id
from bot.core.learning.online import Belief, OnlineCalibrator

BUILT_IN_SCOPE = 0


def scope_of(question_id: str, workspace_id: int) -> int:
    """Built-in questions are calibrated across all communities (one shared scope), a
    community's own questions within it (its workspace id)."""
    return workspace_id if is_community_id(question_id) else BUILT_IN_SCOPE


class EstimateStore(Protocol):
    async def abilities(self, member_id: int) -> dict[str, Belief]:
        """The member's stored ability per topic (topics never answered are absent)."""
        ...

    async def difficulties(self, labels: Mapping[str, int], workspace_id: int) -> dict[str, Belief]:
        """Stored difficulties of the questions in ``labels`` (id -> labelled difficulty, the
        prior of one never refit) as seen from ``workspace_id`` (a community's own questions
        in its scope, built-in ones in the shared scope); unanswered ones absent."""
        ...


def calibrator_from(member_id: int, abilities: Mapping[str, Belief], difficulties: Mapping[str, Belief],
                    labels: Mapping[str, int]) -> OnlineCalibrator:
    """An ``OnlineCalibrator`` holding stored beliefs: questions without a stored estimate fall
    back to their label's prior, as in a replay."""
    member = str(member_id)
    return OnlineCalibrator(
        labels=dict(labels),
        abilities={(member, topic): belief for topic, belief in abilities.items()},
        difficulties=dict(difficulties),
    )
