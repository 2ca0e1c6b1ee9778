"""The FSRS cards behind bot.core.progress.srs' ``CardStore``, in the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.kinds import PostKind
from bot.storage.db import core_connection
from bot.storage.hot_statements import upsert_srs_card
from bot.storage.models import Answer, Post, SrsCard
from bot.storage.progress_queries import on_open_question

# Built once: constructing a statement per click costs more than running it.
_CARD_QUERY = select(SrsCard.state, SrsCard.reps).where(
    SrsCard.member_id == bindparam("member_id"), SrsCard.question_id == bindparam("question_id")
)


class StoredCards:
    """``CardStore``: the queries spaced repetition always made."""

    async def card(self, session: AsyncSession, member_id: int,
                   question_id: str) -> tuple[str, int | None] | None:
        conn = await core_connection(session)
        row = (await conn.execute(_CARD_QUERY, {"member_id": member_id, "question_id": question_id})).first()
        return (row.state, row.reps) if row else None

    async def save(self, session: AsyncSession, values: dict[str, Any]) -> None:
        await upsert_srs_card(session, values)

    async def due_ids(self, session: AsyncSession, member_id: int, now: datetime,
                      limit: int | None) -> list[str]:
        rows = await session.scalars(
            select(SrsCard.question_id)
            .where(SrsCard.member_id == member_id, SrsCard.due <= now)
            .order_by(SrsCard.due)
            .limit(limit)
        )
        return list(rows)

    async def known_ids(self, session: AsyncSession, member_id: int) -> set[str]:
        rows = await session.scalars(select(SrsCard.question_id).where(SrsCard.member_id == member_id))
        return set(rows)

    async def due_count(self, session: AsyncSession, member_id: int, now: datetime) -> int:
        count = await session.scalar(
            select(func.count()).where(SrsCard.member_id == member_id, SrsCard.due <= now))
        return int(count or 0)

    async def reviews_since(self, session: AsyncSession, member_id: int, start: datetime) -> int:
        count = await session.scalar(
            select(func.count()).select_from(Answer).join(Post, Post.id == Answer.post_id)
            .where(Answer.member_id == member_id, Post.kind == PostKind.REVIEW, Answer.answered_at >= start))
        return int(count or 0)

    async def answer_history(self, session: AsyncSession, member_id: int) -> list[tuple[str, bool, bool]]:
        rows = (await session.execute(
            select(Answer.question_id, Answer.correct, on_open_question())
            .where(Answer.member_id == member_id).order_by(Answer.answered_at, Answer.id)
        )).all()
        return [(qid, correct, is_open) for qid, correct, is_open in rows]
