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
    python -m bench.answers --scale [--db ...] [--reveals 1000] [--burst 1000] [--parts burst,cost,reveals]

``--scale`` (issue 36): a burst of ``--burst`` known members clicking one post at concurrency 50,
p99 next to the floor (single-row INSERT+COMMIT through the same engine at the same
concurrency); and the reveal sweep of ``--reveals`` channel posts due at the same moment, next
to its floor (3 platform requests per reveal at Discord's global 50 requests/s), once paced as
it ships and once unpaced (what the database alone allows). The public count is kept in
stripes (``post_answer_counts``), so a click no longer counts the post's answers.

``--parts`` picks some of them (``burst``, ``cost``, ``reveals``); the sweep's posts each have
``REVEAL_ANSWERS`` answers, so a reveal settles streaks, credits the boards and moves estimates.

``--scale`` also prints what the online estimate update (issue 33: ability and difficulty
moved by every answer, at its post's reveal) costs per answer against the click path's time:
the same clicks and reveals with and without it, alternated over 3 rounds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.engine import make_url

from bench.common import backends, fresh_database, parser, percentile, ratio_line, summary
from bot.app import build_drill
from bot.core.content.bank import load_library
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock, SystemClock
from bot.core.domain.identity import Where, Who
from bot.core.drill.service import Drill
from bot.core.posting.fanout import POSTS_PER_S, REQUESTS_PER_REVEAL, REVEAL_WORKERS, PacedBatch
from bot.core.progress import srs
from bot.storage import hot_statements as hot
from bot.storage import posts as posts_module  # the reveal's storage: its estimate step is switched
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
            key = left[0]  # taken now: other clients move on while this one waits
            t0 = time.perf_counter()
            async with db.write() as session:
                await (await session.connection()).execute(insert, {"v": key})
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
                      "correct": True, "points": 10, "response_ms": 1000, "answered_at": now,
                      "stripe": 0, "scope_id": 0, "prior_mean": 0.0, "prior_var": 1.0}
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
        drill = build_drill(db, library, SystemClock(), random.Random(1))
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


# ---- issue 36: a click burst on one post, the reveal sweep at N posts ----------------------

BURST_CONCURRENCY = 50
GLOBAL_REQUESTS_PER_S = 50.0  # Discord's global budget: the reveal sweep's floor


SETUP_CLIENTS = 8


REVEAL_ANSWERS = 3  # members answering each post of the sweep (its reveal then has work to do)


async def _due_posts(drill: Drill, clock: FakeClock, n: int, first: int = 0,
                     answers: int = REVEAL_ANSWERS) -> None:
    """``n`` channel posts (one per channel, channels ``first``..) whose reveal time has passed,
    each answered by ``answers`` members of its own (so its reveal settles streaks, credits
    boards and moves estimates; members shared by every channel would make the reveals queue
    on their rows); set up by a few clients at once (the set-up is not measured)."""
    left = list(range(first + n - 1, first - 1, -1))

    async def client() -> None:
        while left:
            i = left.pop()
            post_id = (await drill.ask(Where("bench", "w", f"r{i}"), NullPublisher(), kind="daily")).post_id
            for j in range(answers):  # each channel its own members, as communities have
                who = Who("bench", "w", f"v{i}-{j}", f"Voter {i}-{j}")
                await drill.handle_action(who, Action(Verb.PICK, post_id, random.randrange(4)).encode())

    await asyncio.gather(*(client() for _ in range(SETUP_CLIENTS)))
    clock.advance(hours=13)


PARTS = ("burst", "cost", "reveals")


async def run_scale(kind: str, reveals: int, burst: int, admin: str, parts: tuple[str, ...] = PARTS) -> None:
    library = load_library()
    async with fresh_database(kind, admin) as db:
        clock = FakeClock(datetime.now(UTC))
        drill = build_drill(db, library, clock, random.Random(1))
        people = [Who("bench", "w", f"u{i}", f"User {i}") for i in range(burst)]
        if "burst" in parts or "cost" in parts:
            warm = (await drill.ask(Where("bench", "w", "c"), NullPublisher(), kind="daily")).post_id
            for who in people:  # members the bot knows already (as in a live community)
                await drill.handle_action(who, Action(Verb.PICK, warm, 0).encode())
        if "burst" in parts:
            floor_rate = await _burst(drill, db, kind, people, burst)
        if "cost" in parts:
            if "burst" not in parts:
                floor_rate, _lat = await _engine_floor(db, burst, BURST_CONCURRENCY)
            await _estimate_cost(drill, kind, people, floor_rate)
        if "reveals" in parts:
            await _reveal_sweep(drill, clock, kind, reveals)


async def _burst(drill: Drill, db: Database, kind: str, people: list[Who], burst: int) -> float:
    """The burst of ``burst`` members on one post, 50 at once, in rounds; returns the floor's rate."""
    bursts: dict[str, tuple[list[float], list[float]]] = {"striped": ([], []), "one row": ([], [])}
    post_id = 0
    for r in range(BURST_ROUNDS):  # the shipped striped count and one counter row, in turn
        order = ("striped", "one row") if r % 2 == 0 else ("one row", "striped")
        for variant in order if kind == "postgres" else ("striped",):  # SQLite keeps one row anyway
            post_id = (await drill.ask(Where("bench", "w", "c"), NullPublisher(), kind="daily")).post_id
            clicks = [(who, post_id, random.randrange(4)) for who in people]
            gc.collect()  # not inside a round (no collection > 5 ms was seen in one, either)
            with _one_counter_row(variant == "one row"), _loop_lag() as lag:
                rate, lat = await _clicks(drill, clicks, BURST_CONCURRENCY)
            bursts[variant][0].append(rate)
            bursts[variant][1].extend(lat)
            print(f"[{kind}] burst round {r + 1}, count {variant}: {rate:,.0f} answers/s; {summary('latency', lat)}; "
                  f"event loop late by up to {max(lag, default=0.0) * 1000:.0f} ms (this process starved); "
                  f"load average {_loadavg()}")
            if variant == "striped":
                await _check_count(db, kind, post_id, burst)
    floor_rate, floor_lat = await _engine_floor(db, burst, BURST_CONCURRENCY)
    print(f"[{kind}] floor: single-row INSERT+COMMIT, {BURST_CONCURRENCY} at once: {floor_rate:,.0f}/s; "
          f"{summary('latency', floor_lat)}")
    for variant, (rates, lat) in bursts.items():
        if not rates:
            continue
        rate = statistics.median(rates)
        print(f"[{kind}] burst, count {variant}: {burst} members on one post, {BURST_CONCURRENCY} at once "
              f"({BURST_ROUNDS} rounds): {rate:,.0f} answers/s (median); {summary('latency', lat)}")
        print(f"[{kind}] burst, count {variant}: p99 {percentile(lat, 99) * 1000:.1f} ms next to the floor's "
              f"{percentile(floor_lat, 99) * 1000:.1f} ms (target < 250 ms); "
              f"{ratio_line('burst p99 / floor p99', percentile(lat, 99), percentile(floor_lat, 99))}; "
              f"{ratio_line('burst rate / floor rate', rate, floor_rate)}")
    return floor_rate


async def _reveal_sweep(drill: Drill, clock: FakeClock, kind: str, reveals: int) -> None:
    """The sweep of ``reveals`` posts due at once: unpaced (the database alone), then as shipped
    (paced) next to its floor, Discord's global budget for their requests."""
    floor_s = reveals * REQUESTS_PER_REVEAL / GLOBAL_REQUESTS_PER_S
    t0 = time.perf_counter()
    await _due_posts(drill, clock, reveals)
    print(f"[{kind}] set-up: {reveals} channels' posts due at once, {REVEAL_ANSWERS} answers each "
          f"({time.perf_counter() - t0:.0f} s, not measured); load average {_loadavg()}")
    paced = drill.reveals
    drill.reveals = PacedBatch(REVEAL_WORKERS, {}, 1e9, "reveal of post")  # no pace
    t0 = time.perf_counter()
    done = await drill.reveal_due(NullPublisher())
    unpaced = time.perf_counter() - t0
    print(f"[{kind}] reveal sweep of {done} posts unpaced (the database alone): {unpaced:.1f} s "
          f"({unpaced / max(done, 1) * 1000:.1f} ms a post, {REVEAL_WORKERS} at once)")
    drill.reveals = paced
    await _due_posts(drill, clock, reveals, first=reveals)  # new channels: the same work again
    t0 = time.perf_counter()
    done = await drill.reveal_due(NullPublisher())
    took = time.perf_counter() - t0
    ours = reveals / (POSTS_PER_S["discord"] / REQUESTS_PER_REVEAL)
    print(f"[{kind}] reveal sweep of {done} posts as shipped (paced): {took:.1f} s; "
          f"{ratio_line('sweep / floor', took, floor_s)} (floor {floor_s:.1f} s: "
          f"{REQUESTS_PER_REVEAL} requests a reveal at Discord's global {GLOBAL_REQUESTS_PER_S:.0f}/s; "
          f"our own pace, {POSTS_PER_S['discord']:.0f}/{REQUESTS_PER_REVEAL} reveals/s, allows "
          f"{ours:.1f} s = {ours / floor_s:.2f}; peak {paced.peak} at once; target <= 2x); "
          f"peak RSS {_rss_mb():.0f} MB; load average {_loadavg()}")


@contextmanager
def _loop_lag() -> Iterator[list[float]]:
    """How late a 5 ms timer fires while the block runs: a stall of this process (CPU starved,
    a long collection, blocking code) shows here, a wait on the database does not."""
    lags: list[float] = []
    loop = asyncio.get_running_loop()
    state = {"on": True}

    def tick(due: float) -> None:
        lags.append(max(0.0, loop.time() - due))
        if state["on"]:
            loop.call_at(loop.time() + 0.005, tick, loop.time() + 0.005)

    loop.call_at(loop.time() + 0.005, tick, loop.time() + 0.005)
    try:
        yield lags
    finally:
        state["on"] = False


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


BURST_ROUNDS = 4


@contextmanager
def _one_counter_row(on: bool) -> Iterator[None]:
    """The held-back design for comparison: every click of a post bumps the same counter row."""
    saved = hot._next_stripe
    if on:
        hot._next_stripe = lambda: 0
    try:
        yield
    finally:
        hot._next_stripe = saved


async def _check_count(db: Database, kind: str, post_id: int, expected: int) -> None:
    async with db.read() as session:
        shown = await session.scalar(text(
            "SELECT coalesce(sum(n), 0) FROM post_answer_counts WHERE post_id = :p"), {"p": post_id})
        stored = await session.scalar(select(func.count()).select_from(Answer).where(Answer.post_id == post_id))
    print(f"[{kind}] burst: kept count {shown}, answers recorded {stored}: "
          f"{'equal' if shown == stored == expected else 'NOT equal'}")


@contextmanager
def _without_estimates() -> Iterator[None]:
    """Reveals with the online estimate update left out (bench-only switch)."""
    saved = posts_module.apply_revealed

    async def skip(session: Any, post_id: int, question: Any, now: datetime) -> int:
        return 0

    posts_module.apply_revealed = skip  # type: ignore[assignment]  # bench-only switch
    try:
        yield
    finally:
        posts_module.apply_revealed = saved


@contextmanager
def _timing_estimates(spent: list[float]) -> Iterator[None]:
    """Reveals with the online update as shipped, its own wall time (inside the reveal's
    transaction) added to ``spent``."""
    saved = posts_module.apply_revealed

    async def timed(session: Any, post_id: int, question: Any, now: datetime) -> int:
        t0 = time.perf_counter()
        try:
            return await saved(session, post_id, question, now)
        finally:
            spent.append(time.perf_counter() - t0)

    posts_module.apply_revealed = timed  # type: ignore[assignment]  # bench-only probe
    try:
        yield
    finally:
        posts_module.apply_revealed = saved


ESTIMATE_CONCURRENCY = 8
ESTIMATE_POSTS = 2  # per half round: 2 posts x the burst's members
ESTIMATE_ROUNDS = 5


async def _estimate_cost(drill: Drill, kind: str, people: list[Who], floor_rate: float) -> None:
    """Issue 33's cost: the online update runs at the reveal, once per post, for all its answers.
    The same clicks and the reveal of their posts, with and without the update, in turn; the
    update's time per answer (reveal with - reveal without) against the click path's time per
    answer, whose floor (single-row INSERT+COMMIT, this run) is printed beside it."""
    where = Where("bench", "w", "c")
    click_s: dict[bool, list[float]] = {True: [], False: []}  # wall time per answer
    reveal_s: dict[bool, list[float]] = {True: [], False: []}
    click_cpu: dict[bool, list[float]] = {True: [], False: []}  # this process's CPU per answer
    reveal_cpu: dict[bool, list[float]] = {True: [], False: []}
    own: list[float] = []  # the update's own wall time per answer, round by round
    for r in range(ESTIMATE_ROUNDS):
        for with_update in ((True, False) if r % 2 == 0 else (False, True)):
            posts = [(await drill.ask(where, NullPublisher(), kind="daily")).post_id
                     for _ in range(ESTIMATE_POSTS)]
            clicks = [(who, pid, random.randrange(4)) for pid in posts for who in people]
            random.shuffle(clicks)
            # a full collection now, not at a random moment inside one variant's timing (a
            # generation-2 pass takes 70-170 ms here, as much as a reveal of 1,000 answers)
            gc.collect()
            cpu0, t0 = time.process_time(), time.perf_counter()
            rate, _lat = await _clicks(drill, clicks, ESTIMATE_CONCURRENCY)
            gc.collect()
            cpu1, t1 = time.process_time(), time.perf_counter()
            spent: list[float] = []
            if with_update:
                with _timing_estimates(spent):
                    for pid in posts:
                        await drill.reveal_post(pid, where, NullPublisher())
            else:
                with _without_estimates():
                    for pid in posts:
                        await drill.reveal_post(pid, where, NullPublisher())
            cpu2, t2 = time.process_time(), time.perf_counter()
            n = len(clicks)
            if with_update:
                own.append(sum(spent) / n)
            click_s[with_update].append((t1 - t0) / n)
            click_cpu[with_update].append((cpu1 - cpu0) / n)
            reveal_s[with_update].append((t2 - t1) / n)
            reveal_cpu[with_update].append((cpu2 - cpu1) / n)
    med = statistics.median
    click = med(click_s[True] + click_s[False])
    cpu = med(click_cpu[True] + click_cpu[False])
    print(f"[{kind}] click path, {ESTIMATE_CONCURRENCY} clients: {click * 1e6:.0f} us per answer "
          f"({1 / click:,.0f} answers/s; with the update at the reveal {med(click_s[True]) * 1e6:.0f} us, "
          f"without {med(click_s[False]) * 1e6:.0f} us); floor (single-row INSERT+COMMIT, {BURST_CONCURRENCY} at once, this run) "
          f"{floor_rate:,.0f}/s = {1e6 / floor_rate:.0f} us; CPU {cpu * 1e6:.0f} us per answer")
    added = med(reveal_s[True]) - med(reveal_s[False])
    added_cpu = med(reveal_cpu[True]) - med(reveal_cpu[False])
    print(f"[{kind}] the reveal, per answer: {med(reveal_s[True]) * 1e6:.0f} us with the online update, "
          f"{med(reveal_s[False]) * 1e6:.0f} us without (CPU {med(reveal_cpu[True]) * 1e6:.0f} / "
          f"{med(reveal_cpu[False]) * 1e6:.0f} us)")
    where_cpu = "the whole work" if kind == "sqlite" else "the bot's side only, not PostgreSQL's"
    print(f"[{kind}] the online update adds {added * 1e6:.0f} us per answer = {added / click * 100:+.1f}% "
          f"of the click path's time ({added_cpu * 1e6:.0f} us CPU = {added_cpu / cpu * 100:+.1f}% of "
          f"the click's CPU, {where_cpu}); at the click itself: nothing (target <= +10%; "
          f"median of {ESTIMATE_ROUNDS} rounds, reveal with - reveal without)")
    print(f"[{kind}] the online update's own time in the reveal's transaction: {med(own) * 1e6:.0f} us per "
          f"answer = {med(own) / click * 100:+.1f}% of the click path's time (rounds: "
          f"{', '.join(f'{v * 1e6:.0f}' for v in own)} us); load average {_loadavg()}")


# ---- two processes on one SQLite file ----------------------------------------------------

async def _worker(url: str, clicks_json: str) -> None:
    """One of the processes: click through the list one at a time, print latencies as JSON."""
    db = Database(url)
    drill = build_drill(db, load_library(), SystemClock(), random.Random(2))
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
    drill = build_drill(db, load_library(), SystemClock(), random.Random(1))
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
    p.add_argument("--scale", action="store_true", help="issue 36: click burst and reveal sweep")
    p.add_argument("--reveals", type=int, default=1000)
    p.add_argument("--burst", type=int, default=1000)
    p.add_argument("--parts", default=",".join(PARTS),
                   help="with --scale: which of burst,cost,reveals to run (e.g. --parts reveals)")
    args = p.parse_args()
    if args.scale:
        parts = tuple(x for x in args.parts.split(",") if x)
        unknown = set(parts) - set(PARTS)
        if unknown:
            p.error(f"unknown --parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
        for kind in backends(args.db):
            asyncio.run(run_scale(kind, args.reveals, args.burst, args.pg_admin_url, parts))
        return
    if args.processes:
        run_processes(args.processes, args.clicks)
        return
    for kind in backends(args.db):
        asyncio.run(run(kind, args.members, args.posts, args.concurrency, args.pg_admin_url))


if __name__ == "__main__":
    main()
