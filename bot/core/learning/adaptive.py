"""Adaptive practice: order questions by how close their predicted success is to a target band.

A question the member is predicted to get right 70-85% of the time is hard enough to teach and
easy enough not to discourage. Questions are grouped in rings: ring 0 is inside the band, ring
k lies within ``k * WIDEN_STEP`` of it, so taking rings in order is the band widening step by
step until the pool has enough questions. A question the member has already seen counts as
``SEEN_RINGS`` rings further out: unseen questions near the band come first, but a seen one
inside the band beats an unseen one far outside it (without this, ``python -m bench.adaptive``
delivers 60-64% to a 70-85% band once the easy questions a weaker member needs are used up).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from bot.core.learning.online import OnlineCalibrator, expected
from bot.core.learning.picks import Pick

T = TypeVar("T")

DEFAULT_BAND = (0.70, 0.85)
WIDEN_STEP = 0.05  # how far the band widens, on each side, each time the pool runs out
SEEN_RINGS = 1  # a seen question waits this many widening steps behind an unseen one


def calibrator_of(picks: Iterable[Pick], labels: dict[str, int]) -> OnlineCalibrator:
    """The online beliefs after replaying ``picks`` in order (a member's own, for /stats and /quiz)."""
    calibrator = OnlineCalibrator(labels=labels)
    for pick in picks:
        calibrator.observe(pick)
    return calibrator


def predicted_success(calibrator: OnlineCalibrator, member: str, question: str, topic: str) -> float:
    """P(right) of ``member`` on ``question``, widened by both beliefs' uncertainty."""
    return expected(calibrator.ability(member, topic), calibrator.difficulty(question))


def ring(success: float, band: tuple[float, float], step: float = WIDEN_STEP) -> int:
    """0 inside the band; otherwise how many widening steps it takes to reach ``success``."""
    low, high = band
    distance = max(low - success, success - high, 0.0)
    return math.ceil(round(distance / step, 9))


def quiz_order(candidates: Sequence[T], seen: Callable[[T], bool], ring_of: Callable[[T], int],
               rng: random.Random) -> list[T]:
    """/quiz's order: nearest the band first, a seen question ``SEEN_RINGS`` rings further out
    than it lies, at random within a ring (an unseen question first on a tie)."""
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    shuffled.sort(key=lambda q: (ring_of(q) + SEEN_RINGS * seen(q), seen(q)))  # stable: random within
    return shuffled
