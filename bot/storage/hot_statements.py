"""The answer path's statements, as SQL compiled once and run with the least machinery.

A click is one short transaction of a handful of statements. Through SQLAlchemy each one costs
about 0.15 ms of Python (compile-cache lookup, result wrapping, greenlet switches) against
microseconds of SQLite work, so on SQLite they run as prepared statements straight on the
session's own ``sqlite3`` connection, inside the transaction ``Database.write`` began (our
inline driver makes that connection available without a thread hop). Values pass through
the same type processors SQLAlchemy would use, so rows read and written either way are
identical. On PostgreSQL the write is one statement (a CTE that records the answer, updates
the spaced-repetition card and counts the post's answers), run through SQLAlchemy Core.

The SQL (``:name`` parameters, ON CONFLICT) is shared by SQLite 3.35+ and PostgreSQL.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import TypeEngine

from bot.storage.db import core_connection
from bot.storage.models import Answer, Channel, Post, SrsCard, Streak

_A, _P, _C, _S = Answer.__table__.c, Post.__table__.c, Channel.__table__.c, SrsCard.__table__.c


@dataclass
class HotStatement:
    """SQL with typed parameters and result columns, runnable on either path."""

    sql: str
    params: Mapping[str, TypeEngine[Any]]
    columns: Sequence[tuple[str, TypeEngine[Any]]] = ()
    _text: TextClause | None = None
    _procs: dict[str, Any] = field(default_factory=dict)

    def clause(self) -> TextClause:
        if self._text is None:
            used = set(re.findall(r"(?<!:):(\w+)", self.sql))
            clause = text(self.sql).bindparams(
                *(bindparam(n, type_=t) for n, t in self.params.items() if n in used)
            )
            self._text = clause.columns(**dict(self.columns)) if self.columns else clause
        return self._text

    def positional(self) -> tuple[str, list[str]]:
        """The SQL with ``$1``-style parameters (asyncpg) and the names in their order."""
        if "$pg" not in self._procs:
            names: list[str] = []

            def number(match: re.Match[str]) -> str:
                if match.group(1) not in names:
                    names.append(match.group(1))
                return f"${names.index(match.group(1)) + 1}"

            self._procs["$pg"] = (re.sub(r"(?<!:):(\w+)", number, self.sql), names)
        return self._procs["$pg"]

    def processors(self, dialect: Any) -> tuple[dict[str, Callable[[Any], Any]], list[Callable[[Any], Any] | None]]:
        key = dialect.name
        if key not in self._procs:
            binds = {}
            for name, type_ in self.params.items():
                proc = type_.dialect_impl(dialect).bind_processor(dialect)
                if proc is not None:
                    binds[name] = proc
            results = [t.dialect_impl(dialect).result_processor(dialect, None) for _, t in self.columns]
            self._procs[key] = (binds, results)
        return self._procs[key]


async def _sqlite3_of(session: AsyncSession) -> Any:
    """The raw sqlite3 connection of the session's transaction (None on other databases)."""
    info = session.info
    if "sqlite3" not in info:
        conn = await core_connection(session)
        raw = None
        if conn.dialect.name == "sqlite":
            driver = (await conn.get_raw_connection()).driver_connection
            raw = getattr(driver, "_conn", None)  # bot.storage.sqlite_inline.InlineConnection
        info["sqlite3"] = raw
    return info["sqlite3"]


async def _asyncpg_of(session: AsyncSession) -> Any:
    """The asyncpg connection of the session, its transaction begun (None elsewhere).

    SQLAlchemy's asyncpg adapter opens the transaction lazily, at its first statement; the
    hot statements bypass the adapter, so they open it the same way first."""
    info = session.info
    if "asyncpg" not in info:
        conn = await core_connection(session)
        adapter = None
        if conn.dialect.driver == "asyncpg":
            adapter = (await conn.get_raw_connection()).dbapi_connection
            if not hasattr(adapter, "_start_transaction"):  # another SQLAlchemy: use Core
                adapter = None
        info["asyncpg"] = adapter
    adapter = info["asyncpg"]
    if adapter is None:
        return None
    if not adapter._started:
        await adapter._start_transaction()
    return adapter._connection


async def rows(session: AsyncSession, statement: HotStatement, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Run ``statement`` in the session's transaction; plain tuples, values typed as the ORM's."""
    raw = await _sqlite3_of(session)
    if raw is None:
        pg = await _asyncpg_of(session)
        if pg is not None:
            sql, names = statement.positional()
            return [tuple(r) for r in await pg.fetch(sql, *(values[n] for n in names))]
        conn = await core_connection(session)
        result = await conn.execute(statement.clause(), dict(values))
        return [tuple(r) for r in result] if result.returns_rows else []
    conn = await core_connection(session)
    binds, results = statement.processors(conn.dialect)
    params = {k: (binds[k](v) if k in binds else v) for k, v in values.items()}
    fetched = raw.execute(statement.sql, params).fetchall()
    if not any(results):
        return fetched
    return [tuple(p(v) if p else v for p, v in zip(results, row, strict=True)) for row in fetched]


async def first(session: AsyncSession, statement: HotStatement, values: Mapping[str, Any]) -> tuple[Any, ...] | None:
    found = await rows(session, statement, values)
    return found[0] if found else None


# ---- the statements ------------------------------------------------------------------------

_ANSWER_COLUMNS = [
    "post_id", "member_id", "workspace_id", "channel_id", "question_id", "topic", "choice",
    "correct", "points", "response_ms", "answered_at",
]
_ANSWER_TYPES = {c: _A[c].type for c in _ANSWER_COLUMNS}
_CARD_TYPES = {"state": _S.state.type, "due": _S.due.type, "reps": _S.reps.type}

SNAPSHOT_FIELDS = (
    "id", "kind", "question_id", "choice_order", "channel_id", "member_id", "quiz_id",
    "opened_at", "closes_at", "closed_at", "platform_ref", "channel_tz", "speed_bonus",
)
_SNAPSHOT_TYPES = [
    (f, (_C.timezone if f == "channel_tz" else _C.speed_bonus if f == "speed_bonus" else _P[f]).type)
    for f in SNAPSHOT_FIELDS
]
_SNAPSHOT_SELECT = (
    "SELECT p.id, p.kind, p.question_id, p.choice_order, p.channel_id, p.member_id, p.quiz_id, "
    "p.opened_at, p.closes_at, p.closed_at, p.platform_ref, c.timezone, c.speed_bonus"
)
_SNAPSHOT_FROM = "FROM posts p LEFT OUTER JOIN channels c ON c.id = p.channel_id WHERE p.id = :post_id"
POST_SNAPSHOT = HotStatement(
    f"{_SNAPSHOT_SELECT} {_SNAPSHOT_FROM}", {"post_id": _P.id.type}, _SNAPSHOT_TYPES
)

# the post, and what the clicking member's answer will build on, in one read: their card,
# their daily streak in the channel and the post's answer count so far
CLICK_STATE_FIELDS = ("card_state", "card_reps", "streak", "answered")
CLICK_STATE = HotStatement(
    f"{_SNAPSHOT_SELECT}, "
    "(SELECT s.state FROM srs_cards s WHERE s.member_id = :member_id AND s.question_id = p.question_id), "
    "(SELECT s.reps FROM srs_cards s WHERE s.member_id = :member_id AND s.question_id = p.question_id), "
    "(SELECT k.current FROM streaks k WHERE k.member_id = :member_id AND k.channel_id = p.channel_id), "
    f"(SELECT count(*) FROM answers a WHERE a.post_id = p.id) {_SNAPSHOT_FROM}",
    {"post_id": _P.id.type, "member_id": _A.member_id.type},
    [*_SNAPSHOT_TYPES, ("card_state", _S.state.type), ("card_reps", _S.reps.type),
     ("streak", Streak.__table__.c.current.type), ("answered", _A.points.type)],
)

CHOICE = HotStatement(
    "SELECT choice FROM answers WHERE post_id = :post_id AND member_id = :member_id",
    {"post_id": _A.post_id.type, "member_id": _A.member_id.type},
)

# an answer only while its post is open (a channel post is closed by its reveal)
_OPEN_POST = "SELECT 1 FROM posts WHERE id = :post_id AND (closed_at IS NULL OR channel_id IS NULL)"
_VALUES = ", ".join(":" + c for c in _ANSWER_COLUMNS)
INSERT_ANSWER = HotStatement(
    f"INSERT INTO answers ({', '.join(_ANSWER_COLUMNS)}) SELECT {_VALUES} "
    f"WHERE EXISTS ({_OPEN_POST}) ON CONFLICT (post_id, member_id) DO NOTHING RETURNING id",
    _ANSWER_TYPES,
)

_UPSERT_CARD_SQL = (
    "INSERT INTO srs_cards (member_id, question_id, state, due, reps) "
    "VALUES (:member_id, :question_id, :state, :due, :reps) "
    "ON CONFLICT (member_id, question_id) "
    "DO UPDATE SET state = excluded.state, due = excluded.due, reps = excluded.reps"
)
UPSERT_SRS = HotStatement(_UPSERT_CARD_SQL, {**_CARD_TYPES, "member_id": _S.member_id.type,
                                             "question_id": _S.question_id.type})

# PostgreSQL: record, update the card and count in one statement. FOR KEY SHARE waits for a
# reveal in progress, which then makes the post closed: no answer lands after its reveal.
RECORD_PG = HotStatement(
    f"WITH ins AS (INSERT INTO answers ({', '.join(_ANSWER_COLUMNS)}) SELECT {_VALUES} "
    f"WHERE EXISTS ({_OPEN_POST} FOR KEY SHARE) "
    "ON CONFLICT (post_id, member_id) DO NOTHING RETURNING id), "
    "card AS (INSERT INTO srs_cards (member_id, question_id, state, due, reps) "
    "SELECT :member_id, :question_id, :state, :due, :reps WHERE EXISTS (SELECT 1 FROM ins) "
    "ON CONFLICT (member_id, question_id) "
    "DO UPDATE SET state = excluded.state, due = excluded.due, reps = excluded.reps) "
    "SELECT (SELECT id FROM ins), "
    "(SELECT count(*) FROM answers WHERE post_id = :post_id) + (SELECT count(*) FROM ins)",
    {**_ANSWER_TYPES, **_CARD_TYPES},
    [("id", _A.id.type), ("answered", _A.points.type)],
)


# PostgreSQL, a post already known to this process: record the answer and, when the member
# has no card for the question yet (the usual case: a question comes once per cycle), its new
# card, in one round trip; also the count and the member's streak the reply names. ``card_new``
# 0 with an answer id means a card existed: the caller reads it and updates it.
RECORD_PG_FIRST = HotStatement(
    f"WITH ins AS (INSERT INTO answers ({', '.join(_ANSWER_COLUMNS)}) SELECT {_VALUES} "
    f"WHERE EXISTS ({_OPEN_POST} FOR KEY SHARE) "
    "ON CONFLICT (post_id, member_id) DO NOTHING RETURNING id), "
    "card AS (INSERT INTO srs_cards (member_id, question_id, state, due, reps) "
    "SELECT :member_id, :question_id, :state, :due, :reps WHERE EXISTS (SELECT 1 FROM ins) "
    "ON CONFLICT (member_id, question_id) DO NOTHING RETURNING 1) "
    "SELECT (SELECT id FROM ins), "
    "(SELECT count(*) FROM answers WHERE post_id = :post_id) + (SELECT count(*) FROM ins), "
    "(SELECT count(*) FROM card), "
    "(SELECT k.current FROM streaks k WHERE k.member_id = :member_id AND k.channel_id = :channel_id)",
    {**_ANSWER_TYPES, **_CARD_TYPES},
    [("id", _A.id.type), ("answered", _A.points.type), ("card_new", _A.points.type),
     ("streak", Streak.__table__.c.current.type)],
)
CARD_OF = HotStatement(
    "SELECT state, reps FROM srs_cards WHERE member_id = :member_id AND question_id = :question_id",
    {"member_id": _S.member_id.type, "question_id": _S.question_id.type},
)


async def insert_answer(session: AsyncSession, values: dict[str, Any]) -> int | None:
    """The new answer's id, or None when the member had already answered (or it closed)."""
    found = await first(session, INSERT_ANSWER, values)
    return found[0] if found else None


async def upsert_srs_card(session: AsyncSession, values: dict[str, Any]) -> None:
    await rows(session, UPSERT_SRS, values)


def one_statement_writes(session: AsyncSession) -> bool:
    """True where the answer and its card are written by one statement (PostgreSQL)."""
    return session.get_bind().dialect.name == "postgresql"


async def record_with_card(session: AsyncSession, values: dict[str, Any]) -> tuple[int | None, int]:
    """PostgreSQL: (new answer id or None, the post's answer count) in one round trip."""
    found = await first(session, RECORD_PG, values)
    assert found is not None
    return found[0], int(found[1])
