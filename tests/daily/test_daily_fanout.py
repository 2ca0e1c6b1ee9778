"""Fires at the same minute become queued work: bounded workers, one post per channel, and a
sweep that posts what a failed (or never run) fire left missing, named once in the log."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from bot.app import build_daily
from bot.core.daily.service import DailyPosting
from bot.core.domain.identity import Where
from bot.core.posting.fanout import Pace, PostingQueue
from bot.scheduler import DailyScheduler


class CountingPublisher:
    """Records posts and the most publishes it saw in flight at once."""

    def __init__(self) -> None:
        self.posts: list[str] = []
        self.in_flight = 0
        self.peak = 0

    async def publish(self, where, message, *, thread_of=None) -> str:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            self.posts.append(where.channel_id)
            return f"{where.channel_id}:{len(self.posts)}"
        finally:
            self.in_flight -= 1

    async def update(self, where, ref, message) -> None:
        pass


def here(i: int) -> Where:
    return Where("discord", "g1", f"c{i}", f"room-{i}")


@pytest.fixture
def counting() -> CountingPublisher:
    return CountingPublisher()


@pytest.fixture
def daily(drill, counting) -> DailyPosting:
    return build_daily(drill, counting)


async def schedule(daily: DailyPosting, n: int) -> list[int]:
    for i in range(n):
        await daily.set_schedule(here(i), at="09:00", timezone="UTC", weekdays="daily")
    return [s.channel_pk for s in await _views(daily)]


async def _views(daily: DailyPosting):
    return await daily.schedules.all()


async def test_fires_at_one_minute_post_each_channel_once_with_bounded_workers(daily, counting, clock) -> None:
    pks = await schedule(daily, 12)
    scheduler = DailyScheduler(daily, queue=PostingQueue(workers=3, posts_per_s={"discord": 1000.0}))
    scheduler.queue.start()
    try:
        for pk in pks:
            await scheduler.fire_daily(pk, "discord")
            await scheduler.fire_daily(pk, "discord")  # a second fire of a queued channel is folded
        await scheduler.queue.drained(30)
    finally:
        scheduler.shutdown()
    assert sorted(counting.posts) == sorted(f"c{i}" for i in range(12))
    assert 1 <= counting.peak <= 3
    assert scheduler.detail()["done"] == 12 and scheduler.detail()["failed"] == 0


async def test_a_fire_that_fails_before_its_claim_is_posted_by_the_next_sweep_and_logged_once(
    daily, counting, clock, caplog, monkeypatch
) -> None:
    [pk] = await schedule(daily, 1)
    clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    scheduler = DailyScheduler(daily, queue=PostingQueue(workers=2))
    scheduler.queue.start()
    real = daily.post_due

    async def pool_timeout(channel_pk, fire_time):  # as a dry connection pool fails the read
        raise TimeoutError("QueuePool limit reached, connection timed out")

    monkeypatch.setattr(daily, "post_due", pool_timeout)
    caplog.set_level(logging.WARNING)
    try:
        await scheduler.fire_daily(pk, "discord")
        await scheduler.queue.drained(10)
        assert counting.posts == [] and scheduler.detail()["failed"] == 1
        monkeypatch.setattr(daily, "post_due", real)
        clock.set(datetime(2026, 3, 4, 9, 1, tzinfo=UTC))
        await scheduler.sweep()
        await scheduler.queue.drained(10)
        await scheduler.sweep()  # posted: nothing left to queue, nothing logged again
        await scheduler.queue.drained(10)
    finally:
        scheduler.shutdown()
    assert counting.posts == ["c0"]
    late = [r.getMessage() for r in caplog.records if "missing past its time" in r.getMessage()]
    assert late == ["daily post of discord:c0 for 2026-03-04 was missing past its time; posting it late"]
    assert scheduler.detail()["late"] == 1 and scheduler.detail()["missed"] == 0


async def test_a_post_missing_past_the_grace_is_counted_missed_once_and_not_posted(
    daily, counting, clock, caplog
) -> None:
    clock.set(datetime(2026, 3, 4, 8, 0, tzinfo=UTC))
    await schedule(daily, 1)
    scheduler = DailyScheduler(daily, queue=PostingQueue(workers=1))
    scheduler._started_at = clock.now()  # this process was up at 09:00 but its fire never ran
    scheduler.queue.start()
    caplog.set_level(logging.WARNING)
    try:
        clock.set(datetime(2026, 3, 4, 12, 30, tzinfo=UTC))  # 3 h 30 after 09:00: past the grace
        await scheduler.sweep()
        await scheduler.sweep()
        await scheduler.queue.drained(10)
    finally:
        scheduler.shutdown()
    assert counting.posts == []
    missed = [r.getMessage() for r in caplog.records if "was missed" in r.getMessage()]
    assert missed == ["daily post of discord:c0 for 2026-03-04 was missed (not posted within the "
                      "catch-up grace)"]
    assert scheduler.detail()["missed"] == 1 and scheduler.detail()["last_missed"] == ["discord:c0 2026-03-04"]


async def test_the_pace_spaces_takes_at_its_rate() -> None:
    pace = Pace(rate=200.0)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(21):
        await pace.take()
    assert loop.time() - start >= 20 / 200.0 * 0.9


async def test_readyz_and_metrics_of_the_served_app_show_a_missed_post(tmp_path, sqlite_template, counting) -> None:
    import json
    import shutil

    import aiohttp

    from bot.app import build_app
    from bot.config import Settings
    from bot.core.domain.clock import FakeClock
    from bot.observability.health import make_health_app, start_http

    path = tmp_path / "readyz.db"
    shutil.copy(sqlite_template, path)
    clock = FakeClock(datetime(2026, 3, 4, 8, 0, tzinfo=UTC))
    app = await build_app(Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{path}"),
                          clock=clock, with_runner=False)
    app.publisher.register("discord", counting)
    runner = None
    try:
        await app.daily.set_schedule(here(7), at="09:00", timezone="UTC", weekdays="daily")
        await app.scheduler.start()  # up at 08:00; its 09:00 fire never runs in this test
        clock.set(datetime(2026, 3, 4, 12, 30, tzinfo=UTC))
        await app.scheduler.sweep()
        runner = await start_http(make_health_app(app.health_checks()), "127.0.0.1", 0)  # type: ignore[arg-type]
        host, port = runner.addresses[0][:2]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://{host}:{port}/readyz") as response:
                ready = json.loads(await response.text())
            async with session.get(f"http://{host}:{port}/metrics") as response:
                metrics = await response.text()
    finally:
        if runner is not None:
            await runner.cleanup()
        await app.close()
    assert ready["details"]["posting"] == {"queued": 0, "in_flight": 0, "done": 0, "failed": 0, "late": 0,
                                           "missed": 1, "last_missed": ["discord:c7 2026-03-04"]}
    assert 'torchdrill_posts_missed_total{kind="daily"}' in metrics and counting.posts == []
