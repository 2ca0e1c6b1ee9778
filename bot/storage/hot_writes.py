"""A click's writes without the ORM session: a raw transaction on SQLite, raw autocommit
statements on PostgreSQL.

Through an ``AsyncSession`` a click spent about 0.45 ms in SQLAlchemy's begin / commit /
greenlet machinery around some 0.05 ms of SQLite work (``python -m bench.answers``). The
answer path already runs its statements as prepared SQL on the raw ``sqlite3`` connection
(``bot.storage.hot_statements``); here the transaction around them is raw too: ``BEGIN
IMMEDIATE`` on a connection of its own, the statements, ``COMMIT``, all inline in the event
loop thread, behind the same in-process write lock as ``Database.write`` and with the same
asynchronous wait for another process's lock.

On PostgreSQL the click's write is already one statement (a CTE that records the answer,
updates the card and the kept count; ``RECORD_PG``), so it needs no
transaction around it: the read and the write run as two autocommit statements on a
connection of a small asyncpg pool, two round trips instead of four (BEGIN, read, write,
COMMIT). What could change between them is harmless: a second answer is refused by the write itself, a reveal closes the post under the
write's ``FOR KEY SHARE``, and the count comes from the write.

``HotSession`` carries only what the hot statements read from a session (its ``info``, its
dialect). Anything else a click may need (the ORM: a member seen for the first time, a quiz
that moves on) raises ``NeedsSessionError`` before anything is written (``before_write``; on
SQLite a later one rolls back), and the click runs again through ``Database.transaction``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.storage import sqlite_inline


class NeedsSessionError(RuntimeError):
    """This click needs the full session; run it again through Database.transaction."""


class _Bind:
    """What ``session.get_bind()`` and ``core_connection(session)`` are asked for: the dialect."""

    def __init__(self, dialect: Any) -> None:
        self.dialect = dialect

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        raise NeedsSessionError("a Core statement outside the hot statements")


class _Autocommit:
    """What hot_statements reads of SQLAlchemy's asyncpg adapter: the connection, started."""

    _started = True

    def __init__(self, connection: Any) -> None:
        self._connection = connection


class HotSession:
    """Stands in for the AsyncSession of a click; see the module docstring."""

    def __init__(self, dialect: Any, id_cache: dict[Any, Any], *, sqlite: sqlite3.Connection | None = None,
                 asyncpg: Any = None, post_cache: dict[Any, Any] | None = None) -> None:
        self._bind = _Bind(dialect)
        self.info: dict[str, Any] = {
            "sqlite3": sqlite, "asyncpg": _Autocommit(asyncpg) if asyncpg is not None else None,
            "connection": self._bind, "id_cache": id_cache, "new_ids": {}, "hot": True,
        }
        if post_cache is not None:  # PostgreSQL: snapshots of open channel posts (bot.storage.clicks)
            self.info["post_cache"] = post_cache

    def get_bind(self) -> _Bind:
        return self._bind

    def __getattr__(self, name: str) -> Any:
        raise NeedsSessionError(f"session.{name}")


def connect(path: str) -> sqlite3.Connection:
    """The hot path's own connection, set up like the engine's (bot.storage.db)."""
    conn = sqlite3.connect(path, timeout=sqlite_inline.CONNECT_BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={sqlite_inline.BUSY_TIMEOUT_MS}")
    return conn


def before_write(session: Any, *, simple: bool) -> None:
    """Called before a click writes: a click that is not ``simple`` (it will need the ORM
    afterwards) leaves the hot path now, while nothing is written."""
    if not simple and isinstance(session, HotSession):
        raise NeedsSessionError("this click needs the session after its write")
