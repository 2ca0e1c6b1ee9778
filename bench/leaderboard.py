"""Leaderboards at scale (10,000 members, 1,000,000 answers), each board next to the
hand-written SQL for the same board run through asyncpg on the same data, and their ratio.

Every scope (channel, workspace, study group) and period (week, month, all time) is timed,
plus one member's rank. The hand-written floor is what a person would write for that board:
one ``GROUP BY ... ORDER BY ... LIMIT 10`` over the answers, skipping open questions, with
the names joined. Targets (issue 14): every board within 2x of its floor, all-time boards
p99 < 50 ms (they read totals credited at each reveal). Seeding uses COPY on PostgreSQL.

    python -m bench.leaderboard [--db postgres|sqlite|both] [--members 10000] [--answers 1000000]
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.engine import make_url

from bench.common import backends, fresh_database, parser, percentile, ratio_line, summary
from bot.core.domain.periods import Period, Scope, period_start
from bot.core.progress import leaderboard
from bot.storage import scores
from bot.storage.db import Database
from bot.storage.models import Answer, Channel, GroupMember, Member, Post, StudyGroup, Workspace
from bot.storage.scores import rebuild_totals

NOW = datetime(2026, 6, 17, 12, 0, tzinfo=UTC)
CHANNELS = 20
POSTS = 2000  # ~ a year of daily posts spread over the channels
OPEN_POSTS = CHANNELS  # today's question in every channel is still open
GROUP_SIZE = 500

# The floor: written by hand for each board, the way one would without this project.
HAND = {
    "channel": "a.channel_id = $1",
    "workspace": "a.workspace_id = $1 AND a.channel_id IS NOT NULL",
    "group": "a.workspace_id = 1 AND a.channel_id IS NOT NULL "
             "AND a.member_id IN (SELECT member_id FROM group_members WHERE group_id = $1)",
}


def hand_written(scope: str, since: bool) -> str:
    period = "AND a.answered_at >= $2 " if since else ""
    return (
        "SELECT a.member_id, m.display_name, SUM(a.points) AS points, "
        "SUM(CASE WHEN a.correct THEN 1 ELSE 0 END) AS correct, COUNT(*) AS answered, "
        "MAX(CASE WHEN a.points > 0 THEN a.answered_at END) AS reached "
        f"FROM answers a JOIN members m ON m.id = a.member_id WHERE {HAND[scope]} {period}"
        "AND a.post_id NOT IN (SELECT id FROM posts WHERE closed_at IS NULL AND channel_id IS NOT NULL) "
        "GROUP BY a.member_id, m.display_name "
        "ORDER BY points DESC, SUM(CASE WHEN a.correct THEN 1 ELSE 0 END)::float / COUNT(*) DESC, "
        "reached ASC NULLS LAST, a.member_id LIMIT 10"
    )


async def seed(db: Database, members: int, answers: int, rng: random.Random) -> None:
    async with db.write() as s:
        await s.execute(insert(Workspace).values(id=1, platform="bench", external_id="w"))
        await s.execute(insert(Channel), [
            {"id": c + 1, "workspace_id": 1, "channel_id": f"c{c}", "timezone": "UTC", "speed_bonus": False}
            for c in range(CHANNELS)
        ])
        await s.execute(insert(Member), [
            {"id": m + 1, "workspace_id": 1, "user_id": f"u{m}", "display_name": f"User {m}",
             "created_at": NOW} for m in range(members)
        ])
        await s.execute(insert(Post), [
            {"id": p + 1, "kind": "daily", "question_id": f"q{p % 300}", "choice_order": "0,1,2,3",
             "channel_id": p % CHANNELS + 1, "opened_at": NOW - timedelta(days=365 * p / POSTS),
             "closed_at": None if p < OPEN_POSTS else NOW - timedelta(days=365 * p / POSTS) + timedelta(hours=12),
             "settled": p >= OPEN_POSTS} for p in range(POSTS)
        ])
        await s.execute(insert(StudyGroup).values(id=1, workspace_id=1, name="bench", name_key="bench",
                                                  created_at=NOW))
        await s.execute(insert(GroupMember), [
            {"group_id": 1, "member_id": m + 1, "joined_at": NOW}
            for m in rng.sample(range(members), min(members, GROUP_SIZE))
        ])
    per_post = max(1, answers // POSTS)
    rows = []
    for p in range(POSTS):
        opened = NOW - timedelta(days=365 * p / POSTS)
        for m in rng.sample(range(members), min(members, per_post)):
            correct = rng.random() < 0.6
            rows.append((p + 1, m + 1, 1, p % CHANNELS + 1, f"q{p % 300}", "tensors", 0, correct,
                         rng.choice((10, 20, 30)) if correct else 0, rng.randrange(60_000),
                         opened + timedelta(seconds=rng.randrange(40_000))))
    columns = ["post_id", "member_id", "workspace_id", "channel_id", "question_id", "topic",
               "choice", "correct", "points", "response_ms", "answered_at"]
    t0 = time.perf_counter()
    if db.is_sqlite:
        async with db.write() as s:
            for i in range(0, len(rows), 50_000):
                await s.execute(insert(Answer), [dict(zip(columns, r, strict=True)) for r in rows[i:i + 50_000]])
            await rebuild_totals(await s.connection())
    else:
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            await raw.driver_connection.copy_records_to_table("answers", records=rows, columns=columns)
            await rebuild_totals(conn)
            await conn.commit()
        async with db.engine.connect() as conn:
            await conn.execute(text("ANALYZE"))
            await conn.commit()
    print(f"seeded {len(rows):,} answers ({OPEN_POSTS} posts still open) in {time.perf_counter() - t0:.1f} s")


async def _time_board(
    db: Database, scope: Scope, scope_id: int, since: datetime | None, repeats: int
) -> tuple[list[float], list[leaderboard.Row]]:
    times, rows = [], []
    for _ in range(repeats):
        async with db.read() as s:
            t0 = time.perf_counter()
            rows = await scores.top(s, scope, scope_id, since, workspace_id=1)
            times.append(time.perf_counter() - t0)
    return times, rows


async def _time_hand(
    pool: Any, scope: str, scope_id: int, since: datetime | None, repeats: int
) -> tuple[list[float], list[Any]]:
    sql = hand_written(scope, since is not None)
    args = (scope_id, since) if since is not None else (scope_id,)
    times, rows = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        rows = await pool.fetch(sql, *args)
        times.append(time.perf_counter() - t0)
    return times, rows


async def run(kind: str, members: int, answers: int, repeats: int, admin: str) -> None:
    rng = random.Random(3)
    async with fresh_database(kind, admin) as db:
        await seed(db, members, answers, rng)
        pool = None
        if kind == "postgres":
            import asyncpg

            dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
        worst = 0.0
        for period in (Period.WEEK, Period.MONTH, Period.ALL):
            since = period_start(period, NOW, "UTC")
            for scope, scope_id in ((Scope.CHANNEL, 1), (Scope.WORKSPACE, 1), (Scope.GROUP, 1)):
                label = f"{period.value} {scope.value} top-10"
                times, rows = await _time_board(db, scope, scope_id, since, repeats)
                p50 = percentile(times, 50)
                line = f"[{kind}] {summary(label, times)}"
                if pool is not None:
                    hand_times, hand_rows = await _time_hand(pool, scope.value, scope_id, since, repeats)
                    same = [(r.member_id, r.points) for r in rows] == [(h["member_id"], h["points"]) for h in hand_rows]
                    hand_p50 = percentile(hand_times, 50)
                    worst = max(worst, p50 / hand_p50)
                    line += (f" | hand-written: p50={hand_p50 * 1000:.2f} ms p99={percentile(hand_times, 99) * 1000:.2f} ms"
                             f" | {ratio_line('board / hand-written (p50)', p50, hand_p50)}"
                             f"{'' if same else ' | DIFFERENT RESULTS'}")
                if period is Period.ALL:
                    line += f" | p99 {percentile(times, 99) * 1000:.1f} ms (target < 50 ms)"
                print(line)
        since = period_start(Period.WEEK, NOW, "UTC")
        times = []
        for _ in range(repeats):
            member = rng.randrange(members) + 1
            async with db.read() as s:
                t0 = time.perf_counter()
                await scores.rank_of(s, Scope.CHANNEL, 1, since, member)
                times.append(time.perf_counter() - t0)
        print(f"[{kind}] {summary('weekly channel rank of a member', times)}")
        if pool is not None:
            print(f"[{kind}] worst board / hand-written ratio (p50): {worst:.2f} (target <= 2)")
            await pool.close()


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(db="postgres")
    p.add_argument("--members", type=int, default=10_000)
    p.add_argument("--answers", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=50)
    args = p.parse_args()
    for kind in backends(args.db):
        asyncio.run(run(kind, args.members, args.answers, args.repeats, args.pg_admin_url))


if __name__ == "__main__":
    main()
