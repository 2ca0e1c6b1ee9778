"""Batch item-response fit: Rasch for every question, 2PL where a question has enough answers.

Model: ``P(right) = sigmoid(a_i * (theta_pt - b_i))`` with ``theta`` per (member, topic), ``b``
per question and slope ``a`` fixed at 1 (Rasch) until the question has ``min_answers_2pl``
answers. All parameters are estimated jointly by maximising the penalised likelihood
(maximum a posteriori): ``theta ~ N(0, 1)`` fixes the scale's origin and unit (the model is
otherwise unidentified), weak priors on ``b`` and ``a`` keep questions everyone gets right or
wrong finite. The negative log-likelihood and its gradient are vectorised numpy
(``np.bincount`` scatters the gradient); scipy's L-BFGS-B does the optimisation. A slope may go
negative: that is the signature of a mis-keyed question and the quality report reads it.

Standard errors come from the diagonal of the observed information at the optimum (the
curvature of each parameter alone); they ignore covariance between parameters and so are
slightly optimistic, which is what matters for "is there enough data" decisions.

A built-in question has one id in every community, so its difficulty is fitted from all of
them; a community question's id is its community's alone, so only its members inform it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

from bot.core.learning.picks import Pick

Vector = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class FitSettings:
    min_answers_2pl: int = 100  # below this a question's slope stays 1 (Rasch)
    ability_sd: float = 1.0
    difficulty_sd: float = 3.0
    slope_mean: float = 1.0
    slope_sd: float = 1.0
    max_iterations: int = 1000


@dataclass(frozen=True, slots=True)
class ItemEstimate:
    question: str
    topic: str
    difficulty: float
    difficulty_se: float
    slope: float
    slope_se: float | None  # None: Rasch (slope fixed at 1)
    answers: int


@dataclass(frozen=True, slots=True)
class AbilityEstimate:
    member: str
    topic: str
    ability: float
    se: float
    answers: int


@dataclass(frozen=True, slots=True)
class Calibration:
    items: dict[str, ItemEstimate]
    abilities: dict[tuple[str, str], AbilityEstimate]
    seconds: float
    iterations: int
    converged: bool

    def ability(self, member: str, topic: str) -> AbilityEstimate | None:
        return self.abilities.get((member, topic))


@dataclass
class _Data:
    person: NDArray[np.int64]
    item: NDArray[np.int64]
    y: Vector
    persons: list[tuple[str, str]]
    items: list[tuple[str, str]]

    @classmethod
    def of(cls, picks: Sequence[Pick]) -> _Data:
        persons: dict[tuple[str, str], int] = {}
        items: dict[str, int] = {}
        item_topic: list[tuple[str, str]] = []
        person = np.empty(len(picks), dtype=np.int64)
        item = np.empty(len(picks), dtype=np.int64)
        y = np.empty(len(picks), dtype=np.float64)
        for n, pick in enumerate(picks):
            person[n] = persons.setdefault((pick.member, pick.topic), len(persons))
            index = items.get(pick.question)
            if index is None:
                index = items[pick.question] = len(items)
                item_topic.append((pick.question, pick.topic))
            item[n] = index
            y[n] = 1.0 if pick.correct else 0.0
        return cls(person, item, y, list(persons), item_topic)


class _Objective:
    """Penalised negative log-likelihood over (theta, b, free slopes) and its gradient."""

    def __init__(self, data: _Data, free: NDArray[np.int64], s: FitSettings) -> None:
        self.d, self.free, self.s = data, free, s
        self.n_p, self.n_i = len(data.persons), len(data.items)

    def split(self, x: Vector) -> tuple[Vector, Vector, Vector]:
        theta, b = x[:self.n_p], x[self.n_p:self.n_p + self.n_i]
        a = np.ones(self.n_i)
        a[self.free] = x[self.n_p + self.n_i:]
        return theta, b, a

    def __call__(self, x: Vector) -> tuple[float, Vector]:
        d, s = self.d, self.s
        theta, b, a = self.split(x)
        gap = theta[d.person] - b[d.item]
        slope = a[d.item]
        z = slope * gap
        r = 1.0 / (1.0 + np.exp(-z)) - d.y  # d NLL / d z
        nll = float(np.sum(np.logaddexp(0.0, z) - d.y * z))
        a_free = a[self.free]
        nll += float(theta @ theta) / (2 * s.ability_sd ** 2) + float(b @ b) / (2 * s.difficulty_sd ** 2)
        nll += float(np.sum((a_free - s.slope_mean) ** 2)) / (2 * s.slope_sd ** 2)
        ra = r * slope
        g_theta = np.bincount(d.person, ra, self.n_p) + theta / s.ability_sd ** 2
        g_b = -np.bincount(d.item, ra, self.n_i) + b / s.difficulty_sd ** 2
        g_a = np.bincount(d.item, r * gap, self.n_i)[self.free] + (a_free - s.slope_mean) / s.slope_sd ** 2
        return nll, np.concatenate([g_theta, g_b, g_a])

    def information(self, x: Vector) -> tuple[Vector, Vector, Vector]:
        """Diagonal of the observed information (priors included) for theta, b and slopes."""
        d, s = self.d, self.s
        theta, b, a = self.split(x)
        gap = theta[d.person] - b[d.item]
        slope = a[d.item]
        p = 1.0 / (1.0 + np.exp(-slope * gap))
        w = p * (1.0 - p)
        i_theta = np.bincount(d.person, w * slope ** 2, self.n_p) + 1 / s.ability_sd ** 2
        i_b = np.bincount(d.item, w * slope ** 2, self.n_i) + 1 / s.difficulty_sd ** 2
        i_a = np.bincount(d.item, w * gap ** 2, self.n_i)[self.free] + 1 / s.slope_sd ** 2
        return i_theta.astype(np.float64), i_b.astype(np.float64), i_a.astype(np.float64)


def _minimise(objective: _Objective, x0: Vector, s: FitSettings) -> tuple[Vector, int, bool]:
    result = minimize(objective, x0, jac=True, method="L-BFGS-B",
                      options={"maxiter": s.max_iterations, "maxcor": 20})
    return np.asarray(result.x, dtype=np.float64), int(result.nit), bool(result.success)


def fit(picks: Sequence[Pick], settings: FitSettings | None = None) -> Calibration:
    """Joint MAP estimates with standard errors: a Rasch pass, then 2PL for well-answered items."""
    s = settings or FitSettings()
    started = time.perf_counter()
    if not picks:
        return Calibration({}, {}, 0.0, 0, True)
    d = _Data.of(picks)
    n_p, n_i = len(d.persons), len(d.items)
    answers_per_item = np.bincount(d.item, minlength=n_i)
    answers_per_person = np.bincount(d.person, minlength=n_p)
    wrong_share = (answers_per_item - np.bincount(d.item, d.y, n_i) + 0.5) / (answers_per_item + 1.0)
    b0 = np.log(wrong_share / (1.0 - wrong_share))
    rasch = _Objective(d, np.empty(0, dtype=np.int64), s)
    x, iterations, converged = _minimise(rasch, np.concatenate([np.zeros(n_p), b0]), s)
    free = np.flatnonzero(answers_per_item >= s.min_answers_2pl).astype(np.int64)
    objective = rasch
    if free.size:
        objective = _Objective(d, free, s)
        x, more, converged = _minimise(objective, np.concatenate([x, np.ones(free.size)]), s)
        iterations += more
    theta, b, a = objective.split(x)
    i_theta, i_b, i_a = objective.information(x)
    slope_se = np.full(n_i, np.nan)
    slope_se[free] = 1.0 / np.sqrt(i_a)
    items = {
        q: ItemEstimate(q, topic, float(b[k]), float(1.0 / np.sqrt(i_b[k])), float(a[k]),
                        None if np.isnan(slope_se[k]) else float(slope_se[k]), int(answers_per_item[k]))
        for k, (q, topic) in enumerate(d.items)
    }
    abilities = {
        key: AbilityEstimate(key[0], key[1], float(theta[k]), float(1.0 / np.sqrt(i_theta[k])),
                             int(answers_per_person[k]))
        for k, key in enumerate(d.persons)
    }
    return Calibration(items, abilities, time.perf_counter() - started, iterations, converged)
