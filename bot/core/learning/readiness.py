"""Readiness: an ability turned into "expected share right on an interview-level question".

The reference question is a difficulty-3 one as this community's answers calibrated it: the
median fitted difficulty of questions labelled 3 with enough answers (the label's prior
centre while there are too few). The band is the ability's 95% interval pushed through the
same curve; below ``min_answers`` or above ``max_se`` the estimate says "too little data".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.core.learning.irt import AbilityEstimate, ItemEstimate
from bot.core.learning.online import LABEL_LOGITS, PRIOR_VAR, Belief
from bot.core.render.notices import counted

INTERVIEW_LEVEL = 3
MIN_ANSWERS = 10
MAX_SE = 0.8  # logits; wider than this and the band spans most of 0-100%
MIN_REFERENCE_ITEMS = 3
MIN_REFERENCE_ANSWERS = 30


@dataclass(frozen=True, slots=True)
class Readiness:
    member: str
    topic: str
    answers: int
    expected: float  # share right on a reference question, 0-1
    low: float
    high: float
    enough_data: bool

    def describe(self) -> str:
        if not self.enough_data:
            return f"too little data ({counted(self.answers, 'answer')})"
        return (f"{self.expected:.0%} expected right on an interview-level question "
                f"({self.low:.0%}-{self.high:.0%})")


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def level_reference(items: Mapping[str, ItemEstimate], labels: Mapping[str, int],
                    level: int = INTERVIEW_LEVEL) -> float:
    """The calibrated difficulty of a typical question labelled ``level``."""
    fitted = [e.difficulty for q, e in items.items()
              if labels.get(q) == level and e.answers >= MIN_REFERENCE_ANSWERS]
    if len(fitted) < MIN_REFERENCE_ITEMS:
        return LABEL_LOGITS[level]
    return statistics.median(fitted)


def readiness(ability: AbilityEstimate, reference: float, *, min_answers: int = MIN_ANSWERS,
              max_se: float = MAX_SE) -> Readiness:
    centre = ability.ability - reference
    spread = 1.96 * ability.se
    return Readiness(ability.member, ability.topic, ability.answers, _sigmoid(centre),
                     _sigmoid(centre - spread), _sigmoid(centre + spread),
                     ability.answers >= min_answers and ability.se <= max_se)


def group_ability(member: str, topic: str, evidence: Sequence[tuple[Belief, int, int]], *,
                  prior_var: float = PRIOR_VAR, iterations: int = 50) -> AbilityEstimate:
    """One ability for many answers at once, as if one learner gave them all (a channel's):
    the maximum a posteriori ability under the Rasch model given, per question, its difficulty
    belief (stored: calibrated; its uncertainty widens the curve, as ``online.expected`` does)
    and its right and total answers, with the ability prior ``N(0, prior_var)``. The log
    posterior is concave in the ability, so Newton's steps converge; the standard error is
    the curvature's at the optimum. Bounded work: one term per question, not per answer."""
    terms = [(b.mean, math.sqrt(1.0 + math.pi * b.var / 8.0), right, n) for b, right, n in evidence if n > 0]
    theta, curvature = 0.0, 1.0 / prior_var
    for _ in range(iterations):
        gradient, curvature = -theta / prior_var, 1.0 / prior_var
        for mean, spread, right, n in terms:
            p = _sigmoid((theta - mean) / spread)
            gradient += (right - n * p) / spread
            curvature += n * p * (1.0 - p) / spread ** 2
        move = max(-2.0, min(2.0, gradient / curvature))
        theta += move
        if abs(move) < 1e-9:
            break
    return AbilityEstimate(member, topic, theta, 1.0 / math.sqrt(curvature), sum(t[3] for t in terms))


def from_belief(member: str, topic: str, belief: Belief) -> AbilityEstimate:
    """An online belief in the batch fit's shape, so both feed ``readiness`` alike."""
    return AbilityEstimate(member, topic, belief.mean, belief.se, belief.n)


@dataclass(frozen=True, slots=True)
class OverallReadiness:
    """Expected share right on an interview-level question drawn from the banks' topic mix."""

    answers: int
    expected: float
    low: float
    high: float
    enough_data: bool
    raise_most: tuple[str, ...]  # topics whose headroom adds most to ``expected``

    def describe(self) -> str:
        if not self.enough_data:
            return f"too little data ({counted(self.answers, 'answer')})"
        return f"{self.expected:.0%} ({self.low:.0%}-{self.high:.0%})"


RAISE_SHOWN = 3


def overall_readiness(estimates: Mapping[str, AbilityEstimate], weights: Mapping[str, int],
                      reference: float, *, min_answers: int = MIN_ANSWERS) -> OverallReadiness:
    """Per-topic readiness averaged with ``weights`` (questions per topic); ``estimates`` holds
    every weighted topic, untried ones at the prior. A topic's gain is its headroom, what full
    marks there would add to the average: large for big topics the member is weak in."""
    total = sum(weights.values())
    answers = sum(e.answers for e in estimates.values())
    if not total:
        return OverallReadiness(answers, 0.0, 0.0, 0.0, False, ())
    per_topic = {t: readiness(estimates[t], reference) for t in weights}
    share = {t: w / total for t, w in weights.items()}
    gain = {t: share[t] * (1.0 - per_topic[t].expected) for t in weights}
    best = sorted(gain, key=lambda t: (-gain[t], t))[:RAISE_SHOWN]
    return OverallReadiness(
        answers,
        sum(share[t] * r.expected for t, r in per_topic.items()),
        sum(share[t] * r.low for t, r in per_topic.items()),
        sum(share[t] * r.high for t, r in per_topic.items()),
        answers >= min_answers,
        tuple(best),
    )
