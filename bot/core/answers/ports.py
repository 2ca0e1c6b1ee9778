"""What recording an answer needs from storage, as the core states it (issue 32: the core owns
its ports). ``bot.storage.clicks.StoredClicks`` implements ``ClickStore``; the wiring builds it
once and hands it in with the card, quiz and progress stores (``AnswerStores``).

Every method runs inside the caller's transaction (``tx``, opaque here: see
``bot.core.stores.Tx``): a click is one short transaction, and on the raw click path
(``bot.storage.hot_writes``) that transaction is not an ORM session at all. How the answer is
written (one statement on PostgreSQL, a few on SQLite's exclusive write transaction) is the
store's business; the core states what an answer changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.core.content.bank import Question
    from bot.core.domain.clock import Clock
    from bot.core.domain.identity import Who
    from bot.core.progress.ports import ProgressReads, StreakRow
    from bot.core.progress.srs import CardStore
    from bot.core.quizzes.sequence import QuizStore
    from bot.core.reveal.posts import PostSnapshot
    from bot.core.stores import MemberRef, Tx

# The card row after this answer, from the member's stored card (state, reps; None, None: no
# card yet): ``bot.core.progress.srs.next_card`` with the answer's rating.
NextCard = Callable[[str | None, int | None], dict[str, Any]]

# Open channel posts kept by a transaction that keeps them: post id -> (monotonic expiry, snapshot)
Snapshots = dict[int, tuple[float, "PostSnapshot"]]


@dataclass(frozen=True, slots=True)
class ClickState:
    """The post clicked, and what the member's answer builds on, read together (one query)."""

    post: PostSnapshot
    card_state: str | None  # the member's spaced-repetition card before this answer
    card_reps: int | None
    streak: int | None  # the member's daily streak in the post's channel
    answered: int  # answers the post had before this one


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a pick's write did."""

    answer_id: int | None  # None: it did not count (answered before, or the post closed)
    answered: int  # the post's answer count after it
    streak: int | None  # the member's daily streak in the post's channel before it


class ClickStore(Protocol):
    """Answers, their cards and the posts' kept counts (``bot.storage.clicks.StoredClicks``)."""

    async def member(self, tx: Tx, who: Who, clock: Clock) -> MemberRef:
        """The member clicking (made on first sight, at ``clock``'s now); a member this
        process knows costs no query."""
        ...

    def snapshots(self, tx: Tx) -> Snapshots | None:
        """The snapshots of open channel posts this transaction may use instead of reading the
        post (PostgreSQL raw clicks: a second member's click then needs one round trip), or
        None where it keeps none."""
        ...

    async def click_state(self, tx: Tx, post_id: int, member_id: int) -> ClickState | None:
        """The post with its channel's settings, the member's card and streak and the post's
        answer count, in one read; None when the post does not exist."""
        ...

    async def choice_of(self, tx: Tx, post_id: int, member_id: int) -> int | None:
        """The choice the member already recorded for this post, if any."""
        ...

    async def record_pick(self, tx: Tx, answer: dict[str, Any], next_card: NextCard,
                          before: ClickState | None, *, simple: bool) -> Recorded:
        """Record the answer (only while its post is open, only the member's first), its
        spaced-repetition card and, on a channel post, the post's kept count, all only when
        it counts. ``before``: the click's read (None: a kept snapshot, the card, streak and
        count not read yet). ``simple`` False: the click needs more of the transaction after
        this write (a private post, a quiz, a weekly streak); a transaction that cannot give
        it gives up here, before anything is written, and the click runs again in one that can."""
        ...

    async def record_answer(self, tx: Tx, answer: dict[str, Any]) -> int | None:
        """Record the answer alone (a graded flashcard): its id, or None when it did not count."""
        ...

    async def close(self, tx: Tx, post_id: int, now: datetime) -> None:
        """A personal question is done once answered."""
        ...

    async def apply_revealed(self, tx: Tx, post_id: int, question: Question, now: datetime) -> None:
        """A private post's answer is revealed at once: the estimates move now, in this transaction."""
        ...

    async def streak(self, tx: Tx, member_id: int, channel_id: int) -> StreakRow | None:
        """The member's streak in the channel, as stored."""
        ...


@dataclass(frozen=True)
class AnswerStores:
    """Everything recording an answer reads and writes through, built once by the wiring."""

    clicks: ClickStore
    cards: CardStore  # a graded flashcard's review
    quizzes: QuizStore  # a quiz's next question or summary
    progress: ProgressReads  # the weekly streak line
