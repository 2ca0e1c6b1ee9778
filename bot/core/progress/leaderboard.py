"""Leaderboards: channel, workspace or study group, over a week, a month or all time.

Ranking: points, then accuracy, then whoever reached their score first (earliest last scoring
answer). Only channel posts count; personal practice never reaches a leaderboard. A question
counts from its reveal on: while it is open, a board would tell everyone who picked right.
The SQL lives in bot.storage.scores (all time reads totals credited at each reveal).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.progress.periods import Scope
from bot.storage import scores
from bot.storage.db import core_connection


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


def _params(
    scope: Scope, scope_id: int, since: datetime | None, workspace_id: int | None, **extra: Any
) -> dict[str, Any]:
    params: dict[str, Any] = dict(extra)
    if scope is Scope.GROUP:
        params.update(group_id=scope_id, workspace_id=workspace_id)
    else:
        params["scope_id"] = scope_id
    if since is not None:
        params["since"] = since
    return params


def _row(r: Any, rank: int) -> Row:
    return Row(rank, r.member_id, r.display_name, int(r.points or 0), int(r.correct or 0), int(r.answered))


async def top(
    session: AsyncSession,
    scope: Scope,
    scope_id: int,
    since: datetime | None,
    *,
    limit: int = 10,
    workspace_id: int | None = None,
    raw: bool = False,
) -> list[Row]:
    """The best ``limit`` members; ``raw`` recomputes all time from answers (for checks)."""
    conn = await core_connection(session)
    statement = scores.top_sql(scope.value, since is not None, raw=raw)
    result = await conn.execute(statement, _params(scope, scope_id, since, workspace_id, limit=limit))
    return [_row(r, i) for i, r in enumerate(result, start=1)]


async def rank_of(
    session: AsyncSession,
    scope: Scope,
    scope_id: int,
    since: datetime | None,
    member_id: int,
    *,
    workspace_id: int | None = None,
    raw: bool = False,
) -> Row | None:
    conn = await core_connection(session)
    statement = scores.rank_sql(scope.value, since is not None, raw=raw)
    params = _params(scope, scope_id, since, workspace_id, member_id=member_id)
    r = (await conn.execute(statement, params)).first()
    return None if r is None else _row(r, int(r.rank))
