"""Daily posts: schedule input, DST, exactly-once claims across processes, crash recovery."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from bot.app import build_daily
from bot.core.daily.service import (
    ScheduleError,
    parse_time,
    parse_weekdays,
)
from bot.core.domain.identity import Where
from bot.scheduler import DailyScheduler, cron_for
from bot.storage.identity import channel_row
from bot.storage.models import DailyClaim, Post

BERLIN = Where("discord", "g1", "c1", "general")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def daily(drill, publisher):
    return build_daily(drill, publisher)


def test_parse_time_and_weekdays_accept_friendly_forms_and_name_bad_values() -> None:
    assert parse_time("9") == "09:00" and parse_time("17:30") == "17:30" and parse_time("9pm") == "21:00"
    assert parse_weekdays("weekdays") == ["mon", "tue", "wed", "thu", "fri"]
    assert parse_weekdays("fri-mon") == ["mon", "fri", "sat", "sun"]
    assert parse_weekdays("Monday, Wednesday") == ["mon", "wed"]
    for bad in ("25:00", "9:75", "noon-ish"):
        with pytest.raises(ScheduleError, match=bad):
            parse_time(bad)
    with pytest.raises(ScheduleError, match="funday"):
        parse_weekdays("funday")


async def test_schedule_commands_and_clear_errors(daily):
    bad_tz = await daily.set_schedule(BERLIN, at="09:00", timezone="Mars/Olympus")
    assert "unknown timezone 'Mars/Olympus'" in bad_tz.plain()
    bad_time = await daily.set_schedule(BERLIN, at="31:00", timezone="UTC")
    assert "invalid time '31:00'" in bad_time.plain()
    bad_topic = await daily.set_schedule(BERLIN, at="9:00", topic="astrology")
    assert "unknown topic 'astrology'" in bad_topic.plain()
    assert "no daily schedule yet" in (await daily.set_paused(BERLIN, True)).plain()
    ok = await daily.set_schedule(BERLIN, at="9:00", timezone="Europe/Berlin", weekdays="mon-fri")
    text = ok.plain()
    assert "09:00 Europe/Berlin on mon,tue,wed,thu,fri" in text
    assert "Next question: Thu 05 Mar 09:00 CET" in text  # clock is Wed 2026-03-04 09:00 UTC
    assert "paused" in (await daily.set_paused(BERLIN, True)).plain()
    assert "⏸ paused" in (await daily.status(BERLIN)).plain()
    assert "resumed" in (await daily.set_paused(BERLIN, False)).plain()
    async with daily.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Post)) == 0  # scheduling posts nothing


async def test_dst_posts_at_nine_local_on_both_sides(daily, clock, publisher):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")
    (view,) = await daily.schedules.all()
    # DST starts in Berlin on Sunday 2026-03-29
    assert view.fire_time_on(date(2026, 3, 28)) == datetime(2026, 3, 28, 8, 0, tzinfo=UTC)
    assert view.fire_time_on(date(2026, 3, 30)) == datetime(2026, 3, 30, 7, 0, tzinfo=UTC)
    # APScheduler's cron trigger agrees
    trigger = cron_for(view)
    before = trigger.get_next_fire_time(None, datetime(2026, 3, 28, 0, 0, tzinfo=UTC))
    after = trigger.get_next_fire_time(None, datetime(2026, 3, 30, 0, 0, tzinfo=UTC))
    assert before.astimezone(UTC) == datetime(2026, 3, 28, 8, 0, tzinfo=UTC)
    assert after.astimezone(UTC) == datetime(2026, 3, 30, 7, 0, tzinfo=UTC)
    # driving the catch-up with a fake clock: nothing before 09:00 local, one post at 09:00
    for day, utc_hour in ((28, 8), (30, 7)):
        clock.set(datetime(2026, 3, day, utc_hour - 1, 59, tzinfo=UTC))
        assert await daily.catch_up() == []
        clock.set(datetime(2026, 3, day, utc_hour, 0, tzinfo=UTC))
        assert len(await daily.catch_up()) == 1
        assert await daily.catch_up() == []  # claimed: never twice
    async with daily.db.read() as s:
        opened = [p.opened_at for p in await s.scalars(select(Post).order_by(Post.id))]
    hours = [o.replace(tzinfo=UTC).astimezone(ZoneInfo("Europe/Berlin")).hour for o in opened]
    assert hours == [9, 9]


async def test_restart_a_few_minutes_late_still_posts_once(daily, clock, publisher):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")
    clock.set(datetime(2026, 3, 4, 8, 7, tzinfo=UTC))  # 09:07 Berlin: the bot was down at 09:00
    scheduler = DailyScheduler(daily)
    await scheduler.start()
    try:
        assert len([p for p in publisher.posts if p[2] is None]) == 1
        nxt = scheduler.next_runs()
        assert any(k.startswith("daily:") for k in nxt)
        await scheduler.tick()
        await daily.catch_up()
        assert len([p for p in publisher.posts if p[2] is None]) == 1
    finally:
        scheduler.shutdown()
    # too late (beyond the grace window) does not post yesterday's question
    clock.set(datetime(2026, 3, 5, 14, 0, tzinfo=UTC))
    assert await daily.catch_up() == []


async def test_reveal_at_next_post_or_after_delay(daily, clock, publisher):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily",
                             reveal_after_hours=30)
    (view,) = await daily.schedules.all()
    posted = datetime(2026, 3, 4, 8, 0, tzinfo=UTC)
    assert view.reveal_at(posted) == datetime(2026, 3, 5, 8, 0, tzinfo=UTC)  # next post wins
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")
    (view,) = await daily.schedules.all()
    assert view.reveal_at(posted) == posted + timedelta(hours=12)
    # fire() reveals due posts before posting the next one
    clock.set(posted)
    first = await daily.fire(view.channel_pk)
    clock.set(posted + timedelta(days=1))
    await daily.fire(view.channel_pk)
    async with daily.db.read() as s:
        assert (await s.get(Post, first)).settled


async def test_crash_between_claim_and_send_is_recovered(daily, clock, publisher, drill):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")
    async with daily.db.write() as s:
        channel = await channel_row(s, BERLIN)
        s.add(DailyClaim(channel_id=channel.id, local_date=date(2026, 3, 4),
                         claimed_at=clock.now(), claimed_by="dead-process"))
    assert await daily.recover_unsent() == []  # lease not expired: maybe still sending
    assert await daily.catch_up() == []  # claimed: catch-up must not double post
    clock.advance(seconds=daily.lease.total_seconds() + 1)
    recovered = await daily.recover_unsent()
    assert len(recovered) == 1 and len(publisher.posts) == 1
    async with daily.db.read() as s:
        claim = await s.get(DailyClaim, (channel.id, date(2026, 3, 4)))
        assert claim.sent_at is not None and claim.post_id == recovered[0]
    assert await daily.recover_unsent() == []


async def test_crash_after_post_created_resends_same_question(daily, clock, publisher, drill):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")

    class Boom(Exception):
        pass

    async def failing_publish(*a, **k):
        raise Boom

    original = publisher.publish
    publisher.publish = failing_publish
    (view,) = await daily.schedules.all()
    with pytest.raises(Boom):
        await daily.post_for(view, clock.now())
    publisher.publish = original
    clock.advance(seconds=1)  # a failed send releases its lease at once
    (post_id,) = await daily.recover_unsent()
    async with daily.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Post)) == 1
        assert (await s.get(Post, post_id)).platform_ref == publisher.posts[0][0]


@pytest.mark.slow
async def test_two_processes_post_once_per_channel_per_day(db, drill, daily, tmp_path):
    for n in range(3):
        await daily.set_schedule(Where("discord", "g1", f"c{n}"), at="09:00",
                                 timezone="Europe/Berlin", weekdays="daily")
    out = tmp_path / "published.txt"
    start_at = time.time() + 4
    procs = [
        subprocess.Popen([sys.executable, str(REPO / "tests" / "support" / "daily_process.py"),
                          db.url, str(out), str(start_at)], cwd=REPO)
        for _ in range(2)
    ]
    codes = [p.wait(timeout=60) for p in procs]
    assert codes == [0, 0]
    lines = out.read_text().split()
    assert sorted(line.split("-")[0] for line in lines) == ["c0", "c1", "c2"]
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(DailyClaim)) == 3
        assert await s.scalar(select(func.count()).select_from(Post)) == 3


async def test_concurrent_fires_in_one_process(daily, publisher):
    await daily.set_schedule(BERLIN, at="09:00", timezone="Europe/Berlin", weekdays="daily")
    (view,) = await daily.schedules.all()
    results = await asyncio.gather(*(daily.fire(view.channel_pk) for _ in range(5)))
    assert sum(r is not None for r in results) == 1 and len(publisher.posts) == 1
