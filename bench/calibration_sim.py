"""A seeded world for the calibration bench and its test: known abilities, known questions.

Members have a known ability per topic (correlated across topics); questions have a known
difficulty and slope under the 2PL response model, a labelled difficulty, and distractors of
known attractiveness. Some questions are planted bad: a wrong key (the keyed choice is a
distractor, the truly right one is another), a dead distractor (attractiveness 0), a
mislabelled difficulty (labelled 1, answered like a hard one, or the reverse), no signal
(right with a fixed chance whatever the ability). Generation is vectorised numpy so the 1M
answer run is quick; the estimates come from ``bot.core.learning`` exactly as in production.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from bot.core.learning.irt import Calibration, FitSettings, fit
from bot.core.learning.online import OnlineCalibrator
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.learning.quality import Flag, QualityRules, assess

LEVEL_CENTRES = {1: -1.2, 2: 0.0, 3: 1.2}
PLANTED = (Flag.WRONG_KEY, Flag.DEAD_DISTRACTOR, Flag.MISLABELLED, Flag.NO_SIGNAL)
CHOICES = 4


@dataclass
class World:
    picks: list[Pick]
    items: list[ItemInfo]
    difficulty: dict[str, float]  # true difficulty, only where it is defined (not miskeyed, not noise)
    ability: dict[tuple[str, str], float]
    planted: set[tuple[str, Flag]]


def simulate(seed: int, answers_per_question: int, questions: int = 100, bad_per_kind: int = 3,
             topics: tuple[str, ...] = ("tensors", "autograd"), participation: float = 0.8) -> World:
    """Every member answers each question with chance ``participation`` (~n answers each)."""
    rng = np.random.default_rng(seed)
    members = math.ceil(answers_per_question / participation)
    general = rng.normal(size=members)
    theta = 0.8 * general[:, None] + 0.6 * rng.normal(size=(members, len(topics)))
    topic_of = np.arange(questions) % len(topics)
    label = rng.integers(1, 4, size=questions)
    b = np.array([LEVEL_CENTRES[int(x)] for x in label]) + rng.normal(0, 0.4, questions)
    a = rng.uniform(0.8, 2.0, questions)
    key = rng.integers(0, CHOICES, size=questions)
    truth = key.copy()  # the truly right choice
    weight = rng.uniform(0.5, 1.5, size=(questions, CHOICES))
    fixed_p = np.full(questions, np.nan)
    planted: set[tuple[str, Flag]] = set()
    bad = rng.permutation(questions)[: bad_per_kind * len(PLANTED)]
    for k, q in enumerate(bad):
        kind = PLANTED[k % len(PLANTED)]
        planted.add((f"q{q}", kind))
        if kind is Flag.WRONG_KEY:
            truth[q] = (key[q] + 1 + rng.integers(0, CHOICES - 1)) % CHOICES
        elif kind is Flag.DEAD_DISTRACTOR:
            label[q], b[q] = 2, rng.normal(0, 0.3)
            weight[q, (truth[q] + 1) % CHOICES] = 0.0
        elif kind is Flag.MISLABELLED:
            label[q] = 1 if k % 2 else 3
            b[q] = 1.8 if label[q] == 1 else -1.8
        else:
            fixed_p[q] = rng.uniform(0.35, 0.65)
    weight[np.arange(questions), truth] = 0.0
    answered = rng.random((members, questions)) < participation
    m_idx, q_idx = np.nonzero(answered)
    p = 1.0 / (1.0 + np.exp(-a[q_idx] * (theta[m_idx, topic_of[q_idx]] - b[q_idx])))
    p = np.where(np.isnan(fixed_p[q_idx]), p, fixed_p[q_idx])
    right = rng.random(len(q_idx)) < p
    cum = np.cumsum(weight / weight.sum(axis=1, keepdims=True), axis=1)[q_idx]
    wrong_choice = np.minimum((rng.random(len(q_idx))[:, None] > cum).sum(axis=1), CHOICES - 1)
    choice = np.where(right, truth[q_idx], wrong_choice)
    ms = np.round(rng.lognormal(math.log(8000), 0.5, len(q_idx))).astype(int)
    names = [f"m{m}" for m in range(members)]
    picks = [Pick(names[m], f"q{q}", topics[topic_of[q]], int(c), bool(c == key[q]), int(t))
             for m, q, c, t in zip(m_idx.tolist(), q_idx.tolist(), choice.tolist(), ms.tolist(), strict=True)]
    random.Random(seed).shuffle(picks)  # answers arrive interleaved, not member by member
    items = [ItemInfo(f"q{q}", topics[topic_of[q]], int(label[q]), CHOICES, int(key[q]))
             for q in range(questions)]
    undefined = {q for q, flag in planted if flag in (Flag.WRONG_KEY, Flag.NO_SIGNAL)}
    return World(
        picks, items,
        {f"q{q}": float(b[q]) for q in range(questions) if f"q{q}" not in undefined},
        {(names[m], t): float(theta[m, k]) for m in range(members) for k, t in enumerate(topics)},
        planted,
    )


@dataclass(frozen=True)
class Scores:
    answers_per_question: int
    answers: int
    difficulty_rho: float
    ability_rho: float
    online_difficulty_rho: float
    online_ability_rho: float
    recall: float
    precision: float
    fit_seconds: float
    online_us: float  # per answer
    missed: tuple[str, ...]
    false: tuple[str, ...]


def _rho(estimated: list[float], true: list[float]) -> float:
    return float(spearmanr(estimated, true).statistic)


def evaluate(world: World, answers_per_question: int, settings: FitSettings | None = None,
             rules: QualityRules | None = None) -> Scores:
    started = time.perf_counter()
    calibration: Calibration = fit(world.picks, settings)
    seconds = time.perf_counter() - started
    online = OnlineCalibrator(labels={i.question: i.labelled for i in world.items})
    online_started = time.perf_counter()
    for pick in world.picks:
        online.observe(pick)
    online_us = (time.perf_counter() - online_started) / len(world.picks) * 1e6
    questions = sorted(world.difficulty)
    persons = sorted(k for k in world.ability if k in calibration.abilities)
    raised = {(row.question, flag) for row in assess(world.items, world.picks, calibration, rules)
              for flag in row.flags}
    hits = raised & world.planted
    return Scores(
        answers_per_question, len(world.picks),
        _rho([calibration.items[q].difficulty for q in questions], [world.difficulty[q] for q in questions]),
        _rho([calibration.abilities[k].ability for k in persons], [world.ability[k] for k in persons]),
        _rho([online.difficulty(q).mean for q in questions], [world.difficulty[q] for q in questions]),
        _rho([online.ability(*k).mean for k in persons], [world.ability[k] for k in persons]),
        len(hits) / len(world.planted), len(hits) / len(raised) if raised else 1.0, seconds, online_us,
        tuple(sorted(f"{q} {f}" for q, f in world.planted - raised)),
        tuple(sorted(f"{q} {f}" for q, f in raised - world.planted)),
    )
