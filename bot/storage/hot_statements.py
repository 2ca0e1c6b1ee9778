"""The answer path's statements, as SQL compiled once and run with the least machinery.

A click is one short transaction of a handful of statements. Through SQLAlchemy each one costs
about 0.15 ms of Python (compile-cache lookup, result wrapping, greenlet switches) against
microseconds of SQLite work, so on SQLite they run as prepared statements straight on the
session's own ``sqlite3`` connection, inside the transaction ``Database.write`` began (our
inline driver makes that connection available without a thread hop). Values pass through
the same type processors SQLAlchemy would use, so rows read and written either way are
identical. On PostgreSQL the write is one statement (a CTE that records the answer, updates
the spaced-repetition card and bumps the post's answer count), run through SQLAlchemy Core.
The stored ability and difficulty estimates are not the click's: they move when the answer is
revealed (``bot.storage.estimates.apply_revealed``).

The public count is kept, not counted (issue 36): ``post_answer_counts`` holds up to
``COUNT_STRIPES`` rows per post, summed when the view is rendered. One counter row per post
made every click of a burst queue on that row's lock until the previous click committed (about
2x slower at 50 clicks at once on PostgreSQL); on PostgreSQL the clicks in flight at once take
different stripes (in turn), on SQLite, whose writes take turns anyway, there is one.

The SQL (``:name`` parameters, ON CONFLICT) is shared by SQLite 3.35+ and PostgreSQL.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import TextClause, TextualSelect, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import Float, Integer, TypeEngine

from bot.storage.db import core_connection
from bot.storage.models import Answer, Channel, MemberAbility, Post, SrsCard, Streak

_A, _P, _C, _S = Answer.__table__.c, Post.__table__.c, Channel.__table__.c, SrsCard.__table__.c


@dataclass
class HotStatement:
    """SQL with typed parameters and result columns, runnable on either path."""

    sql: str
    params: Mapping[str, TypeEngine[Any]]
    columns: Sequence[tuple[str, TypeEngine[Any]]] = ()
    _text: TextClause | TextualSelect | None = None
    _procs: dict[str, Any] = field(default_factory=dict)

    def clause(self) -> TextClause | TextualSelect:
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

    def used(self) -> tuple[str, ...]:
        """The parameter names the SQL uses (a click's values carry more: only these are bound)."""
        if "used" not in self._procs:
            self._procs["used"] = tuple(dict.fromkeys(re.findall(r"(?<!:):(\w+)", self.sql)))
        return self._procs["used"]

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
            args = [values[n] if n != "stripe" else _next_stripe() for n in names]
            return [tuple(r) for r in await pg.fetch(sql, *args)]
        conn = await core_connection(session)
        result = await conn.execute(statement.clause(), dict(values))
        return [tuple(r) for r in result] if result.returns_rows else []
    conn = await core_connection(session)
    binds, results = statement.processors(conn.dialect)
    params = {}
    for k in statement.used():
        v, proc = values[k], binds.get(k)
        params[k] = proc(v) if proc is not None else v
    fetched = raw.execute(statement.sql, params).fetchall()
    if not any(results):
        return fetched
    return [tuple(p(v) if p else v for p, v in zip(results, row, strict=True)) for row in fetched]


async def many(session: AsyncSession, statement: HotStatement, common: Mapping[str, Any],
               each: Sequence[Mapping[str, Any]]) -> None:
    """SQLite: ``statement`` once per item of ``each`` (``executemany`` on the raw connection);
    ``common`` holds the values shared by all, typed as the ORM's once, ``each`` plain numbers.
    Elsewhere one by one through ``rows``."""
    raw = await _sqlite3_of(session)
    if raw is None:
        for one in each:
            await rows(session, statement, {**common, **one})
        return
    conn = await core_connection(session)
    binds, _results = statement.processors(conn.dialect)
    shared = {k: (binds[k](v) if k in binds else v) for k, v in common.items() if k in statement.used()}
    raw.executemany(statement.sql, [{**shared, **one} for one in each])


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
    "streak_per_week",
)
_SNAPSHOT_TYPES = [
    (f, (_C.timezone if f == "channel_tz" else _C[f] if f in ("speed_bonus", "streak_per_week")
         else _P[f]).type)
    for f in SNAPSHOT_FIELDS
]
_SNAPSHOT_SELECT = (
    "SELECT p.id, p.kind, p.question_id, p.choice_order, p.channel_id, p.member_id, p.quiz_id, "
    "p.opened_at, p.closes_at, p.closed_at, p.platform_ref, c.timezone, c.speed_bonus, c.streak_per_week"
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
    f"(SELECT coalesce(sum(n), 0) FROM post_answer_counts a WHERE a.post_id = p.id) {_SNAPSHOT_FROM}",
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

# ---- the kept count ----------------------------------------------------------------------

COUNT_STRIPES = 32  # rows per post at most


def stripe_of(member_id: int) -> int:
    """SQLite: one stripe (its writes take turns anyway, and a click then sums one row)."""
    return 0


# PostgreSQL: stripes taken in turn by this process's statements, not chosen by member: the
# statements in flight at once (at most the hot pool's 10 plus the engine's 30 connections)
# then bump different rows (stripes chosen by member id, 50 clicks at once on 16 stripes, met
# about 3 to a row); the turn starts at a random offset so replicas mostly keep apart too.
_NEXT_STRIPE = [random.randrange(COUNT_STRIPES)]


def _next_stripe() -> int:
    _NEXT_STRIPE[0] = (_NEXT_STRIPE[0] + 1) % COUNT_STRIPES
    return _NEXT_STRIPE[0]


# SQLite (an exclusive write transaction)
BUMP_COUNT = HotStatement(
    "INSERT INTO post_answer_counts (post_id, stripe, n) VALUES (:post_id, :stripe, 1) "
    "ON CONFLICT (post_id, stripe) DO UPDATE SET n = post_answer_counts.n + 1",
    {"post_id": _P.id.type, "stripe": Integer()},
)

_PG_COUNT = (
    "cnt AS (INSERT INTO post_answer_counts (post_id, stripe, n) SELECT :post_id, :stripe, 1 "
    "WHERE EXISTS (SELECT 1 FROM ins) AND :channel_id IS NOT NULL "
    "ON CONFLICT (post_id, stripe) DO UPDATE SET n = post_answer_counts.n + 1) "
)
_PG_ANSWERED = (
    "(SELECT coalesce(sum(n), 0) FROM post_answer_counts WHERE post_id = :post_id) + (SELECT count(*) FROM ins)"
)

def _pg_record(*, first: bool) -> HotStatement:
    """The click's one PostgreSQL statement."""
    kept = f"{_PG_COUNT}SELECT (SELECT id FROM ins), {_PG_ANSWERED}"
    if first:
        card = "ON CONFLICT (member_id, question_id) DO NOTHING RETURNING 1), "
        tail = (", (SELECT count(*) FROM card), "
                "(SELECT k.current FROM streaks k WHERE k.member_id = :member_id AND k.channel_id = :channel_id)")
        columns = [("id", _A.id.type), ("answered", _A.points.type), ("card_new", _A.points.type),
                   ("streak", Streak.__table__.c.current.type)]
    else:
        card = ("ON CONFLICT (member_id, question_id) "
                "DO UPDATE SET state = excluded.state, due = excluded.due, reps = excluded.reps), ")
        tail, columns = "", [("id", _A.id.type), ("answered", _A.points.type)]
    return HotStatement(
        f"WITH ins AS (INSERT INTO answers ({', '.join(_ANSWER_COLUMNS)}) SELECT {_VALUES} "
        f"WHERE EXISTS ({_OPEN_POST} FOR KEY SHARE) "
        "ON CONFLICT (post_id, member_id) DO NOTHING RETURNING id), "
        "card AS (INSERT INTO srs_cards (member_id, question_id, state, due, reps) "
        "SELECT :member_id, :question_id, :state, :due, :reps WHERE EXISTS (SELECT 1 FROM ins) "
        f"{card}{kept}{tail}",
        {**_ANSWER_TYPES, **_CARD_TYPES, "stripe": Integer()},
        columns,
    )


# PostgreSQL: record, update the card and the count in one statement. FOR KEY
# SHARE waits for a reveal in progress, which then makes the post closed: no answer lands after
# its reveal.
RECORD_PG = _pg_record(first=False)

# PostgreSQL, a post already known to this process: record the answer and, when the member
# has no card for the question yet (the usual case: a question comes once per cycle), its new
# card, in one round trip; also the count and the member's streak the reply names. ``card_new``
# 0 with an answer id means a card existed: the caller reads it and updates it.
RECORD_PG_FIRST = _pg_record(first=True)


# ---- the online estimate update at a post's reveal (bot.storage.estimates.apply_revealed) ----

_M = MemberAbility.__table__.c
_REVEAL_TYPES: dict[str, TypeEngine[Any]] = {
    "post_id": _A.post_id.type, "topic": _M.topic.type, "prior_var": Float(), "now": _M.updated_at.type,
}
# SQLite: every answering member's ability row in the topic, created at the prior if missing
# (only when the read below found one missing: most reveals skip it)
ABILITY_ROWS = HotStatement(
    "INSERT INTO member_abilities (member_id, topic, mean, var, n) "
    "SELECT member_id, :topic, 0.0, :prior_var, 0 FROM answers WHERE post_id = :post_id ORDER BY member_id "
    "ON CONFLICT (member_id, topic) DO NOTHING",
    _REVEAL_TYPES,
)
# SQLite (its write lock held): the post's answers with the abilities they start from, and how
# many answers it has (more than the rows: some member has no row yet)
_REVEAL_READ = (
    "SELECT a.id, a.member_id, a.workspace_id, a.correct, m.mean, m.var, m.n, "
    "(SELECT count(*) FROM answers WHERE post_id = :post_id) FROM answers a "
    "JOIN member_abilities m ON m.member_id = a.member_id AND m.topic = :topic "
    "WHERE a.post_id = :post_id ORDER BY a.member_id"
)
REVEAL_READ = HotStatement(_REVEAL_READ, _REVEAL_TYPES)
# the new abilities: PostgreSQL in one statement (arrays: the rows a reveal's write found
# changed since its read), SQLite once per member (executemany)
SET_ABILITIES_PG = HotStatement(
    "UPDATE member_abilities m SET mean = u.mean, var = u.var, n = m.n + 1, updated_at = :now "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:means AS float8[]), CAST(:vars AS float8[])) "
    "AS u(member_id, mean, var) WHERE m.member_id = u.member_id AND m.topic = :topic",
    {**_REVEAL_TYPES, "ids": Integer(), "means": Float(), "vars": Float()},
)
SET_ABILITY = HotStatement(
    "UPDATE member_abilities SET mean = :mean, var = :var, n = n + 1, updated_at = :now "
    "WHERE member_id = :member_id AND topic = :topic",
    {**_REVEAL_TYPES, "member_id": _M.member_id.type, "mean": Float(), "var": Float()},
)

_Q = "question_id = :question_id AND scope_id = :scope_id"
_Q_TYPES: dict[str, TypeEngine[Any]] = {"question_id": _A.question_id.type, "scope_id": Integer()}
# the question's difficulty in a scope: its refit base (NULL before one) and the stripes' sums
DIFFICULTY_OF = HotStatement(
    f"SELECT (SELECT mean FROM question_difficulties WHERE {_Q}), (SELECT var FROM question_difficulties "
    f"WHERE {_Q}), (SELECT sum(shift) FROM question_difficulty_stripes WHERE {_Q}), "
    f"(SELECT sum(info) FROM question_difficulty_stripes WHERE {_Q})",
    _Q_TYPES,
)
# the post's evidence on the difficulty, added to its stripe (``d_stripe``: the post's, not the
# click's turn-taking ``stripe``)
ADD_DIFFICULTY = HotStatement(
    "INSERT INTO question_difficulty_stripes (question_id, scope_id, stripe, n, info, shift) "
    "VALUES (:question_id, :scope_id, :d_stripe, :d_n, :d_info, :d_shift) "
    "ON CONFLICT (question_id, scope_id, stripe) DO UPDATE SET n = question_difficulty_stripes.n + excluded.n, "
    "info = question_difficulty_stripes.info + excluded.info, "
    "shift = question_difficulty_stripes.shift + excluded.shift",
    {**_Q_TYPES, "d_stripe": Integer(), "d_n": Integer(), "d_info": Float(), "d_shift": Float()},
)


# PostgreSQL, without row locks (optimistic): the post's answers, the abilities they start from
# (NULL: the member has no row in the topic yet) and, in the same round trip, the question's
# difficulty in ``scope_id`` (built-in questions: one scope for all; -1 for a community
# question, whose scopes are read apart): its refit base and the stripes' sums
REVEAL_READ_FREE_PG = HotStatement(
    "SELECT a.id, a.member_id, a.workspace_id, a.correct, m.mean, m.var, m.n, "
    f"(SELECT mean FROM question_difficulties WHERE {_Q}), (SELECT var FROM question_difficulties WHERE {_Q}), "
    f"(SELECT sum(shift) FROM question_difficulty_stripes WHERE {_Q}), "
    f"(SELECT sum(info) FROM question_difficulty_stripes WHERE {_Q}) "
    "FROM answers a LEFT JOIN member_abilities m ON m.member_id = a.member_id AND m.topic = :topic "
    "WHERE a.post_id = :post_id ORDER BY a.id",
    {**_REVEAL_TYPES, **_Q_TYPES},
)
# PostgreSQL, the whole write in one statement: the post's difficulty evidence added to its
# stripe (one row per scope), the new abilities inserted where the read found no row and
# updated where the row is still exactly as read (n, mean and var: the check that replaces
# the row lock). Returns the members written; one left out (a concurrent reveal or refit
# wrote their row after the read) is done again under a row lock (``STALE_*``).
WRITE_REVEAL_PG = HotStatement(
    "WITH u AS (SELECT * FROM unnest(CAST(:ids AS bigint[]), CAST(:means AS float8[]), CAST(:vars AS float8[]), "
    "CAST(:old_means AS float8[]), CAST(:old_vars AS float8[]), CAST(:old_ns AS integer[])) "
    "AS u(member_id, mean, var, old_mean, old_var, old_n)), "
    "d AS (INSERT INTO question_difficulty_stripes (question_id, scope_id, stripe, n, info, shift) "
    "SELECT :question_id, s.scope_id, :d_stripe, s.n, s.info, s.shift FROM unnest(CAST(:d_scopes AS integer[]), "
    "CAST(:d_ns AS integer[]), CAST(:d_infos AS float8[]), CAST(:d_shifts AS float8[])) AS s(scope_id, n, info, shift) "
    "ON CONFLICT (question_id, scope_id, stripe) DO UPDATE SET n = question_difficulty_stripes.n + excluded.n, "
    "info = question_difficulty_stripes.info + excluded.info, "
    "shift = question_difficulty_stripes.shift + excluded.shift), "
    "ins AS (INSERT INTO member_abilities (member_id, topic, mean, var, n, updated_at) "
    "SELECT member_id, :topic, mean, var, 1, :now FROM u WHERE old_n IS NULL ORDER BY member_id "
    "ON CONFLICT (member_id, topic) DO NOTHING RETURNING member_id), "
    "upd AS (UPDATE member_abilities m SET mean = u.mean, var = u.var, n = m.n + 1, updated_at = :now FROM u "
    "WHERE m.member_id = u.member_id AND m.topic = :topic AND m.n = u.old_n AND m.mean = u.old_mean "
    "AND m.var = u.old_var RETURNING m.member_id) "
    "SELECT member_id FROM ins UNION ALL SELECT member_id FROM upd",
    {**_REVEAL_TYPES, **_Q_TYPES},
)
# the rare case: members whose row changed between the read and the write, made to exist,
# then locked in member order and read again
STALE_ROWS_PG = HotStatement(
    "INSERT INTO member_abilities (member_id, topic, mean, var, n) "
    "SELECT member_id, :topic, 0.0, :prior_var, 0 FROM unnest(CAST(:ids AS bigint[])) AS u(member_id) "
    "ORDER BY member_id ON CONFLICT (member_id, topic) DO NOTHING",
    _REVEAL_TYPES,
)
STALE_READ_PG = HotStatement(
    "SELECT member_id, mean, var FROM member_abilities WHERE topic = :topic "
    "AND member_id = ANY(CAST(:ids AS bigint[])) ORDER BY member_id FOR NO KEY UPDATE",
    _REVEAL_TYPES,
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
