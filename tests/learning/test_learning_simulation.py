"""The calibration meets its goals on a seeded world whose truth is known (fast version of
bench/calibration.py): rank correlations >= 0.9 and planted-flag recall >= 0.95, precision
>= 0.8 at 200 answers per question."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench.calibration_sim import evaluate, simulate

REPO = Path(__file__).resolve().parents[2]


def test_goals_at_200_answers_per_question():
    """The bench's own size (100 questions, 12 planted; all goals met on seeds 1-10, see
    docs/learning.md); smaller banks give each member too few answers per topic for 0.9."""
    world = simulate(1, 200, questions=100, bad_per_kind=3)
    assert len(world.planted) == 12 and 19_000 < len(world.picks) < 21_000
    scores = evaluate(world, 200)
    assert scores.difficulty_rho >= 0.9 and scores.ability_rho >= 0.9
    assert scores.online_difficulty_rho >= 0.9
    assert scores.recall >= 0.95, scores.missed
    assert scores.precision >= 0.8, scores.false


def test_the_bench_prints_its_table_and_the_big_fit():
    out = subprocess.run(
        [sys.executable, "-m", "bench.calibration", "--sizes", "50", "--questions", "40", "--big", "20000"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "answers/q  answers | batch rho b  theta | online rho b  theta | recall precision |  fit s" in out
    assert re.search(r"online update: [\d.]+ us per answer at best over the sizes", out)
    big = re.search(r"batch fit over ([\d,]+) answers \(1000 questions, 200 member-topics, (\d) cores\): "
                    r"[\d.]+ s wall, [\d.]+ s CPU, \d+ L-BFGS iterations, converged: True", out)
    assert big is not None, out
    assert 19_000 < int(big[1].replace(",", "")) < 21_000 and int(big[2]) <= 2
