"""Leaderboards: channel, workspace or study group, over a week, a month or all time.

Ranking: points, then accuracy, then whoever reached their score first (earliest last scoring
answer). Only channel posts count; personal practice never reaches a leaderboard. A question
counts from its reveal on: while it is open, a board would tell everyone who picked right.
The SQL lives in bot.storage.scores (all time reads totals credited at each reveal), behind
``ProgressReads.top`` and ``.rank_of`` (bot.core.progress.ports).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    rank: int
    member_id: int
    name: str
    points: int
    correct: int
    answered: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0
