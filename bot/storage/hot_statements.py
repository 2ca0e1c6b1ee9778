"""The two upserts on the answer path, as cacheable SQL.

SQLAlchemy never caches dialect inserts with ON CONFLICT (their ``inherit_cache`` is off), so
building them per click recompiled about 0.5 ms of SQL each time. The same statements as
typed ``text()`` are compiled once; the syntax is shared by SQLite (3.35+) and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.db import core_connection
from bot.storage.models import Answer, SrsCard


def _typed(sql: str, table: Any, columns: list[str]) -> TextClause:
    return text(sql).bindparams(*(bindparam(c, type_=table.c[c].type) for c in columns))


_ANSWER_COLUMNS = [
    "post_id", "member_id", "workspace_id", "channel_id", "question_id", "topic", "choice",
    "correct", "points", "response_ms", "answered_at",
]
INSERT_ANSWER = _typed(
    f"INSERT INTO answers ({', '.join(_ANSWER_COLUMNS)}) "
    f"VALUES ({', '.join(':' + c for c in _ANSWER_COLUMNS)}) "
    "ON CONFLICT (post_id, member_id) DO NOTHING RETURNING id",
    Answer.__table__,
    _ANSWER_COLUMNS,
)

UPSERT_SRS = _typed(
    "INSERT INTO srs_cards (member_id, question_id, state, due, reps) "
    "VALUES (:member_id, :question_id, :state, :due, :reps) "
    "ON CONFLICT (member_id, question_id) "
    "DO UPDATE SET state = excluded.state, due = excluded.due, reps = excluded.reps",
    SrsCard.__table__,
    ["member_id", "question_id", "state", "due", "reps"],
)


async def insert_answer(session: AsyncSession, values: dict[str, Any]) -> int | None:
    """The new answer's id, or None when the member had already answered this post."""
    conn = await core_connection(session)
    return (await conn.execute(INSERT_ANSWER, values)).scalar()


async def upsert_srs_card(session: AsyncSession, values: dict[str, Any]) -> None:
    conn = await core_connection(session)
    await conn.execute(UPSERT_SRS, values)
