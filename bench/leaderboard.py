"""Leaderboard query time at scale: 10,000 members and 1,000,000 answers.

Times the weekly channel top-10 and one member's rank (target: under 50 ms on PostgreSQL,
thanks to the covering indexes on answers). Seeding uses bulk inserts (COPY on PostgreSQL).

    python bench/leaderboard.py [--db postgres|sqlite|both] [--members 10000] [--answers 1000000]
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, text

from bench.common import backends, fresh_database, parser, summary
from bot.core import leaderboard
from bot.core.periods import Period, Scope, period_start
from bot.storage.db import Database
from bot.storage.models import Answer, Channel, Member, Post, Workspace

NOW = datetime(2026, 6, 17, 12, 0, tzinfo=UTC)
CHANNELS = 20
POSTS = 2000  # ~ a year of daily posts spread over the channels


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
             "settled": True} for p in range(POSTS)
        ])
    per_post = max(1, answers // POSTS)
    rows = []
    seen: set[tuple[int, int]] = set()
    for p in range(POSTS):
        opened = NOW - timedelta(days=365 * p / POSTS)
        for m in rng.sample(range(members), min(members, per_post)):
            if (p, m) in seen:
                continue
            seen.add((p, m))
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
    else:
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            await raw.driver_connection.copy_records_to_table("answers", records=rows, columns=columns)
            await conn.commit()
        async with db.engine.connect() as conn:
            await conn.execute(text("ANALYZE"))
            await conn.commit()
    print(f"seeded {len(rows):,} answers in {time.perf_counter() - t0:.1f} s")


async def run(kind: str, members: int, answers: int, repeats: int, admin: str) -> None:
    rng = random.Random(3)
    async with fresh_database(kind, admin) as db:
        await seed(db, members, answers, rng)
        since = period_start(Period.WEEK, NOW, "UTC")
        for label, scope, scope_id, period_since in (
            ("weekly channel top-10", Scope.CHANNEL, 1, since),
            ("weekly workspace top-10", Scope.WORKSPACE, 1, since),
            ("all-time channel top-10", Scope.CHANNEL, 1, None),
        ):
            times = []
            for _ in range(repeats):
                async with db.read() as s:
                    t0 = time.perf_counter()
                    rows = await leaderboard.top(s, scope, scope_id, period_since)
                    times.append(time.perf_counter() - t0)
            print(f"[{kind}] {summary(label, times)} (top: {rows[0].points if rows else 0} pts)")
        times = []
        for _ in range(repeats):
            member = rng.randrange(members) + 1
            async with db.read() as s:
                t0 = time.perf_counter()
                await leaderboard.rank_of(s, Scope.CHANNEL, 1, since, member)
                times.append(time.perf_counter() - t0)
        print(f"[{kind}] {summary('weekly channel rank of a member', times)}")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(db="postgres")
    p.add_argument("--members", type=int, default=10_000)
    p.add_argument("--answers", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    for kind in backends(args.db):
        asyncio.run(run(kind, args.members, args.answers, args.repeats, args.pg_admin_url))


if __name__ == "__main__":
    main()
