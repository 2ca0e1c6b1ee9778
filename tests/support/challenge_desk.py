"""A /challenge desk built as ``bot.app.build_services`` builds it: over its storage port."""

from __future__ import annotations

import random

from bot.core.challenges.desk import ChallengeDesk
from bot.core.content.challenges import ChallengeBank
from bot.core.domain.clock import Clock
from bot.storage.challenge_progress import StoredChallengeProgress
from bot.storage.db import Database


def challenge_desk(db: Database, clock: Clock, bank: ChallengeBank | None = None, *,
                   rng: random.Random | None = None) -> ChallengeDesk:
    """The desk over ``db`` (the shipped bank when ``bank`` is None)."""
    return ChallengeDesk(StoredChallengeProgress(db, clock), clock, bank, rng=rng)
