"""Elo-style online calibration: one cheap update per answer, with an uncertainty per estimate.

Each member-topic ability and each question difficulty is a Gaussian belief (mean, variance)
on the logit scale of the Rasch model ``P(right) = sigmoid(ability - difficulty)``. An answer
moves both means by ``variance * (observed - expected)`` and shrinks both variances by the
answer's Fisher information ``p(1-p)`` -- the Laplace (one-step Gaussian) approximation to the
Bayesian update. So the step size is large while little is known and shrinks with evidence,
which is what a fixed-K Elo cannot do. Abilities get a small drift per answer (members learn),
difficulties do not. The batch fit (``irt``) replaces these estimates periodically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bot.core.learning.picks import Pick

# Prior centre of a question's difficulty from its label (logits): the fit's typical spread.
LABEL_LOGITS = {1: -1.0, 2: 0.0, 3: 1.0}
PRIOR_VAR = 1.0
ABILITY_DRIFT = 0.002  # variance added to an ability per answer: old evidence slowly fades


@dataclass(frozen=True, slots=True)
class Belief:
    mean: float
    var: float
    n: int = 0

    @property
    def se(self) -> float:
        return math.sqrt(self.var)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def expected(ability: Belief, difficulty: Belief) -> float:
    """P(right), widened by both uncertainties (the probit approximation of the logistic)."""
    spread = math.sqrt(1.0 + math.pi * (ability.var + difficulty.var) / 8.0)
    return _sigmoid((ability.mean - difficulty.mean) / spread)


_PI_8 = math.pi / 8.0


def step(a_mean: float, a_var: float, d_mean: float, d_var: float, correct: bool,
         drift: float = ABILITY_DRIFT) -> tuple[float, float, float, float, float]:
    """``update`` on plain floats: (ability mean, var, difficulty mean, var, the answer's
    information p(1-p)). For loops over many answers (the reveal), where building beliefs
    cost more than the arithmetic."""
    p = _sigmoid((a_mean - d_mean) / math.sqrt(1.0 + _PI_8 * (a_var + d_var)))
    info = p * (1.0 - p)
    surprise = (1.0 if correct else 0.0) - p
    a_var = 1.0 / (1.0 / (a_var + drift) + info)
    d_var = 1.0 / (1.0 / d_var + info)
    return a_mean + a_var * surprise, a_var, d_mean - d_var * surprise, d_var, info


def update(ability: Belief, difficulty: Belief, correct: bool,
           drift: float = ABILITY_DRIFT) -> tuple[Belief, Belief]:
    """Both beliefs after one answer."""
    a_mean, a_var, d_mean, d_var, _info = step(ability.mean, ability.var, difficulty.mean, difficulty.var,
                                               correct, drift)
    return Belief(a_mean, a_var, ability.n + 1), Belief(d_mean, d_var, difficulty.n + 1)


@dataclass
class OnlineCalibrator:
    """Beliefs keyed (member, topic) and question id, fed one pick at a time."""

    labels: dict[str, int] = field(default_factory=dict)  # question -> labelled difficulty
    abilities: dict[tuple[str, str], Belief] = field(default_factory=dict)
    difficulties: dict[str, Belief] = field(default_factory=dict)

    def ability(self, member: str, topic: str) -> Belief:
        return self.abilities.get((member, topic)) or Belief(0.0, PRIOR_VAR)

    def difficulty(self, question: str) -> Belief:
        found = self.difficulties.get(question)
        if found is not None:
            return found
        return Belief(LABEL_LOGITS.get(self.labels.get(question, 2), 0.0), PRIOR_VAR)

    def observe(self, pick: Pick) -> None:
        key = (pick.member, pick.topic)
        self.abilities[key], self.difficulties[pick.question] = update(
            self.ability(*key), self.difficulty(pick.question), pick.correct)
