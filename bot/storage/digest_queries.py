"""Reads behind the weekly digest (``bot.core.weekly.ports.DigestReads``), in the caller's
transaction: the queries the digest always made."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.learning.online import Belief
from bot.core.weekly.ports import DigestAnswer, DigestPost
from bot.storage import estimates, progress_queries
from bot.storage.models import Answer, Channel, Post, Streak
from bot.storage.visibility import on_open_question


class StoredDigestReads:
    """``DigestReads``."""

    async def revealed_answers(self, session: AsyncSession, channel_pk: int, since: datetime,
                               until: datetime) -> list[DigestAnswer]:
        rows = await session.execute(
            select(Answer.member_id, Answer.answered_at, Answer.points, Answer.correct, Answer.topic,
                   Answer.post_id)
            .where(Answer.channel_id == channel_pk, Answer.answered_at >= since, Answer.answered_at < until,
                   ~on_open_question()))
        return [DigestAnswer(*r) for r in rows.tuples()]

    async def names_of(self, session: AsyncSession, member_ids: list[int]) -> dict[int, str]:
        return await progress_queries.names_of(session, member_ids)

    async def running_streaks(self, session: AsyncSession, channel_pk: int) -> list[tuple[int, int]]:
        rows = await session.execute(
            select(Streak.member_id, Streak.current).where(Streak.channel_id == channel_pk, Streak.current > 0))
        return [(m, c) for m, c in rows.tuples()]

    async def question_counts(self, session: AsyncSession, channel_pk: int, since: datetime,
                              until: datetime) -> list[tuple[str, str, int, int]]:
        rows = await session.execute(
            select(Answer.topic, Answer.question_id, func.count(), func.sum(case((Answer.correct, 1), else_=0)))
            .where(Answer.channel_id == channel_pk, Answer.answered_at >= since, Answer.answered_at < until,
                   ~on_open_question())
            .group_by(Answer.topic, Answer.question_id))
        return [(t, q, int(n), int(ok or 0)) for t, q, n, ok in rows]

    async def workspace_of(self, session: AsyncSession, channel_pk: int) -> int | None:
        return await session.scalar(select(Channel.workspace_id).where(Channel.id == channel_pk))

    async def difficulties(self, session: AsyncSession, labels: Mapping[str, int],
                           workspace_id: int) -> dict[str, Belief]:
        return await estimates.read_difficulties(session, labels, workspace_id)

    async def post(self, session: AsyncSession, post_id: int) -> DigestPost | None:
        post = await session.get(Post, post_id)
        return None if post is None else DigestPost(post.question_id, post.opened_at, post.platform_ref)

    async def streak_per_week(self, session: AsyncSession, channel_pk: int) -> int | None:
        return await session.scalar(select(Channel.streak_per_week).where(Channel.id == channel_pk))
