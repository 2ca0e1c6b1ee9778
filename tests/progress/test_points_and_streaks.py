"""Exact points and streak values members read on boards and in /stats.

These pin the numbers in bot/core/domain/scoring.py so that a changed constant, a flipped
comparison or an off-by-one in the speed bonus or streak rules fails (issue 21, mutation
survivors of scoring.py).
"""

from __future__ import annotations

import pytest

from bot.core.domain.kinds import CHANNEL_KINDS
from bot.core.domain.scoring import (
    MAX_SPEED_BONUS,
    POINTS_PER_DIFFICULTY,
    StreakState,
    points_for,
    settle_streak,
    speed_bonus,
)


def test_published_constants() -> None:
    """The README and /help promise 10/20/30 points and up to 5 bonus points."""
    assert POINTS_PER_DIFFICULTY == 10
    assert MAX_SPEED_BONUS == 5


@pytest.mark.parametrize(
    ("response_ms", "window_ms", "bonus"),
    [
        (0, 10_000, 5),
        (1_000, 10_000, 4),  # 4.5 -> 4 (round half to even, as shipped)
        (2_000, 10_000, 4),
        (5_000, 10_000, 2),  # 2.5 -> 2 (banker's rounding, as shipped)
        (6_000, 10_000, 2),
        (9_000, 10_000, 0),  # 0.5 -> 0
        (10_000, 10_000, 0),
        (20_000, 10_000, 0),  # late answers never go negative
        (0, 0, 0),  # no window, no bonus
        (0, -5, 0),
    ],
)
def test_speed_bonus_values(response_ms: int, window_ms: int, bonus: int) -> None:
    assert speed_bonus(response_ms, window_ms) == bonus


def test_speed_bonus_with_a_one_ms_window() -> None:
    """window_ms == 1 is a real window (guards `<= 0` against `<= 1`)."""
    assert speed_bonus(0, 1) == 5


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_points_by_difficulty_without_bonus(difficulty: int) -> None:
    kind = sorted(CHANNEL_KINDS)[0]
    got = points_for(kind=kind, correct=True, difficulty=difficulty, response_ms=0, window_ms=10_000, bonus=False)
    assert got == 10 * difficulty


def test_points_with_bonus_add_the_speed_bonus() -> None:
    for kind in sorted(CHANNEL_KINDS):
        assert points_for(kind=kind, correct=True, difficulty=2, response_ms=0, window_ms=10_000, bonus=True) == 25
        assert points_for(kind=kind, correct=True, difficulty=2, response_ms=2_000, window_ms=10_000, bonus=True) == 24


def test_wrong_answers_and_practice_earn_nothing() -> None:
    kind = sorted(CHANNEL_KINDS)[0]
    assert points_for(kind=kind, correct=False, difficulty=3, response_ms=0, window_ms=10_000, bonus=True) == 0
    for practice in ("quiz", "review", "personal"):
        if practice not in CHANNEL_KINDS:
            assert points_for(kind=practice, correct=True, difficulty=3, response_ms=0, window_ms=1, bonus=True) == 0


def test_streak_starts_continues_and_records_best() -> None:
    s = settle_streak(StreakState(), post_id=1, previous_post_id=None, correct=True)
    assert (s.current, s.best, s.last_post_id) == (1, 1, 1)
    s = settle_streak(s, post_id=2, previous_post_id=1, correct=True)
    assert (s.current, s.best, s.last_post_id) == (2, 2, 2)
    s = settle_streak(s, post_id=3, previous_post_id=2, correct=True)
    assert (s.current, s.best, s.last_post_id) == (3, 3, 3)


def test_a_skipped_post_restarts_at_one_and_keeps_best() -> None:
    s = StreakState(current=3, best=3, last_post_id=3)
    s = settle_streak(s, post_id=5, previous_post_id=4, correct=True)  # post 4 skipped
    assert (s.current, s.best, s.last_post_id) == (1, 3, 5)


def test_first_post_of_a_channel_has_no_previous_and_starts_at_one() -> None:
    """previous_post_id None never continues, even for a member whose last post is unset."""
    s = settle_streak(StreakState(current=4, best=6, last_post_id=None), post_id=9, previous_post_id=None, correct=True)
    assert (s.current, s.best, s.last_post_id) == (1, 6, 9)


def test_a_wrong_answer_breaks_the_streak_and_keeps_best() -> None:
    s = StreakState(current=4, best=7, last_post_id=10)
    broken = settle_streak(s, post_id=11, previous_post_id=10, correct=False)
    assert (broken.current, broken.best, broken.last_post_id) == (0, 7, 10)


def test_best_is_not_lowered_by_a_shorter_run() -> None:
    s = settle_streak(StreakState(current=1, best=5, last_post_id=1), post_id=2, previous_post_id=1, correct=True)
    assert (s.current, s.best) == (2, 5)


def test_settling_the_same_or_an_older_post_changes_nothing() -> None:
    s = StreakState(current=2, best=2, last_post_id=8)
    assert settle_streak(s, post_id=8, previous_post_id=7, correct=True) is s
    assert settle_streak(s, post_id=7, previous_post_id=6, correct=False) is s
    nxt = settle_streak(s, post_id=9, previous_post_id=8, correct=True)
    assert (nxt.current, nxt.best, nxt.last_post_id) == (3, 3, 9)
