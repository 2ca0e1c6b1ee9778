"""Calibration from picks: the online update, the batch Rasch/2PL fit, readiness."""

from __future__ import annotations

import math
import random

from scipy.stats import spearmanr

from bot.core.learning.irt import AbilityEstimate, FitSettings, fit
from bot.core.learning.online import Belief, OnlineCalibrator, update
from bot.core.learning.picks import Pick
from bot.core.learning.readiness import readiness


def test_online_update_moves_towards_the_answer_and_shrinks_uncertainty():
    ability, difficulty = Belief(0.0, 1.0), Belief(0.0, 1.0)
    up, easier = update(ability, difficulty, correct=True)
    assert up.mean > 0 and easier.mean < 0  # right: member stronger, question easier
    assert up.var < 1.0 + 0.01 and easier.var < 1.0 and up.n == easier.n == 1
    down, harder = update(ability, difficulty, correct=False)
    assert down.mean == -up.mean and harder.mean == -easier.mean


def test_online_steps_shrink_with_evidence():
    calibrator = OnlineCalibrator(labels={"q": 2})
    steps = []
    for n in range(40):
        before = calibrator.difficulty("q").mean
        calibrator.observe(Pick(f"m{n}", "q", "tensors", 0, correct=n % 2 == 0))
        steps.append(abs(calibrator.difficulty("q").mean - before))
    assert steps[-1] < steps[0] / 3
    assert calibrator.difficulty("q").se < 0.4


def _simulated(seed: int, members: int, questions: int) -> tuple[list[Pick], list[float], list[float]]:
    rng = random.Random(seed)
    ability = [rng.gauss(0, 1) for _ in range(members)]
    difficulty = [rng.gauss(0, 1.2) for _ in range(questions)]
    picks = [
        Pick(f"m{m}", f"q{q}", "tensors", 0, rng.random() < 1 / (1 + math.exp(difficulty[q] - ability[m])))
        for m in range(members) for q in range(questions)
    ]
    return picks, ability, difficulty


def test_batch_fit_orders_questions_and_members_and_reports_uncertainty():
    picks, ability, difficulty = _simulated(3, members=120, questions=30)
    calibration = fit(picks, FitSettings(min_answers_2pl=1000))  # Rasch only
    assert calibration.converged
    fitted = [calibration.items[f"q{q}"].difficulty for q in range(30)]
    assert spearmanr(fitted, difficulty).statistic > 0.95
    members = [calibration.abilities[(f"m{m}", "tensors")].ability for m in range(120)]
    assert spearmanr(members, ability).statistic > 0.85
    item = calibration.items["q0"]
    assert item.answers == 120 and item.slope == 1.0 and item.slope_se is None and 0.1 < item.difficulty_se < 0.4
    member = calibration.ability("m0", "tensors")
    assert member is not None and member.answers == 30 and 0.3 < member.se < 0.6
    errors = [abs(calibration.items[f"q{q}"].difficulty - difficulty[q]) for q in range(30)]
    assert sum(errors) / 30 < 0.45


def test_questions_with_enough_answers_get_a_slope_with_its_error():
    picks, *_ = _simulated(4, members=120, questions=10)
    calibration = fit(picks, FitSettings(min_answers_2pl=100))
    item = calibration.items["q0"]
    assert item.slope_se is not None and 0.05 < item.slope_se < 0.6 and 0.4 < item.slope < 2.0


def test_a_fit_over_nothing_is_empty():
    assert fit([]).items == {}


def test_readiness_band_and_too_little_data():
    sure = readiness(AbilityEstimate("m", "tensors", 1.0, 0.3, 40), reference=1.0)
    assert sure.expected == 0.5 and sure.low < 0.5 < sure.high and sure.enough_data
    assert sure.describe() == "50% expected right on an interview-level question (36%-64%)"
    thin = readiness(AbilityEstimate("m", "tensors", 2.0, 0.9, 4), reference=1.0)
    assert not thin.enough_data and thin.describe() == "too little data (4 answers)"
