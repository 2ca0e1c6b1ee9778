"""N channels whose daily question is due at the same minute: time until all are posted next
to the platform's floor (N / 50 requests/s, Discord's global limit), missing and duplicate
posts, the bot's peak RSS, and rows PostgreSQL read per post.

The bot runs as it ships (bot.app.build_app, the real discord.py adapter) in child processes
against a fake Discord in this process that enforces Discord's limits (50 requests/s global,
per-channel route buckets, 429 + retry_after). Each child's 09:00 cron job for every channel
fires at once (the scheduler's own entry), then the sweep runs until nothing is left, as its
periodic tick would. ``--replicas 2`` runs two bot processes on one PostgreSQL database that
both fire every channel: the claims split the work. Targets (issue 36): 5,000 channels all
posted exactly once within 2x the floor, peak RSS <= 500 MB, rows read per post flat in N.

    python -m bench.fanout [--db sqlite|postgres|both] [--channels 100,1000] [--replicas 1]

``FANOUT_CHILD`` replaces the command that starts a bot process (e.g. to run it under a profiler).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from sqlalchemy import insert, text

from bench.common import backends, fresh_database, parser, ratio_line
from bot.storage.db import Database
from bot.storage.models import Channel, Schedule, Workspace
from tests.support.fake_discord import GLOBAL_PER_S, FakeDiscord

REPO = Path(__file__).resolve().parents[1]
BEFORE = datetime(2026, 3, 4, 8, 59, 59, tzinfo=UTC)
FIRE = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
SWEEPS = 20
CHILD = os.environ.get("FANOUT_CHILD", f"{sys.executable} -m bench.fanout").split()


async def seed(db: Database, fake: FakeDiscord, n: int) -> list[int]:
    """One guild, ``n`` channels with a daily schedule at 09:00 UTC (bulk rows, no commands)."""
    async with db.write() as session:
        ws = (await session.execute(insert(Workspace).values(
            platform="discord", external_id=str(fake.guild_id), name="bench").returning(Workspace.id))).scalar_one()
        channels = [fake.channel_id + i for i in range(n)]
        fake.channels.update(channels)
        rows = (await session.execute(insert(Channel).returning(Channel.id), [
            {"workspace_id": ws, "channel_id": str(c), "name": f"room-{i}", "timezone": "UTC"}
            for i, c in enumerate(channels)])).scalars().all()
        await session.execute(insert(Schedule), [
            {"channel_id": pk, "time_of_day": "09:00", "timezone": "UTC", "weekdays": "mon,tue,wed,thu,fri,sat,sun",
             "reveal_after_minutes": 720, "paused": False, "updated_at": BEFORE} for pk in rows])
    return list(rows)


async def rows_read(db: Database) -> int | None:
    if db.is_sqlite:
        return None
    async with db.engine.connect() as conn:
        await conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
        found = await conn.execute(text(
            "SELECT tup_returned + tup_fetched FROM pg_stat_database WHERE datname = current_database()"))
        return int(found.scalar_one())


async def child(url: str, api: str, gateway: str, token: str) -> None:
    """One bot process: build, start, fire every channel at 09:00 on 'go', sweep, report."""
    from bot.adapters.discord.bot import DiscordAdapter
    from bot.app import build_app
    from bot.config import Settings
    from bot.core.domain.clock import FakeClock

    clock = FakeClock(BEFORE)
    settings = Settings(_env_file=None, database_url=url,  # type: ignore[call-arg]  # pydantic-settings' own
                        discord_token=SecretStr(token), discord_api_base_url=api,
                        discord_gateway_url=gateway)
    app = await build_app(settings, clock=clock, with_runner=False)
    adapter = DiscordAdapter(app)
    app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    await app.start()
    pks = [v.channel_pk for v in await app.daily.schedules.all()]
    print(json.dumps({"ready": True}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    clock.set(FIRE)
    start = time.perf_counter()
    for pk in pks:  # every channel's cron job, at the same minute
        await app.scheduler.fire_daily(pk, "discord")
    await app.scheduler.queue.drained(3600)
    for _ in range(SWEEPS):
        await app.scheduler.sweep()
        if not app.scheduler.queue.pending():
            break
        await app.scheduler.queue.drained(3600)
    done_s = time.perf_counter() - start
    detail = app.scheduler.detail()
    await adapter.close()
    await app.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"done_s": done_s, "rss_mb": rss_mb, **detail}), flush=True)


async def measured_floor(fake: FakeDiscord, n: int, workers: int = 16) -> float:
    """Seconds a bare client takes to post ``n`` messages to this fake at exactly its global
    budget (request i starts at i / 50 s), in the same run and under the same load as the bot:
    the platform floor as this machine can reach it (N / 50 s when the machine is idle)."""
    import aiohttp

    first = fake.channel_id + 10_000_000  # channels of their own, one message each
    fake.channels.update(range(first, first + n))
    url, headers = fake.api_base_url, {"Authorization": f"Bot {fake.token}"}
    loop = asyncio.get_running_loop()
    start = loop.time()
    todo = iter(range(n))

    async def worker(http: aiohttp.ClientSession) -> None:
        for i in todo:
            await asyncio.sleep(max(0.0, start + i / GLOBAL_PER_S - loop.time()))
            while True:  # a 429 (another request in the same second) is waited out, as the bot does
                async with http.post(f"{url}/channels/{first + i}/messages", headers=headers,
                                     json={"content": f"floor {i}"}) as answer:
                    if answer.status != 429:
                        answer.raise_for_status()
                        break
                    await asyncio.sleep(float((await answer.json())["retry_after"]))

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(worker(http) for _ in range(workers)))
    return loop.time() - start


async def run_one(kind: str, n: int, replicas: int, pg_admin: str) -> dict[str, Any]:
    fake = FakeDiscord()
    await fake.start()
    try:
        async with fresh_database(kind, pg_admin) as db:
            await seed(db, fake, n)
            procs = []
            for _ in range(replicas):
                procs.append(await asyncio.create_subprocess_exec(
                    *CHILD, "--child", db.url, fake.api_base_url,
                    fake.gateway_url, fake.token, cwd=REPO, stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)}))
            for proc in procs:
                assert proc.stdout is not None
                line = await asyncio.wait_for(proc.stdout.readline(), 600)
                if not line:
                    raise RuntimeError("a bot process died before it was ready")
            before = await rows_read(db)
            start = time.perf_counter()
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(b"go\n")
                await proc.stdin.drain()
            all_posted = await fake.wait_until(lambda: len(fake.messages) >= n, timeout=max(600, n))
            posted_s = time.perf_counter() - start if all_posted else float("nan")
            reports = []
            for proc in procs:
                assert proc.stdout is not None
                out, _ = await proc.communicate()
                reports.append(json.loads(out.decode().strip().splitlines()[-1]))
            after = await rows_read(db)
            throttled = len(fake.throttled)
            per_channel = Counter(m["channel_id"] for m in fake.messages.values())
            floor_run_s = await measured_floor(fake, n)
    finally:
        await fake.stop()
    channels = {str(fake.channel_id + i) for i in range(n)}
    return {
        "db": kind, "n": n, "replicas": replicas, "posted_s": posted_s, "floor_s": n / GLOBAL_PER_S,
        "floor_run_s": floor_run_s,
        "missing": len(channels - set(per_channel)),
        "duplicates": sum(c - 1 for c in per_channel.values() if c > 1),
        "rss_mb": max(r["rss_mb"] for r in reports),
        "rows_per_post": (after - before) / n if before is not None and after is not None else None,
        "throttled": throttled, "late": sum(r["late"] for r in reports),
        "failed": sum(r["failed"] for r in reports),
    }


def line(r: dict[str, Any]) -> str:
    rows = f"{r['rows_per_post']:.1f}" if r["rows_per_post"] is not None else "n/a"
    return (f"{r['db']:8} N={r['n']:5} replicas={r['replicas']}: all posted in {r['posted_s']:.1f} s "
            f"(floor {r['floor_s']:.1f} s) missing={r['missing']} duplicates={r['duplicates']} "
            f"peak RSS={r['rss_mb']:.0f} MB rows read/post={rows} 429s={r['throttled']} "
            f"failed tries={r['failed']}\n  bare client at the platform budget in the same run: "
            f"{r['floor_run_s']:.1f} s\n  " + ratio_line("time to all posted / floor", r["posted_s"], r["floor_s"])
            + "\n  " + ratio_line("time to all posted / measured floor", r["posted_s"], r["floor_run_s"]))


async def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--channels", default=None, help="comma-separated N (default: 100,1000,5000 "
                   "on PostgreSQL, 100,1000 on SQLite)")
    p.add_argument("--replicas", type=int, default=1)
    args = p.parse_args()
    for kind in backends(args.db):
        default = "100,1000,5000" if kind == "postgres" else "100,1000"
        for n in (int(x) for x in (args.channels or default).split(",")):
            replicas = args.replicas if kind == "postgres" else 1
            print(line(await run_one(kind, n, replicas, args.pg_admin_url)), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        asyncio.run(child(*sys.argv[2:6]))
    else:
        asyncio.run(main())
