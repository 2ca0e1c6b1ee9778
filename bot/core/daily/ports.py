"""What the daily question needs from storage, as the core states it (issue 32: the core owns
its ports). ``bot.storage.schedules.StoredSchedules`` implements ``ScheduleStore``;
``bot.storage.daily.StoredDaily`` implements ``DailyStore``; the daily claims themselves sit
behind bot.core.posting's ``ClaimStore[DailyKey, DailyKey]`` (``bot.storage.claims.DailyClaims``).

``ScheduleStore`` methods own their transactions. ``DailyStore`` methods that take a ``tx`` run
inside the caller's (opaque here: see ``bot.core.stores.Tx``), so a switch of streak mode, a
role reward's change and the choice of a claim's post each stay one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.core.daily.schedules import ScheduleView
    from bot.core.domain.identity import Where
    from bot.core.reveal.posts import PostLike
    from bot.core.stores import Tx

DailyKey = tuple[int, date]  # (channel, local date): the natural key of a daily claim

# (kind, threshold, topic, role id, problem, members holding it): ``progress.rewards.listing``
RewardLine = tuple[str, int, str | None, str, str | None, int]


@dataclass(frozen=True)
class ScheduleSettings:
    """What ``/daily schedule`` stores for a channel (its timezone becomes the channel's)."""

    time_of_day: str
    timezone: str
    weekdays: str  # comma-separated, "mon,tue"
    topic: str | None
    reveal_after_minutes: int
    bank_source: str | None  # None: the default bank


@dataclass(frozen=True)
class ClaimRow:
    """A daily claim as choosing its post reads it."""

    holder: str
    sent: bool
    post_id: int | None


class ScheduleStore(Protocol):
    """The channels' daily schedules and which days already have a claim."""

    async def all(self) -> list[ScheduleView]:
        """Every schedule (paused ones too), by channel: one read per sweep, never per fire."""
        ...

    async def of(self, channel_pk: int) -> ScheduleView | None:
        """The one schedule a fire needs (a single row, however many channels there are)."""
        ...

    async def claimed_since(self, first_day: date) -> set[DailyKey]:
        """(channel, local date) of every daily claim from ``first_day`` on, sent or not."""
        ...

    async def save(self, where: Where, settings: ScheduleSettings, now: datetime) -> int:
        """Create or replace the channel's schedule (unpaused; the channel row made if new)
        and set the channel's timezone: the channel's id."""
        ...

    async def set_paused(self, where: Where, paused: bool, now: datetime) -> bool:
        """Pause or resume the channel's schedule; False when it has none."""
        ...


class DailyStore(Protocol):
    """The channel rows, streak mode, role rewards and posts around the daily question."""

    async def channel_pk(self, where: Where) -> int:
        """The channel's id (its row made if new), in a transaction of its own."""
        ...

    async def where_of(self, channel_pk: int) -> Where:
        """The address of a known channel (recovering a claim of an unscheduled channel)."""
        ...

    # ---- streak mode (in the caller's transaction) -----------------------------------------
    async def streak_mode(self, tx: Tx, where: Where) -> tuple[int, int | None]:
        """The channel's id (its row made if new) and its weekly-streak target (None: daily)."""
        ...

    async def scheduled_days(self, tx: Tx, channel_pk: int) -> int | None:
        """How many weekdays the channel's schedule posts on; None without a schedule."""
        ...

    async def set_streak_mode(self, tx: Tx, channel_pk: int, per_week: int | None, *,
                              restart: bool) -> None:
        """Store the target; ``restart`` starts every streak of the channel again from 0
        (the unit changed, so old counts mean something else)."""
        ...

    # ---- role rewards (in the caller's transaction) ----------------------------------------
    async def reward_lines(self, tx: Tx, channel_pk: int) -> list[RewardLine]: ...

    async def reward_for_role(self, tx: Tx, channel_pk: int, role_id: str) -> int | None:
        """The id of the channel's reward granting ``role_id``, if any."""
        ...

    async def reward_count(self, tx: Tx, channel_pk: int) -> int: ...

    async def add_reward(self, tx: Tx, channel_pk: int, *, role_id: str, kind: str, threshold: int,
                         topic: str | None, created_by: str, now: datetime) -> None: ...

    async def change_reward(self, tx: Tx, reward_id: int, *, kind: str, threshold: int,
                            topic: str | None) -> None:
        """A new milestone for the role; the problem Discord reported with it is cleared."""
        ...

    async def remove_reward(self, tx: Tx, reward_id: int) -> None: ...

    # ---- today's post and a claim's post (in the caller's transaction) --------------------
    async def post_of_day(self, tx: Tx, key: DailyKey) -> PostLike | None:
        """The post a day's claim recorded, if it got that far."""
        ...

    async def answered(self, tx: Tx, post_id: int, member_id: int) -> bool: ...

    async def claim_row(self, tx: Tx, key: DailyKey) -> ClaimRow | None: ...

    async def post(self, tx: Tx, post_id: int) -> PostLike | None: ...

    async def record_post(self, tx: Tx, key: DailyKey, post_id: int) -> None:
        """Store the chosen post with the claim, so a retry reuses it."""
        ...
