"""Board SQL: revealed totals per channel and workspace, and the raw board over answers.

A question's points reach the boards when it is revealed, never while it is open (the picks
are private until then). ``credit_post`` adds a just-revealed post's answers to the all-time
totals (``channel_scores``, ``workspace_scores``) in the reveal's transaction, so all-time
boards read one small row per member instead of aggregating every answer. Week and month
boards aggregate answers through the covering indexes and skip answers of open posts.

Every statement is plain SQL shared by SQLite (3.35+) and PostgreSQL, compiled once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import TextualSelect, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.periods import Scope
from bot.core.progress.leaderboard import Row
from bot.storage.db import core_connection
from bot.storage.models import ChannelScore, Member

_TOTAL_COLUMNS = "points, correct, answered, reached_at"
_CORRECT = "CASE WHEN {a}correct THEN 1 ELSE 0 END"
_REACHED = "CASE WHEN {a}points > 0 THEN {a}answered_at END"

# keep the later of two reached_at values, where either may be NULL (never scored)
_LATER = (
    "CASE WHEN excluded.reached_at IS NULL THEN {t}.reached_at "
    "WHEN {t}.reached_at IS NULL OR excluded.reached_at > {t}.reached_at THEN excluded.reached_at "
    "ELSE {t}.reached_at END"
)


def _credit_sql(table: str, key: str, where: str) -> str:
    """Add answers matching ``where`` to ``table`` (keyed by ``key`` and member)."""
    return (
        f"INSERT INTO {table} ({key}, member_id, {_TOTAL_COLUMNS}) "
        f"SELECT {key}, member_id, SUM(points), SUM({_CORRECT.format(a='')}), COUNT(*), "
        f"MAX({_REACHED.format(a='')}) "
        f"FROM answers WHERE channel_id IS NOT NULL AND {where} GROUP BY {key}, member_id "
        f"ON CONFLICT ({key}, member_id) DO UPDATE SET "
        f"points = {table}.points + excluded.points, "
        f"correct = {table}.correct + excluded.correct, "
        f"answered = {table}.answered + excluded.answered, "
        f"reached_at = {_LATER.format(t=table)}"
    )


_CREDIT_POST = [
    text(_credit_sql(table, key, "post_id = :post_id"))
    for table, key in (("channel_scores", "channel_id"), ("workspace_scores", "workspace_id"))
]


_REBUILD = [
    (f"DELETE FROM {table}", text(_credit_sql(
        table, key, "post_id IN (SELECT id FROM posts WHERE closed_at IS NOT NULL)"
    )))
    for table, key in (("channel_scores", "channel_id"), ("workspace_scores", "workspace_id"))
]


async def rebuild_totals(conn: Any) -> None:
    """Recompute every total from the answers of revealed posts (bulk loads, repairs)."""
    for delete, insert in _REBUILD:
        await conn.execute(text(delete))
        await conn.execute(insert)


async def credit_post(session: AsyncSession, post_id: int) -> None:
    """Add a post's answers to the all-time totals; call exactly once, when it is revealed."""
    conn = await core_connection(session)
    for statement in _CREDIT_POST:
        await conn.execute(statement, {"post_id": post_id})


# ---- reading boards -------------------------------------------------------------------

# open channel posts: their answers are not on any board yet
_OPEN = "SELECT p.id FROM posts p WHERE p.closed_at IS NULL AND p.channel_id IS NOT NULL"
_IN_GROUP = "SELECT g.member_id FROM group_members g WHERE g.group_id = :group_id"


def _raw_source(scope: str, since: bool) -> str:
    """Per-member aggregate of revealed answers in a scope, optionally since an instant."""
    filters = {
        "channel": ["a.channel_id = :scope_id"],
        "workspace": ["a.workspace_id = :scope_id", "a.channel_id IS NOT NULL"],
        "group": [
            "a.workspace_id = :workspace_id", "a.channel_id IS NOT NULL", f"a.member_id IN ({_IN_GROUP})"
        ],
    }[scope]
    if since:
        filters.append("a.answered_at >= :since")
    filters.append(f"a.post_id NOT IN ({_OPEN})")
    return (
        f"SELECT a.member_id AS member_id, SUM(a.points) AS points, "
        f"SUM({_CORRECT.format(a='a.')}) AS correct, COUNT(*) AS answered, "
        f"MAX({_REACHED.format(a='a.')}) AS reached "
        f"FROM answers a WHERE {' AND '.join(filters)} GROUP BY a.member_id"
    )


def _totals_source(scope: str) -> str:
    """All-time totals: one row per member, credited at each reveal."""
    if scope == "channel":
        where = "s.channel_id = :scope_id"
        table = "channel_scores"
    elif scope == "workspace":
        where, table = "s.workspace_id = :scope_id", "workspace_scores"
    else:
        where, table = f"s.workspace_id = :workspace_id AND s.member_id IN ({_IN_GROUP})", "workspace_scores"
    return (
        f"SELECT s.member_id AS member_id, s.points AS points, s.correct AS correct, "
        f"s.answered AS answered, s.reached_at AS reached FROM {table} s WHERE {where}"
    )


def _challenge_source(scope: str, since: bool) -> str:
    """First /challenge solves: their points count on the server/workspace and group boards.

    A challenge is solved privately, not in answer to a channel's question, so channel boards
    leave it out; it adds points but no answers (accuracy stays that of the questions)."""
    filters = {
        "workspace": ["c.workspace_id = :scope_id"],
        "group": ["c.workspace_id = :workspace_id", f"c.member_id IN ({_IN_GROUP})"],
    }[scope]
    filters += ["c.solved_at IS NOT NULL", "c.points > 0"]
    if since:
        filters.append("c.solved_at >= :since")
    return (
        "SELECT c.member_id AS member_id, c.points AS points, 0 AS correct, 0 AS answered, "
        f"c.solved_at AS reached FROM challenge_progress c WHERE {' AND '.join(filters)}"
    )


def source_sql(scope: str, since: bool, *, raw: bool = False) -> str:
    """The board's per-member rows; ``raw`` aggregates answers even for all time (to check)."""
    questions = _raw_source(scope, since) if since or raw else _totals_source(scope)
    if scope == "channel":
        return questions
    return (
        "SELECT u.member_id AS member_id, SUM(u.points) AS points, SUM(u.correct) AS correct, "
        "SUM(u.answered) AS answered, MAX(u.reached) AS reached "
        f"FROM ({questions} UNION ALL {_challenge_source(scope, since)}) u GROUP BY u.member_id"
    )


# points, then accuracy (none for challenge-only rows), then who reached their score first
ORDER = (
    "t.points DESC, CAST(t.correct AS FLOAT) / NULLIF(t.answered, 0) DESC NULLS LAST, "
    "t.reached ASC NULLS LAST, t.member_id ASC"
)


def _typed(sql: str) -> TextualSelect:
    c = ChannelScore.__table__.c
    return text(sql).columns(
        member_id=c.member_id.type, points=c.points.type, correct=c.correct.type,
        answered=c.answered.type, reached=c.reached_at.type,
        display_name=Member.__table__.c.display_name.type, rank=c.points.type,
    )


_CACHE: dict[tuple[str, bool, bool, str], TextualSelect] = {}


def top_sql(scope: str, since: bool, *, raw: bool = False) -> Any:
    """Top ``:limit`` rows with names, best first."""
    key = (scope, since, raw, "top")
    if key not in _CACHE:
        _CACHE[key] = _typed(
            f"SELECT t.member_id, t.points, t.correct, t.answered, t.reached, m.display_name, 0 AS rank "
            f"FROM ({source_sql(scope, since, raw=raw)}) t JOIN members m ON m.id = t.member_id "
            f"ORDER BY {ORDER} LIMIT :limit"
        )
    return _CACHE[key]


def rank_sql(scope: str, since: bool, *, raw: bool = False) -> Any:
    """One member's row and rank (1-based) on the board."""
    key = (scope, since, raw, "rank")
    if key not in _CACHE:
        _CACHE[key] = _typed(
            f"SELECT r.member_id, r.points, r.correct, r.answered, r.reached, m.display_name, r.rank "
            f"FROM (SELECT t.*, row_number() OVER (ORDER BY {ORDER}) AS rank "
            f"FROM ({source_sql(scope, since, raw=raw)}) t) r "
            f"JOIN members m ON m.id = r.member_id WHERE r.member_id = :member_id"
        )
    return _CACHE[key]


# ---- board rows (bot.core.progress.ports' ProgressReads.top and .rank_of) --------------------


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
    statement = top_sql(scope.value, since is not None, raw=raw)
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
    statement = rank_sql(scope.value, since is not None, raw=raw)
    params = _params(scope, scope_id, since, workspace_id, member_id=member_id)
    r = (await conn.execute(statement, params)).first()
    return None if r is None else _row(r, int(r.rank))
