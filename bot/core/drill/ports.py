"""What the feature areas beside the drill (practice, boards, rounds) use of it, as ports,
and what the drill itself keeps in storage (``DrillStores``).

The drill builds them and passes itself, but they type against these protocols and import
nothing of ``bot.core.drill.service``, so the drill can import them without a cycle.
The drill builds no store: the wiring root (``bot.app.build_drill``) builds ``DrillStores``
once (``bot.storage.drill_stores``) and hands it in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from bot.core.stores import Transactions

if TYPE_CHECKING:
    import random

    from bot.core.answers.ports import AnswerStores
    from bot.core.community_banks.shelf import Shelf
    from bot.core.content.bank import Library
    from bot.core.domain.clock import Clock
    from bot.core.domain.identity import Where, Who
    from bot.core.domain.messages import Message
    from bot.core.drill.selection import ServedLog
    from bot.core.learning.online import Belief
    from bot.core.learning.quality_desk import QualityData
    from bot.core.learning.report_desk import ReportStore
    from bot.core.mock.ports import MockStore
    from bot.core.progress.ports import GroupStore, ProgressReads
    from bot.core.progress.srs import CardStore
    from bot.core.publisher import Publisher
    from bot.core.quizzes.sequence import QuizStore
    from bot.core.reveal.ports import RevealStore
    from bot.core.stores import Identities, RoundStore, Tx

T = TypeVar("T")


class Basics(Protocol):
    """The database's transactions (opaque: the storage ports read them), the members and
    channels in them, the banks and the community shelf over them, the clock, the random
    source."""

    @property
    def db(self) -> Transactions: ...

    @property
    def identities(self) -> Identities: ...

    @property
    def library(self) -> Library: ...

    @property
    def shelf(self) -> Shelf: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random: ...


class Asked(Protocol):
    """A question posted to a channel: its post and the platform's reference to the message."""

    @property
    def post_id(self) -> int: ...

    @property
    def ref(self) -> str: ...


class ChannelQuestions(Basics, Protocol):
    """A live round also posts questions to the channel and reveals them, as the drill does."""

    async def ask(
        self, where: Where, publisher: Publisher, *, kind: str = ..., topic: str | None = None,
        reveal_after: timedelta | None = ..., round_id: int | None = None,
        local_date: object = None, source: str | None = None,
    ) -> Asked: ...

    async def reveal_post(self, post_id: int, where: Where, publisher: Publisher) -> Message: ...


# ---- what the drill keeps in storage ----------------------------------------------------------


class ClickTransactions(Transactions, Protocol):
    """The drill's transactions (``bot.storage.db.Database``), and a click's own."""

    async def click(self, work: Callable[[Tx], Awaitable[T]], *, raw_first: bool = False) -> T:
        """``work`` in one write transaction, run again whole after a transient error (a
        database restart), so it must be idempotent. ``raw_first``: where the database has raw
        writes (``bot.storage.hot_writes``, the fast pick path) try them first, and the
        session when the work needs it."""
        ...


@dataclass(frozen=True)
class PostFacts:
    """What a reveal reads of its post besides the results: which question, what kind of
    post, and its channel (None: a private one)."""

    question_id: str
    kind: str
    channel_id: int | None


class DrillPosts(Protocol):
    """Channel posts as the drill asks and reveals them (``bot.storage.drill_posts``)."""

    async def channel_pk(self, tx: Tx, where: Where) -> int:
        """The channel's row id in the caller's transaction (its rows made on first use)."""
        ...

    async def set_ref(self, post_id: int, ref: str) -> None:
        """Keep the platform's reference to a post just published: reveals edit that message."""
        ...

    async def extras_after(self, where: Where, post_id: int, now: datetime) -> list[tuple[int, str | None, bool]]:
        """(post id, platform ref, closed at ``now``) of the extra questions posted in the
        channel after ``post_id``, newest first."""
        ...

    async def facts(self, tx: Tx, post_id: int) -> PostFacts:
        """The post (it exists) in the caller's transaction."""
        ...

    async def answerers(self, post_id: int) -> list[int]:
        """The members who answered the post: a reveal moved their estimates."""
        ...

    async def wheres(self, tx: Tx, post_ids: Sequence[int]) -> dict[int, Where]:
        """The channels of many posts (the reveal sweep's) in the caller's transaction, in
        few reads however many: the posts without a channel are absent."""
        ...


@dataclass(frozen=True)
class RoleRewardRule:
    """An admin's milestone role in a channel (``progress.rewards``)."""

    id: int
    kind: str  # streak, solved or readiness
    role_id: str
    threshold: int
    topic: str | None


@dataclass(frozen=True)
class RewardCandidate:
    """A member the reward looks at, with what its milestone is measured on: ``count`` (the
    current streak, or challenges solved) or, for readiness, the member's ``abilities``."""

    member_id: int
    user_id: str
    count: int = 0
    abilities: Mapping[str, Belief] | None = None


@dataclass(frozen=True)
class RewardStanding:
    """A reward, the members holding its role, and the members it looks at."""

    reward: RoleRewardRule
    holders: frozenset[int]
    candidates: Sequence[RewardCandidate]


class RoleGrants(Protocol):
    """Milestone roles: the rewards, who holds them, and what they are measured on
    (``bot.storage.role_grants``). Each call is its own transaction."""

    async def member_id(self, who: Who) -> int | None:
        """The member's row id, None before the member ever played (nothing is made)."""
        ...

    async def channels_rewarding(self, platform: str, workspace: str,
                                 kinds: Collection[str]) -> list[tuple[int, str, str | None]]:
        """(row id, platform channel id, name) of the workspace's channels with a reward of
        ``kinds``, by row id."""
        ...

    async def standings(self, channel_pk: int, kinds: Collection[str],
                        members: Collection[int] | None) -> list[RewardStanding]:
        """The channel's rewards of ``kinds`` in one read, each with the members it looks at:
        the channel's daily players (streak, readiness) or the workspace's solvers (solved);
        ``members``: only those (readiness: any member of the workspace)."""
        ...

    async def record(self, reward_id: int, member_id: int, *, held: bool, now: datetime) -> None:
        """The role was given (``held``) or taken: record it, once across replicas."""
        ...

    async def set_problem(self, reward_id: int, problem: str | None) -> None:
        """Why the reward's role cannot be given now (None: it can), for admins."""
        ...


# The database the drill runs on: the wiring root knows it as ``bot.storage.db.Database`` (a
# ``Drill[Database]`` hands it to the stores it builds there); the core, as ``ClickTransactions``.
DB = TypeVar("DB", bound=ClickTransactions)


@dataclass(frozen=True)
class DrillStores(Generic[DB]):
    """The storage the drill and the areas it builds (practice, boards, rounds, /mock, reports,
    the quality lab) read and write, built once by the wiring root and handed in."""

    db: DB
    shelf: Shelf  # the community questions, over their rows (/mock's store reads the same shelf)
    identities: Identities  # members' and channels' rows, made on first sight
    posts: RevealStore  # channel posts as created, viewed and revealed (bot.core.reveal)
    channel_posts: DrillPosts  # the drill's own reads and writes of those posts
    role_grants: RoleGrants
    served: ServedLog
    progress: ProgressReads
    groups: GroupStore
    cards: CardStore
    quizzes: QuizStore
    answers: AnswerStores  # the click path's (over the same cards, quizzes and progress)
    rounds: RoundStore
    mocks: MockStore
    reports: ReportStore
    quality_data: QualityData
