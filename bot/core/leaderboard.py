"""Leaderboards: channel, workspace or study group, over a week, a month or all time.

Ranking: points, then accuracy, then whoever reached their score first (earliest last scoring
answer). Only channel posts count; personal practice never reaches a leaderboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Float, Subquery, case, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.periods import Scope
from bot.storage.models import Answer, GroupMember, Member


@dataclass(frozen=True)
class Row:
    rank: int
    member_id: int
    name: str
    points: int
    correct: int
    answered: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


def _ranked(
    scope: Scope, scope_id: int, since: datetime | None, workspace_id: int | None = None
) -> Subquery:
    filters = [Answer.channel_id.is_not(None)]
    if scope is Scope.CHANNEL:
        filters.append(Answer.channel_id == scope_id)
    elif scope is Scope.WORKSPACE:
        filters.append(Answer.workspace_id == scope_id)
    else:
        filters.append(Answer.workspace_id == workspace_id)
        filters.append(
            Answer.member_id.in_(select(GroupMember.member_id).where(GroupMember.group_id == scope_id))
        )
    if since is not None:
        filters.append(Answer.answered_at >= since)
    correct = func.sum(case((Answer.correct, 1), else_=0))
    answered = func.count()
    points = func.sum(Answer.points)
    reached = func.max(case((Answer.points > 0, Answer.answered_at), else_=None))
    accuracy = cast(correct, Float) / answered
    agg = (
        select(
            Answer.member_id.label("member_id"),
            points.label("points"),
            correct.label("correct"),
            answered.label("answered"),
            func.row_number()
            .over(order_by=(points.desc(), accuracy.desc(), reached.asc().nulls_last(), Answer.member_id))
            .label("rank"),
        )
        .where(*filters)
        .group_by(Answer.member_id)
    )
    return agg.subquery()


async def top(
    session: AsyncSession,
    scope: Scope,
    scope_id: int,
    since: datetime | None,
    *,
    limit: int = 10,
    workspace_id: int | None = None,
) -> list[Row]:
    ranked = _ranked(scope, scope_id, since, workspace_id)
    rows = await session.execute(
        select(ranked, Member.display_name)
        .join(Member, Member.id == ranked.c.member_id)
        .where(ranked.c.rank <= limit)
        .order_by(ranked.c.rank)
    )
    return [
        Row(r.rank, r.member_id, r.display_name, int(r.points or 0), int(r.correct or 0), r.answered)
        for r in rows
    ]


async def rank_of(
    session: AsyncSession,
    scope: Scope,
    scope_id: int,
    since: datetime | None,
    member_id: int,
    *,
    workspace_id: int | None = None,
) -> Row | None:
    ranked = _ranked(scope, scope_id, since, workspace_id)
    row = (
        await session.execute(
            select(ranked, Member.display_name)
            .join(Member, Member.id == ranked.c.member_id)
            .where(ranked.c.member_id == member_id)
        )
    ).first()
    if row is None:
        return None
    return Row(row.rank, row.member_id, row.display_name, int(row.points or 0), int(row.correct or 0), row.answered)
