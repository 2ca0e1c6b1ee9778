"""Posts and their reveals behind bot.core.reveal.ports' ``PostStore`` and ``RevealStore``,
in the caller's transaction.

A post and a streak are their ORM rows, handed to the core through its read-only protocols
and changed here, in the session, when the core hands them back: they are written when the
session flushes, as before. The statements of the hot paths are built once (module level).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Question
from bot.core.domain.kinds import CHANNEL_KINDS, PostKind
from bot.core.domain.scoring import StreakState
from bot.core.reveal.ports import PostSnapshot, RevealedPost, StreakFields
from bot.storage.db import core_connection
from bot.storage.estimates import apply_revealed
from bot.storage.models import Answer, Channel, Member, Post, Streak
from bot.storage.scores import credit_post

_SNAPSHOT_QUERY = (
    select(
        *(Post.__table__.c[f] for f in (
            "id", "kind", "question_id", "choice_order", "channel_id", "member_id", "quiz_id",
            "opened_at", "closes_at", "closed_at", "platform_ref",
        )),
        Channel.__table__.c.timezone.label("channel_tz"),
        Channel.__table__.c.speed_bonus,
        Channel.__table__.c.streak_per_week,
    )
    .select_from(Post.__table__.outerjoin(Channel.__table__, Channel.id == Post.channel_id))
    .where(Post.__table__.c.id == bindparam("post_id"))
)

_COUNT_QUERY = (
    select(func.count()).select_from(Answer.__table__).where(Answer.__table__.c.post_id == bindparam("post_id"))
)


def _row(post: RevealedPost) -> Post:
    assert isinstance(post, Post)  # what claim() handed out
    return post


class StoredPosts:
    """``RevealStore`` (and so ``PostStore``): the queries posts and reveals always made."""

    async def add(
        self, session: AsyncSession, *, kind: str, question_id: str, choice_order: str,
        opened_at: datetime, channel_id: int | None, member_id: int | None,
        closes_at: datetime | None, round_id: int | None, quiz_id: int | None, local_date: object,
    ) -> Post:
        post = Post(
            kind=kind,
            question_id=question_id,
            choice_order=choice_order,
            channel_id=channel_id,
            member_id=member_id,
            round_id=round_id,
            quiz_id=quiz_id,
            local_date=local_date,
            opened_at=opened_at,
            closes_at=closes_at,
            settled=False,
        )
        session.add(post)
        await session.flush()
        return post

    async def snapshot(self, session: AsyncSession, post_id: int) -> PostSnapshot | None:
        conn = await core_connection(session)
        row = (await conn.execute(_SNAPSHOT_QUERY, {"post_id": post_id})).first()
        if row is None:
            return None
        data = dict(row._mapping)
        data["speed_bonus"] = bool(data["speed_bonus"])
        return PostSnapshot(**data)

    async def answer_count(self, session: AsyncSession, post_id: int) -> int:
        conn = await core_connection(session)
        return (await conn.execute(_COUNT_QUERY, {"post_id": post_id})).scalar() or 0

    async def due(self, session: AsyncSession, now: datetime) -> list[int]:
        rows = await session.scalars(
            select(Post.id).where(
                Post.kind.in_(CHANNEL_KINDS),
                Post.settled.is_(False),
                Post.closes_at.is_not(None),
                Post.closes_at <= now,
            )
        )
        return list(rows)

    # ---- a reveal ----------------------------------------------------------------------------

    async def claim(self, session: AsyncSession, post_id: int) -> Post | None:
        return await session.get(Post, post_id, with_for_update=True)

    async def close(self, session: AsyncSession, post: RevealedPost, now: datetime) -> None:
        _row(post).closed_at = now
        await credit_post(session, post.id)

    async def apply_estimates(self, session: AsyncSession, post_id: int, question: Question,
                              now: datetime) -> None:
        await apply_revealed(session, post_id, question, now)

    async def mark_settled(self, session: AsyncSession, post: RevealedPost) -> None:
        _row(post).settled = True

    async def streak_per_week(self, session: AsyncSession, channel_id: int) -> int | None:
        return await session.scalar(select(Channel.streak_per_week).where(Channel.id == channel_id))

    async def streaks(self, session: AsyncSession, channel_id: int) -> dict[int, StreakFields]:
        return {
            row.member_id: row
            for row in await session.scalars(select(Streak).where(Streak.channel_id == channel_id))
        }

    async def save_streaks(self, session: AsyncSession, channel_id: int, held: Mapping[int, StreakFields],
                           news: Mapping[int, StreakState]) -> None:
        for member_id, new in news.items():
            row = held.get(member_id)
            if row is None:
                row = Streak(member_id=member_id, channel_id=channel_id)
                session.add(row)
            assert isinstance(row, Streak)  # what streaks() handed out
            row.current, row.best, row.last_post_id = new.current, new.best, new.last_post_id
            row.freezes, row.freezes_used = new.freezes, new.freezes_used
            row.week_of, row.week_answers, row.week_done = new.week_of, new.week_answers, new.week_done

    async def previous_daily(self, session: AsyncSession, channel_id: int, post_id: int) -> int | None:
        return await session.scalar(
            select(func.max(Post.id)).where(
                Post.channel_id == channel_id, Post.kind == PostKind.DAILY, Post.id < post_id
            )
        )

    async def answers(self, session: AsyncSession, post_id: int) -> dict[int, bool]:
        return {
            member: correct for member, correct in
            (await session.execute(select(Answer.member_id, Answer.correct).where(Answer.post_id == post_id))).all()
        }

    async def daily_dates(self, session: AsyncSession, channel_id: int, since: date,
                          until: date) -> list[date | None]:
        return list(await session.scalars(select(Post.local_date).where(
            Post.channel_id == channel_id, Post.kind == PostKind.DAILY,
            Post.local_date >= since, Post.local_date < until)))

    async def daily_answer_counts(self, session: AsyncSession, channel_id: int, since: date,
                                  until: date) -> dict[int, int]:
        return dict((await session.execute(
            select(Answer.member_id, func.count()).join(Post, Post.id == Answer.post_id)
            .where(Post.channel_id == channel_id, Post.kind == PostKind.DAILY,
                   Post.local_date >= since, Post.local_date < until)
            .group_by(Answer.member_id))).tuples().all())

    async def choice_counts(self, session: AsyncSession, post_id: int) -> dict[int, int]:
        return {
            choice: count for choice, count in
            (
                await session.execute(
                    select(Answer.choice, func.count()).where(Answer.post_id == post_id).group_by(Answer.choice)
                )
            ).all()
        }

    async def fastest_correct(self, session: AsyncSession, post_id: int) -> tuple[str, int] | None:
        row = (
            await session.execute(
                select(Member.display_name, Answer.response_ms)
                .join(Member, Member.id == Answer.member_id)
                .where(Answer.post_id == post_id, Answer.correct.is_(True))
                .order_by(Answer.response_ms, Answer.id)
                .limit(1)
            )
        ).first()
        return (row[0], row[1]) if row else None
