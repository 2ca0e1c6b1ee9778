"""Spaced repetition: one FSRS card per member and question.

Correct MCQ answers rate Good and wrong ones Again; flashcards use the member's own grade.
"""

from __future__ import annotations

import zlib
from datetime import datetime

from fsrs import Card, Rating, Scheduler
from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.model.clock import as_utc
from bot.storage.db import core_connection
from bot.storage.hot_statements import upsert_srs_card
from bot.storage.models import SrsCard

# Built once: constructing a statement per click costs more than running it.
_CARD_QUERY = select(SrsCard.state, SrsCard.reps).where(
    SrsCard.member_id == bindparam("member_id"), SrsCard.question_id == bindparam("question_id")
)

# No fuzzing: due dates must be reproducible in tests and across replicas.
SCHEDULER = Scheduler(enable_fuzzing=False)


def rating_for(correct: bool) -> Rating:
    return Rating.Good if correct else Rating.Again


async def review(
    session: AsyncSession, member_id: int, question_id: str, rating: Rating, when: datetime
) -> datetime:
    """Apply one review to the member's card (creating it) and return the next due time."""
    conn = await core_connection(session)
    row = (await conn.execute(_CARD_QUERY, {"member_id": member_id, "question_id": question_id})).first()
    values = next_card(member_id, question_id, row.state if row else None, row.reps if row else 0, rating, when)
    await upsert_srs_card(session, values)
    return values["due"]


def next_card(
    member_id: int, question_id: str, state: str | None, reps: int | None, rating: Rating, when: datetime
) -> dict[str, object]:
    """The card row after one review of the card stored as ``state`` (None: a new card)."""
    # an explicit id: fsrs otherwise derives it from the clock and sleeps 1 ms to keep it unique
    card = Card.from_json(state) if state else Card(card_id=zlib.crc32(f"{member_id}:{question_id}".encode()))
    card, _log = SCHEDULER.review_card(card, rating, as_utc(when))
    return {
        "member_id": member_id, "question_id": question_id, "state": card.to_json(),
        "due": as_utc(card.due), "reps": (reps or 0) + 1,
    }


async def due_question_ids(
    session: AsyncSession, member_id: int, now: datetime, limit: int
) -> list[str]:
    rows = await session.scalars(
        select(SrsCard.question_id)
        .where(SrsCard.member_id == member_id, SrsCard.due <= now)
        .order_by(SrsCard.due)
        .limit(limit)
    )
    return list(rows)


async def known_question_ids(session: AsyncSession, member_id: int) -> set[str]:
    rows = await session.scalars(select(SrsCard.question_id).where(SrsCard.member_id == member_id))
    return set(rows)
