"""A click's write transaction on SQLite without the ORM session.

Through an ``AsyncSession`` a click spent about 0.45 ms in SQLAlchemy's begin / commit /
greenlet machinery around some 0.05 ms of SQLite work (``python -m bench.answers``). The
answer path already runs its statements as prepared SQL on the raw ``sqlite3`` connection
(``bot.storage.hot_statements``); here the transaction around them is raw too: ``BEGIN
IMMEDIATE`` on a connection of its own, the statements, ``COMMIT``, all inline in the event
loop thread, behind the same in-process write lock as ``Database.write`` and with the same
asynchronous wait for another process's lock.

``HotSession`` carries only what the hot statements read from a session (its ``info``, its
dialect). Anything else a click may need (the ORM: a member seen for the first time, a quiz
that moves on) raises ``NeedsSessionError``; the transaction is rolled back, nothing of it
remains, and the click runs again through ``Database.transaction``.
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


class HotSession:
    """Stands in for the AsyncSession of a click; see the module docstring."""

    def __init__(self, raw: sqlite3.Connection, dialect: Any, id_cache: dict[Any, Any]) -> None:
        self._bind = _Bind(dialect)
        self.info: dict[str, Any] = {
            "sqlite3": raw, "connection": self._bind, "id_cache": id_cache, "new_ids": {},
        }

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
