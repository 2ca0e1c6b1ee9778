"""Quizzes and reviews behind bot.core.quizzes.sequence's ``QuizStore``, in the caller's
transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Library
from bot.core.learning.online import OnlineCalibrator
from bot.core.quizzes.sequence import QuizRow
from bot.storage.estimates import stored_calibrator
from bot.storage.models import Answer, Member, Post, Quiz
from bot.storage.posts import StoredPosts
from bot.storage.progress_queries import member_topic_accuracy


class StoredQuizzes:
    """``QuizStore``: the queries the private sequences always made; a quiz is its ORM row,
    changed in the session and written when it flushes, as before."""

    def __init__(self, posts: StoredPosts) -> None:
        self.posts = posts  # PostStore: a quiz's posts, the drill's

    async def seen_ids(self, session: AsyncSession, member_id: int) -> set[str]:
        return set(
            await session.scalars(select(Answer.question_id).where(Answer.member_id == member_id).distinct())
        )

    async def topic_accuracy(self, session: AsyncSession, member_id: int) -> dict[str, tuple[float, int]]:
        return await member_topic_accuracy(session, member_id)

    async def calibrator(self, session: AsyncSession, library: Library, member_id: int) -> OnlineCalibrator:
        workspace_id = await session.scalar(select(Member.workspace_id).where(Member.id == member_id))
        return await stored_calibrator(session, library, member_id, int(workspace_id or 0))

    async def create(self, session: AsyncSession, *, member_id: int, mode: str, question_ids: str,
                     topic: str | None, started_at: datetime) -> Quiz:
        quiz = Quiz(member_id=member_id, mode=mode, question_ids=question_ids, position=0,
                    topic=topic, started_at=started_at)
        session.add(quiz)
        await session.flush()
        return quiz

    async def get(self, session: AsyncSession, quiz_id: int) -> Quiz | None:
        return await session.get(Quiz, quiz_id)

    async def post(self, session: AsyncSession, post_id: int) -> Post | None:
        return await session.get(Post, post_id)

    async def latest_post(self, session: AsyncSession, quiz_id: int) -> Post | None:
        return await session.scalar(
            select(Post).where(Post.quiz_id == quiz_id).order_by(Post.id.desc()).limit(1)
        )

    async def index_of(self, session: AsyncSession, quiz_id: int, post_id: int) -> int:
        return (
            await session.scalar(select(func.count()).where(Post.quiz_id == quiz_id, Post.id < post_id))
            or 0
        )

    async def tally(self, session: AsyncSession, quiz_id: int) -> tuple[int, int]:
        row = (
            await session.execute(
                select(func.count(), func.sum(case((Answer.correct, 1), else_=0)))
                .join(Post, Post.id == Answer.post_id)
                .where(Post.quiz_id == quiz_id)
            )
        ).first()
        return (row[0] or 0, int(row[1] or 0)) if row else (0, 0)

    async def move_to(self, session: AsyncSession, quiz: QuizRow, position: int) -> None:
        assert isinstance(quiz, Quiz)  # the row ``create`` or ``get`` gave
        quiz.position = position

    async def finish(self, session: AsyncSession, quiz: QuizRow, when: datetime | None, *,
                     flush: bool) -> None:
        assert isinstance(quiz, Quiz)
        quiz.finished_at = quiz.finished_at or when
        if flush:
            await session.flush()
