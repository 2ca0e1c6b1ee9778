"""Spaced repetition: one FSRS card per member and question.

Correct MCQ answers rate Good and wrong ones Again; flashcards use the member's own grade.

A missed day must not turn into a wall: ``/review`` serves at most ``DUE_PER_DAY`` cards a
(UTC) day, most overdue first, and while more are due than that it adds no new cards, so a
backlog is worked off over the next days instead of at once (load balancing, as FSRS users ask).
"""

from __future__ import annotations

import zlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from fsrs import Card, Rating, Scheduler

from bot.core.domain.clock import as_utc

if TYPE_CHECKING:
    from bot.core.stores import Tx


class CardStore(Protocol):
    """The members' FSRS cards and their review answers (``bot.storage.srs_cards.StoredCards``),
    read and written inside the caller's transaction."""

    async def card(self, tx: Tx, member_id: int, question_id: str) -> tuple[str, int | None] | None:
        """(state, reps) of the member's card, None before its first review."""
        ...

    async def save(self, tx: Tx, values: dict[str, Any]) -> None:
        """Insert or replace the card ``next_card`` made."""
        ...

    async def due_ids(self, tx: Tx, member_id: int, now: datetime, limit: int | None) -> list[str]:
        """The member's cards due at ``now``, most overdue first, at most ``limit`` (None: all)."""
        ...

    async def known_ids(self, tx: Tx, member_id: int) -> set[str]: ...

    async def due_count(self, tx: Tx, member_id: int, now: datetime) -> int:
        """How many of the member's cards are due now."""
        ...

    async def reviews_since(self, tx: Tx, member_id: int, start: datetime) -> int:
        """Answers the member gave on review posts since ``start``."""
        ...

    async def answer_history(self, tx: Tx, member_id: int) -> list[tuple[str, bool, bool]]:
        """(question id, correct, on a channel post still open) of the member's answers, oldest
        first."""
        ...


DUE_PER_DAY = 20  # review cards served a day; a larger backlog waits for the next days

# No fuzzing: due dates must be reproducible in tests and across replicas.
SCHEDULER = Scheduler(enable_fuzzing=False)


def rating_for(correct: bool) -> Rating:
    return Rating.Good if correct else Rating.Again


async def review(
    cards: CardStore, tx: Tx, member_id: int, question_id: str, rating: Rating, when: datetime
) -> datetime:
    """Apply one review to the member's card (creating it) and return the next due time."""
    row = await cards.card(tx, member_id, question_id)
    values = next_card(member_id, question_id, row[0] if row else None, row[1] if row else 0, rating, when)
    await cards.save(tx, values)
    return values["due"]


def next_card(
    member_id: int, question_id: str, state: str | None, reps: int | None, rating: Rating, when: datetime
) -> dict[str, Any]:
    """The card row after one review of the card stored as ``state`` (None: a new card)."""
    # an explicit id: fsrs otherwise derives it from the clock and sleeps 1 ms to keep it unique
    card = Card.from_json(state) if state else Card(card_id=zlib.crc32(f"{member_id}:{question_id}".encode()))
    card, _log = SCHEDULER.review_card(card, rating, as_utc(when))
    return {
        "member_id": member_id, "question_id": question_id, "state": card.to_json(),
        "due": as_utc(card.due), "reps": (reps or 0) + 1,
    }


async def reviewed_today(cards: CardStore, tx: Tx, member_id: int, now: datetime) -> int:
    """Review answers the member gave since the start of ``now``'s UTC day."""
    start = as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return await cards.reviews_since(tx, member_id, start)


def review_allowance(reviewed: int) -> int:
    """Review cards still served today after ``reviewed`` of them."""
    return max(0, DUE_PER_DAY - reviewed)


def backlog_note(waiting: int) -> str:
    """What a member with more due cards than today's allowance reads."""
    cards = f"{waiting} more due card{'s' if waiting != 1 else ''}"
    return (f"{cards} wait for the next days: at most {DUE_PER_DAY} reviews a day, "
            "so a missed day is no wall.")


def done_for_today(waiting: int) -> str:
    """The reply to /review once today's allowance is spent."""
    return (f"You did your {DUE_PER_DAY} reviews for today. " + backlog_note(waiting)
            + " Try /quiz for more practice.")


async def deck_question_ids(cards: CardStore, tx: Tx, member_id: int, now: datetime) -> dict[str, str]:
    """The questions of a member's Anki export, each with why it is in: ``missed`` (the latest
    revealed answer was wrong) or ``due`` (its card is due). A question the member answered on a
    channel post still open is left out: its back side would give away the answer."""
    rows = await cards.answer_history(tx, member_id)
    pending = {qid for qid, _, is_open in rows if is_open}
    latest = {qid: bool(correct) for qid, correct, is_open in rows if not is_open}
    deck = {qid: "missed" for qid, correct in latest.items() if not correct}
    for qid in await cards.due_ids(tx, member_id, now, None):
        deck.setdefault(qid, "due")
    return {qid: why for qid, why in deck.items() if qid not in pending}
