"""Points and streak rules. Every number a member sees on a leaderboard comes from here.

- A correct answer is worth ``POINTS_PER_DIFFICULTY * difficulty`` points (10, 20 or 30).
- With a speed bonus (rounds always, daily posts only when the channel enables it), a correct
  answer earns up to ``MAX_SPEED_BONUS`` extra, shrinking linearly over the answer window.
- Personal quizzes and reviews earn no leaderboard points: practice is unlimited, so counting it
  would let anyone farm the board. They still feed stats and spaced repetition.
- A daily streak counts consecutive daily posts of a channel answered correctly; it is settled
  when the post is revealed.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.model.kinds import CHANNEL_KINDS

POINTS_PER_DIFFICULTY = 10
MAX_SPEED_BONUS = 5


def speed_bonus(response_ms: int, window_ms: int) -> int:
    if window_ms <= 0:
        return 0
    remaining = max(0.0, 1.0 - response_ms / window_ms)
    return round(MAX_SPEED_BONUS * remaining)


def points_for(
    *, kind: str, correct: bool, difficulty: int, response_ms: int, window_ms: int, bonus: bool
) -> int:
    if not correct or kind not in CHANNEL_KINDS:
        return 0
    points = POINTS_PER_DIFFICULTY * difficulty
    if bonus:
        points += speed_bonus(response_ms, window_ms)
    return points


@dataclass
class StreakState:
    current: int = 0
    best: int = 0
    last_post_id: int | None = None


def settle_streak(
    state: StreakState, *, post_id: int, previous_post_id: int | None, correct: bool
) -> StreakState:
    """New streak after a revealed daily post. Idempotent for the same post, and an older post
    revealed late (a longer reveal delay) cannot rewrite a streak a newer one already settled."""
    if state.last_post_id is not None and post_id <= state.last_post_id:
        return state
    if not correct:
        return StreakState(0, state.best, state.last_post_id)
    continuing = previous_post_id is not None and state.last_post_id == previous_post_id
    current = state.current + 1 if continuing else 1
    return StreakState(current, max(state.best, current), post_id)
