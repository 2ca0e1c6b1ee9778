"""What posts and their reveals need from storage, as the core states it (issue 32): making a
post, reading it back, and the reads and writes of a reveal (``bot.storage.posts.StoredPosts``).

Every method runs inside the caller's transaction (a ``Tx``), so a reveal stays one transaction
under its post's row lock. The rows handed out here (a post, a streak) are read through the
protocols below and handed back to the store to be changed; the core never writes them itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.core.content.bank import Question
    from bot.core.domain.scoring import StreakState
    from bot.core.stores import Tx


class PostLike(Protocol):
    """What the rules read from a post: its stored row or the snapshot of the hot answer path."""

    @property
    def id(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def question_id(self) -> str: ...

    @property
    def choice_order(self) -> str:
        """The shuffled order of the choices, comma separated ("2,0,3,1")."""
        ...

    @property
    def channel_id(self) -> int | None: ...

    @property
    def member_id(self) -> int | None: ...

    @property
    def quiz_id(self) -> int | None: ...

    @property
    def opened_at(self) -> datetime: ...

    @property
    def closes_at(self) -> datetime | None: ...

    @property
    def closed_at(self) -> datetime | None: ...

    @property
    def platform_ref(self) -> str | None: ...


class RevealedPost(PostLike, Protocol):
    """A post as its reveal reads it: locked, with whether it was settled and its local day."""

    @property
    def settled(self) -> bool: ...

    @property
    def local_date(self) -> date | None: ...


class StreakFields(Protocol):
    """A member's stored streak in a channel (``bot.core.domain.scoring.StreakState`` counts it)."""

    @property
    def current(self) -> int: ...

    @property
    def best(self) -> int: ...

    @property
    def last_post_id(self) -> int | None: ...

    @property
    def freezes(self) -> int | None: ...

    @property
    def freezes_used(self) -> int | None: ...

    @property
    def week_of(self) -> date | None: ...

    @property
    def week_answers(self) -> int | None: ...

    @property
    def week_done(self) -> bool | None: ...


@dataclass(frozen=True)
class PostSnapshot:
    """A post plus its channel's settings, read in one Core query on the hot answer path."""

    id: int
    kind: str
    question_id: str
    choice_order: str
    channel_id: int | None
    member_id: int | None
    quiz_id: int | None
    opened_at: datetime
    closes_at: datetime | None
    closed_at: datetime | None
    platform_ref: str | None
    channel_tz: str | None
    speed_bonus: bool
    streak_per_week: int | None = None  # the channel's weekly-streak mode (None: daily)


class PostStore(Protocol):
    """The posts (``bot.storage.posts.StoredPosts``), inside the caller's transaction."""

    async def add(
        self, tx: Tx, *, kind: str, question_id: str, choice_order: str, opened_at: datetime,
        channel_id: int | None, member_id: int | None, closes_at: datetime | None,
        round_id: int | None, quiz_id: int | None, local_date: object,
    ) -> PostLike:
        """A new open post, its id assigned (flushed), so the caller can name it at once."""
        ...

    async def snapshot(self, tx: Tx, post_id: int) -> PostSnapshot | None:
        """The post and its channel's settings in one query (None: no such post)."""
        ...

    async def answer_count(self, tx: Tx, post_id: int) -> int:
        """How many answered: the public view shows it before the reveal."""
        ...

    async def due(self, tx: Tx, now: datetime) -> list[int]:
        """Channel posts whose reveal time has passed but that are not revealed yet."""
        ...


class RevealStore(PostStore, Protocol):
    """A reveal's reads and writes, one query each (the sweep reveals many posts at once)."""

    async def claim(self, tx: Tx, post_id: int) -> RevealedPost | None:
        """The post, its row locked until the transaction ends (one reveal at a time)."""
        ...

    async def close(self, tx: Tx, post: RevealedPost, now: datetime) -> None:
        """Close the post now and credit its answers' points to the boards (exactly once)."""
        ...

    async def apply_estimates(self, tx: Tx, post_id: int, question: Question, now: datetime) -> None:
        """Move the stored estimates by the post's answers (once per post, under its lock)."""
        ...

    async def mark_settled(self, tx: Tx, post: RevealedPost) -> None:
        """The post's streaks and estimates are done: a later reveal settles nothing again."""
        ...

    async def streak_per_week(self, tx: Tx, channel_id: int) -> int | None:
        """The channel's weekly-streak mode (None or 0: daily streaks)."""
        ...

    async def streaks(self, tx: Tx, channel_id: int) -> dict[int, StreakFields]:
        """Every stored streak of the channel, by member."""
        ...

    async def save_streaks(self, tx: Tx, channel_id: int, held: Mapping[int, StreakFields],
                           news: Mapping[int, StreakState]) -> None:
        """Write the settled streaks: ``held`` are the rows ``streaks`` returned, changed in
        place; members without one get a new row."""
        ...

    async def previous_daily(self, tx: Tx, channel_id: int, post_id: int) -> int | None:
        """The channel's daily post before ``post_id`` (a daily streak skips none)."""
        ...

    async def answers(self, tx: Tx, post_id: int) -> dict[int, bool]:
        """Who answered the post, and whether right."""
        ...

    async def daily_dates(self, tx: Tx, channel_id: int, since: date, until: date) -> list[date | None]:
        """The local dates of the channel's daily posts in [since, until)."""
        ...

    async def daily_answer_counts(self, tx: Tx, channel_id: int, since: date, until: date) -> dict[int, int]:
        """Per member, their answers to the channel's daily posts dated in [since, until)."""
        ...

    async def choice_counts(self, tx: Tx, post_id: int) -> dict[int, int]:
        """The post's answers per choice (by the choice's original index)."""
        ...

    async def fastest_correct(self, tx: Tx, post_id: int) -> tuple[str, int] | None:
        """The name and response time of the fastest right answer (the earliest of equals)."""
        ...
