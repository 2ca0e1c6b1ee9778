"""What the weekly posts need from storage, as the core states it (issue 32: the core owns
its ports).

``WeeklyStore`` (``bot.storage.weekly.StoredWeekly``) holds the weekly claims, one per channel,
kind and local week, and what the posts read around them: the schedules, the problems a
channel has had, its solvers' names. ``DigestReads``
(``bot.storage.digest_queries.StoredDigestReads``) is what the weekly digest reads.

A method that takes ``tx`` (opaque here: see ``bot.core.stores.Tx``) runs inside the caller's
transaction, so preparing a post decides under one, and the digest reads its week in one; the
others are one transaction each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

from bot.core.stores import Transactions

if TYPE_CHECKING:
    from bot.core.daily.schedules import ScheduleView
    from bot.core.domain.identity import Where
    from bot.core.learning.online import Belief
    from bot.core.posting.claims import ClaimStore
    from bot.core.stores import Tx

WeeklyNatural = tuple[int, str, date]  # a weekly claim's key: (channel, kind, local Monday)


@dataclass(frozen=True)
class WeeklyPost:
    """A weekly claim as the core reads it: a challenge, a digest or a closing summary.
    Its times are UTC."""

    id: int
    channel_pk: int
    kind: str
    week_start: date  # the local Monday of its week
    item: str | None  # the challenge it shows (a challenge's claim only)
    sent_at: datetime | None
    closed_at: datetime | None  # a challenge's: when its week closed
    platform_ref: str | None


@dataclass(frozen=True)
class OpenedClaim:
    """A claim still ours and unsent, marked opened: what preparing its post starts from."""

    post: WeeklyPost
    opened_at: datetime  # the first attempt's time (UTC): a retry looks back from it
    retry: bool  # an earlier attempt opened it


class WeeklyStore(Transactions, Protocol):
    """The weekly claims and what the weekly posts read around them."""

    claims: ClaimStore[WeeklyNatural, int]  # the claim rows bot.core.posting fences

    async def schedule(self, channel_pk: int) -> ScheduleView | None:
        """The one schedule a fire needs."""
        ...

    async def schedules(self) -> list[ScheduleView]: ...

    async def schedules_of(self, tx: Tx, channel_pks: Iterable[int]) -> dict[int, ScheduleView]:
        """The schedules of these channels only, by channel (closing a few open challenges)."""
        ...

    async def set_spec(self, where: Where, field: str, spec: str | None, now: datetime) -> int | None:
        """Set the channel schedule's weekly time ``field`` (``challenge_at``, ``digest_at``):
        the channel's id, or None when it has no schedule to set it in (nothing changed).
        The channel row is made if new."""
        ...

    async def channel_pk(self, where: Where) -> int:
        """The channel's id (its row made if new)."""
        ...

    async def claimed_since(self, first_day: date) -> set[WeeklyNatural]:
        """Every weekly claim from ``first_day`` on, sent or not (what the sweep skips)."""
        ...

    async def claim(self, claim_id: int) -> WeeklyPost | None: ...

    async def open_claim(self, tx: Tx, claim_id: int, token: str, now: datetime) -> OpenedClaim | None:
        """The claim if it is still held under ``token`` and unsent (None: lost), marked
        opened at ``now`` by its first attempt."""
        ...

    async def used_items(self, tx: Tx, channel_pk: int) -> set[str]:
        """The problems the channel's weekly claims have shown (or picked)."""
        ...

    async def set_item(self, tx: Tx, claim_id: int, item: str) -> None: ...

    async def close_in(self, tx: Tx, channel_pk: int, kind: str, week_start: date,
                       now: datetime) -> WeeklyPost | None:
        """The channel's ``kind`` claim of that week, marked closed at ``now`` unless it is
        already (a crash came between a closing claim and its mark); None when there is none."""
        ...

    async def open_posts(self, tx: Tx, kind: str, channel_pk: int | None) -> list[WeeklyPost]:
        """The sent ``kind`` claims not closed yet (of one channel, or of all), by channel
        then week."""
        ...

    async def close(self, claim_id: int, now: datetime) -> bool:
        """Mark the claim closed at ``now``: False when it was closed already."""
        ...

    async def current_item(self, where: Where, kind: str) -> str | None:
        """The item of the channel's latest sent ``kind`` claim while it is open (the channel
        row made if new)."""
        ...

    async def solver_names(self, channel_pk: int, item: str | None, since: datetime,
                           until: datetime) -> list[str]:
        """Display names of the channel's community's members who solved ``item`` in
        [since, until], the first solve first (then the member who joined first)."""
        ...


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
