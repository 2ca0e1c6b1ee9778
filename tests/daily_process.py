"""Run one daily post attempt in its own process (used by the exactly-once test).

Usage: python tests/daily_process.py DB_URL OUT_FILE START_AT
It waits until START_AT (epoch seconds) so both processes race, then appends the refs it
published to OUT_FILE.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bot.config import Settings
from bot.core.clock import FakeClock


class FilePublisher:
    def __init__(self, out: Path) -> None:
        self.out = out

    async def publish(self, where, message, *, thread_of=None) -> str:
        ref = f"{where.channel_id}-{time.monotonic_ns()}"
        with self.out.open("a") as fh:
            fh.write(f"{ref}\n")
        return ref

    async def update(self, where, ref, message) -> None:
        pass


async def main(url: str, out: Path, start_at: float) -> None:
    from bot.app import build_app
    from bot.core.daily import all_schedules

    clock = FakeClock(datetime(2026, 3, 4, 8, 0, 5, tzinfo=UTC))  # 09:00:05 Berlin
    app = await build_app(Settings(database_url=url), clock=clock, with_runner=False)
    app.publisher.register("discord", FilePublisher(out))
    views = await all_schedules(app.db)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    await asyncio.gather(*(app.daily.fire(v.channel_pk) for v in views))
    await app.db.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])))
