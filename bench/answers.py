"""Answers per second and p50/p99 latency of the whole "member clicks a choice" core path,
each printed next to its floor measured in the same run, and their ratio.

The path measured is Drill.handle_action: load the post, record the answer idempotently,
score it, update spaced repetition, and build both the private reply and the refreshed
public view. Floors: a single-row INSERT+COMMIT through the same engine (and, on SQLite,
through plain ``sqlite3``). On PostgreSQL, with the same number of clients through asyncpg:
the hand-written statement that does a click's database work (the one statement the path
itself sends: the answer, a new card, the count, the streak) with its parameters built
beforehand, and the minimal insert (one row into a bare table) for scale; the path and both
floors are measured in turn over 3 rounds, so a change of load falls on all of them.
Targets (issue 14): SQLite >= 0.6 of the same engine's floor; PostgreSQL, 8 clients, p99 < 20
ms and >= 0.5 of the hand-written statement; two processes on one SQLite file
(``--processes 2``), p99 < 50 ms.

    python -m bench.answers [--db sqlite|postgres|both] [--members 200] [--posts 20]
    python -m bench.answers --processes 2 [--clicks 600]
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.engine import make_url

from bench.common import backends, fresh_database, parser, percentile, ratio_line, summary
from bot.core.content.bank import load_library
from bot.core.model.actions import Action, Verb
from bot.core.model.clock import SystemClock
from bot.core.model.identity import Where, Who
from bot.core.play.drill import Drill
from bot.core.progress import srs
from bot.storage import hot_statements as hot
from bot.storage.db import Database, migrate
from bot.storage.models import Answer

FLOOR_ROWS = 2000
ROUNDS = 3  # PostgreSQL: path and floors measured in turn


class NullPublisher:
    async def publish(self, where, message, *, thread_of=None) -> str:  # noqa: ANN001
        return "ref"

    async def update(self, where, ref, message) -> None:  # noqa: ANN001
        pass


async def _prepare(drill: Drill, members: int, posts: int) -> list[tuple[Who, int, int]]:
    """Posts, members who exist already (first contact creates the row), shuffled clicks."""
    where = Where("bench", "w", "c")
    people = [Who("bench", "w", f"u{i}", f"User {i}") for i in range(members)]
    post_ids = [(await drill.ask(where, NullPublisher(), kind="daily")).post_id for _ in range(posts)]
    warm_post = (await drill.ask(where, NullPublisher(), kind="daily")).post_id
    for who in people:
        await drill.handle_action(who, Action(Verb.PICK, warm_post, 0).encode())
    clicks = [(who, pid, random.randrange(4)) for pid in post_ids for who in people]
    random.shuffle(clicks)
    return clicks


async def _clicks(drill: Drill, clicks: list, concurrency: int) -> tuple[float, list[float]]:
    queue = list(reversed(clicks))
    latencies: list[float] = []

    async def client() -> None:
        while queue:
            who, pid, pos = queue.pop()
            t0 = time.perf_counter()
            await drill.handle_action(who, Action(Verb.PICK, pid, pos).encode())
            latencies.append(time.perf_counter() - t0)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return len(clicks) / (time.perf_counter() - started), latencies


async def _engine_floor(db: Database, rows: int, concurrency: int) -> tuple[float, list[float]]:
    """Single-row INSERT+COMMIT through the project's engine (write transactions as ours)."""
    async with db.engine.begin() as conn:
        await conn.execute(text("CREATE TABLE IF NOT EXISTS bench_floor (id INTEGER PRIMARY KEY, v INTEGER)"))
    insert = text("INSERT INTO bench_floor (id, v) VALUES (:v, :v)")
    latencies: list[float] = []
    left = [rows]

    async def client() -> None:
        while left[0] > 0:
            left[0] -= 1
            t0 = time.perf_counter()
            async with db.write() as session:
                await (await session.connection()).execute(insert, {"v": left[0]})
            latencies.append(time.perf_counter() - t0)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return rows / (time.perf_counter() - started), latencies


def _sqlite3_floor(path: str, rows: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_raw (id INTEGER PRIMARY KEY, v INTEGER)")
    started = time.perf_counter()
    for i in range(rows):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO bench_floor_raw (v) VALUES (?)", (i,))
        conn.execute("COMMIT")
    rate = rows / (time.perf_counter() - started)
    conn.close()
    return rate


async def _floor_pool(url: str, concurrency: int) -> Any:
    """An asyncpg pool whose connections have all run both floor statements once: a fresh
    server backend pays for its catalogue caches on its first statements, which the path's
    long-lived connections paid long ago."""
    import asyncpg

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    pool = await asyncpg.create_pool(dsn, min_size=concurrency, max_size=concurrency)
    await pool.execute(
        "CREATE TABLE IF NOT EXISTS bench_answers (post_id int, member_id int, choice int, "
        "points int, answered_at timestamptz, PRIMARY KEY (post_id, member_id))"
    )
    click_sql, _names = hot.RECORD_PG_FIRST.positional()
    held = [await pool.acquire() for _ in range(concurrency)]
    for conn in held:
        await conn.fetchval(MINIMAL_INSERT, -1, -1, 0, 0)
        await conn.prepare(click_sql)
    for conn in held:
        await pool.release(conn)
    return pool


MINIMAL_INSERT = (
    "INSERT INTO bench_answers VALUES ($1, $2, $3, $4, now()) "
    "ON CONFLICT (post_id, member_id) DO NOTHING RETURNING post_id"
)


async def _asyncpg_floor(pool: Any, keys: range, concurrency: int) -> float:
    """The minimal hand-written statement per click (a bare table, one insert) through
    asyncpg, same clients."""
    queue = list(keys)

    async def client() -> None:
        while queue:
            i = queue.pop()
            await pool.fetchval(MINIMAL_INSERT, i // 1000, i % 1000, i % 4, 10)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return len(keys) / (time.perf_counter() - started)


async def _click_statements(drill: Drill, db: Database, posts: int) -> list[list[object]]:
    """Parameters of the path's own click statement for every member on ``posts`` fresh posts,
    built beforehand (see ``_asyncpg_click_floor``)."""
    where = Where("bench", "w", "c")
    post_ids = [(await drill.ask(where, NullPublisher(), kind="daily")).post_id for _ in range(posts)]
    async with db.read() as session:
        people = (await session.execute(text("SELECT id, workspace_id FROM members"))).all()
        found = (await session.execute(
            text("SELECT id, channel_id, question_id FROM posts WHERE id IN :ids").bindparams(
                bindparam("ids", expanding=True)), {"ids": post_ids})).all()
    now = datetime.now(UTC)
    card = srs.next_card(0, "q", None, None, srs.rating_for(True), now)
    _sql, names = hot.RECORD_PG_FIRST.positional()
    rows = []
    for post_id, channel_id, question_id in found:
        for member_id, workspace_id in people:
            values = {**card, "post_id": post_id, "member_id": member_id, "workspace_id": workspace_id,
                      "channel_id": channel_id, "question_id": question_id, "topic": "bench", "choice": 0,
                      "correct": True, "points": 10, "response_ms": 1000, "answered_at": now}
            rows.append([values[n] for n in names])
    random.shuffle(rows)
    return rows


async def _asyncpg_click_floor(pool: Any, rows: list[list[object]], concurrency: int) -> float:
    """The database's own speed for a click: the very statement the path sends for a known
    member on a post it has seen (``RECORD_PG_FIRST``: the answer, a new card, the count, the
    streak), hand-sent through asyncpg by the same number of clients with parameters built
    beforehand. What the path adds on top of it is Python."""
    sql, _names = hot.RECORD_PG_FIRST.positional()
    queue = list(rows)
    recorded: list[bool] = []

    async def client() -> None:
        while queue:
            args = queue.pop()
            recorded.append((await pool.fetchrow(sql, *args))[0] is not None)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    rate = len(rows) / (time.perf_counter() - started)
    assert all(recorded), "the floor's clicks must each record an answer, as the path's do"
    return rate


async def _postgres_rounds(
    drill: Drill, db: Database, clicks: list, members: int, concurrency: int
) -> None:
    """The path and both floors, measured in turn over several rounds so that a change of load
    on a shared machine falls on all three; the ratios are per round, then their median."""
    path_rates, minimal, own, latencies = [], [], [], []
    per_round = len(clicks) // ROUNDS
    pool = await _floor_pool(db.url, concurrency)
    for r in range(ROUNDS):
        part = clicks[r * per_round:(r + 1) * per_round]
        statements = (await _click_statements(drill, db, -(-per_round // members)))[:per_round]
        rate, lat = await _clicks(drill, part, concurrency)
        floor_rate = await _asyncpg_floor(pool, range(r * per_round, (r + 1) * per_round), concurrency)
        own_rate = await _asyncpg_click_floor(pool, statements, concurrency)
        path_rates.append(rate)
        minimal.append(floor_rate)
        own.append(own_rate)
        latencies += lat
        print(f"[postgres] round {r + 1}: answer path {rate:,.0f}/s; its own click statement {own_rate:,.0f}/s; "
              f"the minimal insert {floor_rate:,.0f}/s")
    print(f"[postgres] answer path, {concurrency} clients: {summary('latency', latencies)}")
    med = statistics.median
    print(f"[postgres] ratio answer path / its own click statement through asyncpg, {concurrency} clients "
          f"(median of {ROUNDS} rounds): {med(a / b for a, b in zip(path_rates, own, strict=True)):.2f}")
    print(f"[postgres] ratio answer path / the minimal hand-written insert through asyncpg, {concurrency} "
          f"clients (median): {med(a / b for a, b in zip(path_rates, minimal, strict=True)):.2f}")
    print(f"[postgres] ratio its own click statement / the minimal insert (median): "
          f"{med(a / b for a, b in zip(own, minimal, strict=True)):.2f}")
    p99 = percentile([v * 1000 for v in latencies], 99)
    print(f"[postgres] p99 with {concurrency} clients: {p99:.1f} ms (target < 20 ms)")
    await pool.close()


async def run(kind: str, members: int, posts: int, concurrency: int, admin: str) -> None:
    library = load_library()
    async with fresh_database(kind, admin) as db:
        drill = Drill(db, library, SystemClock(), random.Random(1))
        clicks = await _prepare(drill, members, posts)
        half = len(clicks) // 2
        seq_rate, seq_lat = await _clicks(drill, clicks[:half], 1)
        print(f"[{kind}] answer path, one at a time: {seq_rate:,.0f} answers/s; {summary('latency', seq_lat)}")
        if kind == "sqlite":
            conc_rate, conc_lat = await _clicks(drill, clicks[half:], concurrency)
            print(f"[{kind}] answer path, {concurrency} clients: {conc_rate:,.0f} answers/s; "
                  f"{summary('latency', conc_lat)}")
        floor_rate, floor_lat = await _engine_floor(db, FLOOR_ROWS, 1)
        print(f"[{kind}] floor: single-row INSERT+COMMIT through the same engine: {floor_rate:,.0f}/s; "
              f"{summary('latency', floor_lat)}")
        print(f"[{kind}] {ratio_line('answer path / same-engine floor, one at a time', seq_rate, floor_rate)}")
        if kind == "sqlite":
            raw = _sqlite3_floor(make_url(db.url).database or "", FLOOR_ROWS)
            print(f"[{kind}] floor: single-row INSERT+COMMIT through plain sqlite3: {raw:,.0f}/s")
            print(f"[{kind}] {ratio_line('answer path / plain sqlite3 floor', seq_rate, raw)}")
            print(f"[{kind}] {ratio_line('same engine / plain sqlite3', floor_rate, raw)}")
        else:
            await _postgres_rounds(drill, db, clicks[half:], members, concurrency)


# ---- two processes on one SQLite file ----------------------------------------------------

async def _worker(url: str, clicks_json: str) -> None:
    """One of the processes: click through the list one at a time, print latencies as JSON."""
    db = Database(url)
    drill = Drill(db, load_library(), SystemClock(), random.Random(2))
    clicks = json.loads(clicks_json)
    latencies = []
    for user, name, post_id, pos in clicks:
        who = Who("bench", "w", user, name)
        t0 = time.perf_counter()
        await drill.handle_action(who, Action(Verb.PICK, post_id, pos).encode())
        latencies.append(time.perf_counter() - t0)
    await db.dispose()
    print(json.dumps(latencies))


async def _seed_for_processes(url: str, members: int, posts: int) -> list[list]:
    db = Database(url)
    drill = Drill(db, load_library(), SystemClock(), random.Random(1))
    clicks = await _prepare(drill, members, posts)
    await db.dispose()
    return [[who.user_id, who.display_name, pid, pos] for who, pid, pos in clicks]


def run_processes(processes: int, clicks_each: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'two.db'}"
        migrate(url)
        members = 100
        posts = max(1, clicks_each // members)
        clicks = asyncio.run(_seed_for_processes(url, members, posts))[:clicks_each]
        # every process clicks the same (post, member) pairs in its own order: exactly once?
        orders = []
        for i in range(processes):
            mine = list(clicks)
            random.Random(i).shuffle(mine)
            orders.append(mine)
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.answers", "--worker", url, json.dumps(order)],
                stdout=subprocess.PIPE, text=True,
            )
            for order in orders
        ]
        results = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
        wall = time.perf_counter() - started
        everything = [v for r in results for v in r]
        for i, lat in enumerate(results):
            print(f"[sqlite, process {i + 1}/{processes}] {summary('latency', lat)} "
                  f"max={max(lat) * 1000:.1f} ms")
        print(f"[sqlite, {processes} processes] {summary('latency, all clicks', everything)} "
              f"max={max(everything) * 1000:.1f} ms; {len(everything) / wall:,.0f} clicks/s")

        async def count() -> int:
            db = Database(url)
            async with db.read() as s:
                n = await s.scalar(select(func.count()).select_from(Answer))
            await db.dispose()
            return int(n or 0)

        recorded = asyncio.run(count()) - members  # minus the warm-up answers
        verdict = "exactly once" if recorded == len(clicks) else "NOT exactly once"
        print(f"[sqlite, {processes} processes] {len(clicks)} distinct clicks sent by each process, "
              f"{recorded} recorded: {verdict}")
        p99 = percentile([v * 1000 for v in everything], 99)
        print(f"[sqlite, {processes} processes] p99 {p99:.1f} ms (target < 50 ms)")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        asyncio.run(_worker(sys.argv[2], sys.argv[3]))
        return
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--members", type=int, default=200)
    p.add_argument("--posts", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--processes", type=int, default=0, help="N processes on one SQLite file")
    p.add_argument("--clicks", type=int, default=600, help="clicks per process with --processes")
    args = p.parse_args()
    if args.processes:
        run_processes(args.processes, args.clicks)
        return
    for kind in backends(args.db):
        asyncio.run(run(kind, args.members, args.posts, args.concurrency, args.pg_admin_url))


if __name__ == "__main__":
    main()
