"""Engine and sessions for SQLite (default) and PostgreSQL, plus migration helpers.

SQLite allows one writer. Write transactions start with ``BEGIN IMMEDIATE`` (so two writers
never deadlock upgrading a read lock) and are queued on an in-process lock (so they wait in
FIFO order instead of spinning); a lock held by another process is waited for with short
asyncio sleeps, never inside SQLite. Statements run inline in the event loop (see
sqlite_inline).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event, inspect
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from bot.storage import hot_writes, sqlite_inline

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
WRITE_LOCK_WAIT_S = 30.0  # how long a write waits for another process's SQLite write lock
LOCK_FIRST_DELAY_S = 0.0005  # then x1.5 per retry: another process's transactions take ~1 ms
LOCK_MAX_DELAY_S = 0.005
HOT_POOL_SIZE = 10  # PostgreSQL connections for raw click writes (beside the engine's pool)
RETRY_BUDGET_S = 10.0  # how long a transaction is retried through connection loss (a restart)
RETRY_FIRST_DELAY_S = 0.05
RETRY_MAX_DELAY_S = 1.0
# serialization failure, deadlock, admin shutdown, crash shutdown, cannot connect now,
# and the connection exception class
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "57P01", "57P02", "57P03"})

log = logging.getLogger(__name__)
T = TypeVar("T")


async def _keep_session_state(connection: Any) -> None:
    """The raw click connections never LISTEN, SET, lock or leave a transaction open, so
    releasing one needs no reset query (asyncpg's default costs a round trip per click)."""


def is_transient(exc: BaseException) -> bool:
    """A failure a retry of the whole transaction can cure: the connection or the server
    went away (restart, failover) or PostgreSQL aborted it for serialization."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, DBAPIError) and e.connection_invalidated:
            return True
        state = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
        if isinstance(state, str) and (state in TRANSIENT_SQLSTATES or state.startswith("08")):
            return True
        if isinstance(e, (ConnectionError, TimeoutError)) or type(e).__name__ in {
            "ConnectionDoesNotExistError", "CannotConnectNowError", "ConnectionFailureError",
        }:
            return True
        todo += [e.__cause__, e.__context__, getattr(e, "orig", None)]
    return False


class NotMigratedError(RuntimeError):
    """The database schema is older than this code; `torchdrill migrate` fixes it."""


def _prepare_sqlite_file(url: str) -> None:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    if url.startswith("sqlite"):
        _prepare_sqlite_file(url)
        path = make_url(url).database or ":memory:"
        engine = create_async_engine(url, async_creator=sqlite_inline.creator(path), **kwargs)

        @event.listens_for(engine.sync_engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout={sqlite_inline.CONNECT_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode=WAL")  # may wait once, when a pool connects
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA busy_timeout={sqlite_inline.BUSY_TIMEOUT_MS}")
            cursor.close()

        @event.listens_for(engine.sync_engine, "begin")
        def _on_begin(conn: Any) -> None:
            immediate = conn.get_execution_options().get("torchdrill_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 20)
    # no pre-ping (a round trip per transaction): a connection lost meanwhile fails its
    # transaction, which Database.transaction retries on a fresh one
    return create_async_engine(url, **kwargs)


class Database:
    """One engine; ``read()`` and ``write()`` give short-lived sessions, one per interaction."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = create_engine(url, **engine_kwargs)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        # raw click writes (bot.storage.hot_writes): on SQLite a file a second connection can
        # open (not :memory:), on PostgreSQL the asyncpg driver
        self.hot_ok = (self.is_sqlite and (make_url(url).database or ":memory:") != ":memory:") or \
            self.engine.dialect.driver == "asyncpg"
        write_bind = self.engine.execution_options(torchdrill_write=True)
        self._read = async_sessionmaker(self.engine, expire_on_commit=False)
        self._write = async_sessionmaker(write_bind, expire_on_commit=False)
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        self._hot: sqlite3.Connection | None = None  # bot.storage.hot_writes
        self._hot_pool: asyncio.Future[Any] | None = None  # an asyncpg pool, PostgreSQL
        # ids of rows that never change once committed (members); see bot.core.domain.identity
        self.id_cache: dict[tuple[str, ...], tuple[int, int, str]] = {}
        self.post_cache: dict[int, Any] = {}  # bot.core.answers.recording: raw PostgreSQL clicks

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self._read() as session, session.begin():
            session.info["id_cache"] = self.id_cache
            session.info["new_ids"] = {}
            yield session

    async def read_first(self, statement: Any) -> Any | None:
        """The first row of one Core read. On PostgreSQL outside a transaction: one round trip
        instead of three (BEGIN, the read, COMMIT), for reads a scheduled post makes each time."""
        if self.is_sqlite:
            async with self.read() as session:
                return (await session.execute(statement)).first()
        async with self.engine.connect() as conn:
            bare = await conn.execution_options(isolation_level="AUTOCOMMIT")
            return (await bare.execute(statement)).first()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A transaction that commits on success and rolls back on error."""
        lock = self._write_lock or contextlib.nullcontext()
        async with lock:
            session = await self._begin_write()
            new_ids: dict[tuple[str, ...], tuple[int, int, str]] = {}
            session.info["id_cache"] = self.id_cache
            session.info["new_ids"] = new_ids
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
            finally:
                await session.close()
            self.id_cache.update(new_ids)  # only ids whose rows were committed

    async def transaction(
        self, work: Callable[[AsyncSession], Awaitable[T]], *, budget_s: float = RETRY_BUDGET_S
    ) -> T:
        """Run ``work`` in a write transaction; on a transient error run all of it again.

        ``work`` must be safe to repeat: a retry after a commit whose acknowledgement was lost
        finds its own rows (the answer path reports "already answered" with the same choice).
        """
        async def attempt() -> T:
            async with self.write() as session:
                return await work(session)

        return await self._retrying(attempt, budget_s)

    async def click(self, work: Callable[[Any], Awaitable[T]], *, raw_first: bool = False) -> T:
        """A click's ``work`` (bot.core.drill.ports' ``ClickTransactions``): the raw writes
        first where asked and this database has them (``hot_write``), else, or when ``work``
        needs the ORM (``NeedsSessionError``: nothing was written), the session's
        ``transaction``; retried whole through a database restart either way."""
        if raw_first and self.hot_ok:
            try:
                return await self.hot_write(work)
            except hot_writes.NeedsSessionError:
                pass
        return await self.transaction(work)

    async def _retrying(self, run: Callable[[], Awaitable[T]], budget_s: float = RETRY_BUDGET_S) -> T:
        """``run`` again after a transient error (see ``is_transient``) within ``budget_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget_s
        delay = RETRY_FIRST_DELAY_S
        attempt = 1
        while True:
            try:
                return await run()
            except Exception as exc:
                if not is_transient(exc) or loop.time() + delay > deadline:
                    raise
                log.warning(
                    "database unavailable (%s), retrying the transaction (attempt %d)",
                    type(exc).__name__, attempt + 1,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_DELAY_S)
            attempt += 1

    async def hot_write(self, work: Callable[[Any], Awaitable[T]]) -> T:
        """Run a click's ``work`` without the ORM session (bot.storage.hot_writes); it raises
        ``NeedsSessionError`` (nothing written) when it needs ``transaction`` instead."""
        assert self.hot_ok, "no raw writes on this database"
        if not self.is_sqlite:
            return await self._retrying(lambda: self._hot_postgres(work))
        assert self._write_lock is not None
        async with self._write_lock:
            if self._hot is None:
                self._hot = hot_writes.connect(make_url(self.url).database or ":memory:")
            raw = self._hot

            async def begin() -> None:
                raw.execute("BEGIN IMMEDIATE")

            await self._retry_locked(begin)
            session = hot_writes.HotSession(self.engine.dialect, self.id_cache, sqlite=raw)
            try:
                result = await work(session)
                raw.execute("COMMIT")
            except BaseException:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                raise
            self.id_cache.update(session.info["new_ids"])
            return result

    async def _hot_postgres(self, work: Callable[[Any], Awaitable[T]]) -> T:
        made = self._hot_pool
        if made is None or (made.done() and (made.cancelled() or made.exception() is not None)):
            # one pool, however many clicks arrive at once; made again after a failed attempt
            # (the database was down), whose error the waiting clicks have seen
            import asyncpg

            dsn = make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)
            # connections opened by a burst stay open (asyncpg closes idle ones after 300 s by
            # default): the next burst, hours later, would wait while they are opened again, each a
            # new server process with cold caches and statements to prepare (a cold pool added
            # about 20 ms to a 1,000-click burst's p99 at a load average of 6: docs/clicks.md)
            made = self._hot_pool = asyncio.ensure_future(asyncpg.create_pool(
                dsn, min_size=1, max_size=HOT_POOL_SIZE, reset=_keep_session_state,
                max_inactive_connection_lifetime=0))
        # every click waits for the same set-up; once made, no waiting at all
        pool = made.result() if made.done() else await asyncio.shield(made)
        conn = await pool.acquire()
        try:
            session = hot_writes.HotSession(self.engine.dialect, self.id_cache, asyncpg=conn,
                                            post_cache=self.post_cache)
            result = await work(session)
        except hot_writes.NeedsSessionError:
            raise  # nothing was sent after the last statement completed: the connection is fine
        except BaseException:
            conn.terminate()  # it may be mid-operation or broken; the pool opens a fresh one
            raise
        finally:
            with contextlib.suppress(Exception):  # broken while idle (a server restart): asyncpg
                await pool.release(conn)  # has terminated it; it never costs the click
        self.id_cache.update(session.info["new_ids"])
        return result

    async def _retry_locked(self, begin: Callable[[], Awaitable[T]]) -> T:
        """``begin`` until another process's SQLite write lock is free, waiting with asyncio
        sleeps (never inside SQLite, which would stop the event loop)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WRITE_LOCK_WAIT_S
        delay = LOCK_FIRST_DELAY_S
        while True:
            try:
                return await begin()
            except (OperationalError, sqlite3.OperationalError) as exc:
                if not (self.is_sqlite and "locked" in str(exc)) or loop.time() > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, LOCK_MAX_DELAY_S)

    async def _begin_write(self) -> AsyncSession:
        """Start the transaction; on SQLite take the write lock now, waiting without blocking."""

        async def begin() -> AsyncSession:
            session = self._write()
            try:
                # autobegin (BEGIN IMMEDIATE on SQLite); kept for core_connection()
                session.info["connection"] = await session.connection()
            except OperationalError:
                await session.close()
                raise
            return session

        return await self._retry_locked(begin)

    def insert(self, table: Any) -> Any:
        """Dialect insert, so callers can use ``on_conflict_do_nothing``/``do_update``."""
        return (sqlite.insert if self.is_sqlite else postgresql.insert)(table)

    async def dispose(self) -> None:
        if self._hot is not None:
            self._hot.close()
            self._hot = None
        if self._hot_pool is not None:
            pool, self._hot_pool = self._hot_pool, None
            if pool.done() and pool.exception() is None:
                await pool.result().close()
            else:
                pool.cancel()
        await self.engine.dispose()

    async def schema_revision(self) -> str | None:
        async with self.engine.connect() as conn:
            return await conn.run_sync(_current_revision)

    async def ensure_migrated(self) -> None:
        """Refuse to run on a database that `torchdrill migrate` has not brought up to date."""
        current = await self.schema_revision()
        head = head_revision()
        if current != head:
            raise NotMigratedError(
                f"database schema is at {current or 'nothing'} but this version needs {head}; "
                "run `torchdrill migrate` first"
            )


async def core_connection(session: AsyncSession) -> AsyncConnection:
    """The session's connection, for Core statements in its transaction (no ORM overhead)."""
    conn = session.info.get("connection")
    if conn is None:
        conn = session.info["connection"] = await session.connection()
    return conn


def _current_revision(sync_conn: Any) -> str | None:
    from alembic.runtime.migration import MigrationContext

    if not inspect(sync_conn).has_table("alembic_version"):
        return None
    return MigrationContext.configure(sync_conn).get_current_revision()


def alembic_config(url: str) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


class UnknownRevisionError(ValueError):
    """A revision that is not in the migration history."""


@dataclass(frozen=True)
class Migrated:
    """What ``migrate_to`` did: the revisions before and after, and the direction taken."""

    before: str | None
    after: str | None
    direction: str  # upgraded | downgraded | unchanged

    def describe(self, where: str) -> str:
        name: dict[str | None, str | None] = {None: "base"}
        before, after = name.get(self.before, self.before), name.get(self.after, self.after)
        if self.direction == "unchanged":
            return f"{where} is already at revision {after}"
        return f"{self.direction} {where} from {before} to {after}"


def revisions() -> list[str]:
    """Every revision, oldest first (the history is linear)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def migrate_to(url: str, revision: str = "head") -> Migrated:
    """Upgrade or downgrade to ``revision`` (``head``, ``base`` or an id); synchronous."""
    from alembic import command

    history = revisions()
    target = {"head": history[-1] if history else None, "base": None}.get(revision, revision)
    if target is not None and target not in history:
        known = ", ".join(["base", *history, "head"])
        raise UnknownRevisionError(f"unknown revision {revision!r}; known: {known}")
    if url.startswith("sqlite"):
        _prepare_sqlite_file(url)
    before = asyncio.run(_revision_of(url))
    position: dict[str | None, int] = {rev: i for i, rev in enumerate(history)}
    now_at, goal = position.get(before, -1), position.get(target, -1)
    cfg = alembic_config(url)
    if goal > now_at:
        command.upgrade(cfg, target or "head")
        direction = "upgraded"
    elif goal < now_at:
        command.downgrade(cfg, target or "base")
        direction = "downgraded"
    else:
        direction = "unchanged"
    return Migrated(before, asyncio.run(_revision_of(url)), direction)


async def _revision_of(url: str) -> str | None:
    db = Database(url)
    try:
        return await db.schema_revision()
    finally:
        await db.dispose()


def migrate(url: str, revision: str = "head") -> None:
    """Run Alembic upgrades (synchronous; call from the CLI or via ``asyncio.to_thread``)."""
    from alembic import command

    if url.startswith("sqlite"):
        _prepare_sqlite_file(url)
    command.upgrade(alembic_config(url), revision)
