"""SQLite for the async engine without a thread hop per statement.

aiosqlite runs every call on a helper thread; each statement then costs several cross-thread
hand-offs (about 0.5 ms), which capped the answer path near 150/s. SQLite calls themselves
take microseconds, so this shim runs them inline in the event loop thread behind the same
async interface SQLAlchemy's aiosqlite dialect expects (via ``async_creator``).

The one call that could block is waiting for another process's write lock, and a blocked
event loop also holds up Discord heartbeats and Slack acks. So the connection never waits
(busy timeout 0): ``Database.write`` takes the write lock up front (``BEGIN IMMEDIATE``, the
only statement that can meet the lock in WAL mode) and, while it is busy, retries after
``asyncio.sleep`` from the first conflict on.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

BUSY_TIMEOUT_MS = 0  # never wait inside SQLite: the event loop would stop meanwhile
CONNECT_BUSY_TIMEOUT_MS = 2000  # only while a new connection switches to WAL mode


class _Cursor:
    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Cursor:
        self._cursor.execute(sql, parameters)
        return self

    async def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> _Cursor:
        self._cursor.executemany(sql, seq)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(size) if size else self._cursor.fetchmany()

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()


class _ImmediateQueue:
    """Stands in for aiosqlite's request queue, which SQLAlchemy uses to set isolation_level."""

    @staticmethod
    def put_nowait(item: tuple[asyncio.Future[Any], Callable[[], Any]]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:
            future.set_exception(exc)


class InlineConnection:
    """The subset of aiosqlite.Connection that SQLAlchemy's adapter calls."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._tx = _ImmediateQueue()

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    async def cursor(self) -> _Cursor:
        return _Cursor(self._conn.cursor())

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Cursor:
        return _Cursor(self._conn.execute(sql, parameters))

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    async def commit(self) -> None:
        self._conn.commit()

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        self._conn.close()

    def stop(self) -> None:
        self._conn.close()


def creator(path: str) -> Callable[[], Any]:
    """An ``async_creator`` for create_async_engine opening ``path`` inline."""

    async def connect() -> InlineConnection:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False,
            detect_types=0,
        )
        return InlineConnection(conn)

    return connect
