"""What the weekly digest needs from storage, as the core states it (issue 32: the core owns
its ports). ``bot.storage.digest_queries.StoredDigestReads`` implements it.

Every method runs inside the caller's transaction (``tx``, opaque here: see
``bot.core.stores.Tx``), so the digest still reads its week in one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.core.learning.online import Belief
    from bot.core.stores import Tx


@dataclass(frozen=True)
class DigestAnswer:
    """One revealed answer in a channel, as the digest counts it."""

    member_id: int
    answered_at: datetime
    points: int
    correct: bool
    topic: str
    post_id: int


@dataclass(frozen=True)
class DigestPost:
    """A channel question, for the hardest question's line."""

    question_id: str
    opened_at: datetime
    platform_ref: str | None


class DigestReads(Protocol):
    """The channel's answers, streaks and names behind the weekly digest."""

    async def revealed_answers(self, tx: Tx, channel_pk: int, since: datetime,
                               until: datetime) -> list[DigestAnswer]:
        """The channel's answers in [since, until), open questions left out."""
        ...

    async def names_of(self, tx: Tx, member_ids: list[int]) -> dict[int, str]: ...

    async def running_streaks(self, tx: Tx, channel_pk: int) -> list[tuple[int, int]]:
        """(member id, current streak) of the channel's streaks above zero."""
        ...

    async def question_counts(self, tx: Tx, channel_pk: int, since: datetime,
                              until: datetime) -> list[tuple[str, str, int, int]]:
        """(topic, question id, answers, right) of the channel's revealed answers in [since, until)."""
        ...

    async def workspace_of(self, tx: Tx, channel_pk: int) -> int | None: ...

    async def difficulties(self, tx: Tx, labels: Mapping[str, int],
                           workspace_id: int) -> dict[str, Belief]:
        """Stored difficulties of the questions in ``labels`` (question id -> labelled difficulty)."""
        ...

    async def post(self, tx: Tx, post_id: int) -> DigestPost | None: ...

    async def streak_per_week(self, tx: Tx, channel_pk: int) -> int | None: ...
