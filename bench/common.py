"""Shared set-up for benchmarks: fresh migrated databases on SQLite or PostgreSQL."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.storage.db import Database, migrate

PG_ADMIN = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--pg-admin-url", default=PG_ADMIN)
    return p


def backends(choice: str) -> list[str]:
    return ["sqlite", "postgres"] if choice == "both" else [choice]


@asynccontextmanager
async def fresh_database(kind: str, pg_admin_url: str = PG_ADMIN) -> AsyncIterator[Database]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
            await asyncio.to_thread(migrate, url)
            db = Database(url)
            try:
                yield db
            finally:
                await db.dispose()
        return
    name = f"torchdrill_bench_{uuid.uuid4().hex[:8]}"
    admin = Database(pg_admin_url, isolation_level="AUTOCOMMIT")
    async with admin.engine.connect() as conn:
        await conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = pg_admin_url.rsplit("/", 1)[0] + f"/{name}"
    await asyncio.to_thread(migrate, url)
    db = Database(url)
    try:
        yield db
    finally:
        await db.dispose()
        async with admin.engine.connect() as conn:
            await conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.dispose()


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(label: str, latencies_s: list[float]) -> str:
    ms = [v * 1000 for v in latencies_s]
    return (
        f"{label}: n={len(ms)} p50={percentile(ms, 50):.2f} ms p99={percentile(ms, 99):.2f} ms "
        f"mean={statistics.fmean(ms):.2f} ms"
    )


def ratio_line(label: str, figure: float, floor: float) -> str:
    """``label: 0.62`` — a figure as a share of its floor from the same run."""
    return f"ratio {label}: {figure / floor:.2f}" if floor else f"ratio {label}: n/a"
