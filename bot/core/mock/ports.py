"""What /mock needs from storage, as the core states it (issue 32: the core owns its ports).

``bot.storage.mocks`` implements it; a transaction (``MockTx``) is one unit of work for one
member: the desk reads and changes plain ``MockState``/``ItemState`` values and saves them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from bot.core.content.bank import Question
from bot.core.content.challenges import Challenge
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.posting.claims import ClaimStore


@dataclass
class MockState:
    id: int
    member_id: int
    track: str
    minutes: int
    position: int
    started_at: datetime
    deadline_at: datetime
    finished_at: datetime | None = None
    ready_before: float | None = None
    ready_after: float | None = None
    score: float | None = None


@dataclass
class ItemState:
    idx: int
    kind: str  # mcq | explain | code
    ref: str  # question or challenge id
    topic: str
    post_id: int | None = None
    shown_at: datetime | None = None
    answered_at: datetime | None = None
    answer: str | None = None
    ticks: str = ""
    score: float | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Picked:
    """A recorded MCQ pick: whether it counted (a double click does not), and if right."""

    recorded: bool
    correct: bool
    refusal: Message | None = None


class MockTx(Protocol):
    member_id: int

    async def open_mock(self) -> MockState | None: ...
    async def mock(self, mock_id: int) -> MockState | None: ...
    async def items(self, mock_id: int) -> list[ItemState]: ...
    async def create(self, state: MockState, items: Sequence[ItemState]) -> int: ...
    async def save(self, state: MockState, items: Sequence[ItemState]) -> None: ...
    async def claim(self, mock_id: int, end: datetime) -> bool:
        """Set ``finished_at`` if nobody has: True for the one caller that did."""
        ...
    async def new_post(self, question: Question, rng: random.Random) -> int: ...
    async def order_of(self, post_id: int) -> list[int]: ...
    async def record_pick(self, post_id: int, position: int) -> Picked: ...
    async def record_grade(self, post_id: int, grade: int) -> None: ...
    async def review_again(self, question_id: str) -> None:
        """A miss (unanswered when the mock ended) into the member's FSRS deck."""
        ...
    async def readiness(self) -> float | None: ...
    async def topic_readiness(self) -> dict[str, float] | None:
        """Expected share right per topic (None: too little data), as /stats computes it."""
        ...
    async def answer_times(self, before: datetime) -> list[tuple[str, int]]:
        """(question id, response ms) of the member's answers before ``before``."""
        ...
    async def seen(self) -> set[str]: ...
    async def ring_of(self, band: tuple[float, float]) -> Callable[[Question], int]: ...
    async def solved_challenges(self) -> set[str]: ...
    async def make_current(self, challenge: Challenge) -> None: ...
    async def finished(self) -> list[MockState]:
        """The member's ended mocks, oldest first (/stats charts their scores)."""
        ...
    async def interview_day(self) -> date | None: ...
    async def set_interview_day(self, day: date | None) -> None:
        """Store (None: clear) the member's interview date, and bring their reviews due after
        it to its eve at once."""
        ...
    async def community_tracks(self) -> str | None:
        """The tracks file the member's community uploaded (None: none)."""
        ...
    async def joined(self, group_mock_id: int) -> int | None:
        """The member's mock of group mock ``group_mock_id``, if they joined it."""
        ...
    async def join(self, group_mock_id: int, mock_id: int) -> bool:
        """Record mock ``mock_id`` as the member's for the group mock; False when they had
        joined already (a double click): the caller discards ``mock_id``."""
        ...
    async def discard(self, mock_id: int) -> None: ...


GroupKey = tuple[int, str]  # (group mock, "post" or "board"): a group mock's claim


@dataclass(frozen=True)
class GroupMockView:
    """A scheduled group mock, with its posts' state."""

    id: int
    where: Where
    track: str
    minutes: int
    starts_at: datetime
    closes_at: datetime
    timezone: str
    items: list[tuple[str, str, str]]  # (kind, ref, topic), fixed when scheduled
    cancelled: bool = False
    post_ref: str | None = None  # the announcement, once sent
    board_sent: bool = False
    takers: int = 0


@dataclass(frozen=True)
class Taker:
    """One member's result in a group mock, for its board."""

    user_id: str
    name: str
    score: float  # share of the marks, 0-1
    marks: float
    items: int
    seconds: float  # from pressing Start to the end of their mock


class GroupMockStore(Protocol):
    claims: ClaimStore[GroupKey, int]

    async def channel_timezone(self, where: Where) -> str: ...
    async def create(self, where: Where, track: str, minutes: int, starts_at: datetime, timezone: str,
                     items: Sequence[tuple[str, str, str]], by: str, now: datetime) -> int: ...
    async def upcoming(self, where: Where) -> list[GroupMockView]:
        """The channel's group mocks not cancelled whose board is not out yet, soonest first."""
        ...
    async def cancel(self, where: Where, group_mock_id: int, now: datetime) -> GroupMockView | None:
        """Cancel it if it is the channel's and its post has not been claimed; the view as it
        was (None: no such group mock here)."""
        ...
    async def get(self, group_mock_id: int) -> GroupMockView | None: ...
    async def due_posts(self, now: datetime) -> list[int]:
        """Group mocks whose start has come, still open, not cancelled, with no post claim."""
        ...
    async def due_boards(self, now: datetime) -> list[int]:
        """Group mocks closed whose post went out and whose board has no claim."""
        ...
    async def claim_of(self, claim_id: int) -> GroupKey | None: ...
    async def open_claim(self, claim_id: int, token: str, now: datetime) -> tuple[bool, datetime] | None:
        """Under the claim's fence: (retry, opened_at); the first call marks it opened. None
        when the claim is not ours any more, or its group mock was cancelled."""
        ...
    async def takers(self, group_mock_id: int) -> list[Taker]: ...
    async def open_sessions(self, group_mock_id: int) -> list[tuple[int, int]]:
        """(mock id, member id) of the group mock's sessions not ended yet."""
        ...


class MockStore(Protocol):
    def member(self, who: Who) -> AbstractAsyncContextManager[MockTx]:
        """A write transaction for ``who``'s mocks (the member row made if new)."""
        ...

    def member_id(self, member_id: int) -> AbstractAsyncContextManager[MockTx]: ...
    async def due(self, now: datetime) -> list[tuple[int, int]]:
        """(mock id, member id) of the running mocks past their deadline."""
        ...
    async def who(self, member_id: int) -> Who: ...
    async def set_community_tracks(self, who: Who, source: str) -> None:
        """Store (replace) the tracks file of ``who``'s community."""
        ...
    async def community_tracks(self, who: Who) -> str | None: ...
    async def bring_reviews_forward(self, now: datetime) -> int:
        """Every member with an interview date whose eve is still ahead: cards due after the
        eve brought to it (the scheduler's tick keeps fresh reviews in line). Cards moved."""
        ...
