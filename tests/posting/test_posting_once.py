"""One posting mechanism (bot.core.posting), the cases it closes: an owner stalled past its
lease whose Slack send lands after a take-over leaves one message, not two; the weekly closing
summary is exactly once across a crash between its send and its record (in-process and through
the real Discord and Slack publishers, in the challenge's thread); a fire on a connection pool
that has run dry still posts, from the next sweep."""

from __future__ import annotations

import asyncio
import functools
import logging
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.app import build_daily, weekly_posting
from bot.core.daily.service import BEING_POSTED, CLAIM_LEASE
from bot.core.domain.clock import FakeClock
from bot.core.weekly.service import CLOSING, WeeklyKind
from bot.storage.claims import WeeklyClaims
from bot.storage.identity import channel_row
from bot.storage.models import DailyClaim, Post, Schedule, WeeklyClaim
from tests.support.daily_process import where_of
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack
from tests.support.posting_race import (
    WAIT_S,
    CrashBeforeRecord,
    channel_messages,
    platform,
    replica,
    stop,
    thread_messages,
)
from tests.support.weekly_claims import HERE, Channels, schedule, weekly_off
from tests.support.weekly_platform import BANK

pytestmark = [
    pytest.mark.platform("discord", "slack"),
    pytest.mark.usefixtures("quick_backoff"),
]

SUMMARY_NOBODY = "Nobody solved it this week. It stays open to everyone with /challenge."


# ---- a stalled owner on Slack ------------------------------------------------------------


async def test_a_stalled_slack_owner_whose_send_lands_after_a_takeover_leaves_one_message(db, caplog):
    """A passes its fence and stalls before Slack takes its post; its lease runs out; B takes
    over, looks (nothing yet), posts and records; then A's post lands. Slack has no idempotency
    key: A finds B's post recorded and deletes its own, so the channel shows one question."""
    slack = FakeSlack()
    await slack.start()
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, slack, clock), await replica(db.url, slack, clock)
    a[0].daily.renew_every_s = 3600  # frozen: it never renews
    gate = slack.hold("chat.postMessage")  # Slack has not taken A's post yet
    try:
        sending = asyncio.create_task(a[0].daily.post_now(where_of("slack")))
        await slack.wait_until(lambda: slack.waiting("chat.postMessage"), WAIT_S)
        del slack.held["chat.postMessage"]  # B's send goes through at once
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        [post_id] = await b[0].daily.recover_unsent()
        [recorded] = slack.in_channel()
        gate.set()  # now A's post lands, a second copy
        caplog.set_level(logging.WARNING, logger="bot.core.daily.service")
        assert (await asyncio.wait_for(sending, WAIT_S)).plain() == BEING_POSTED
        assert slack.in_channel() == [recorded]
        [deleted] = slack.sent("chat.delete")
        assert deleted.data["ts"] != recorded["ts"]
        async with b[0].db.read() as session:
            claim = (await session.scalars(select(DailyClaim))).one()
            post = await session.get(Post, post_id)
        assert claim.sent_at is not None and claim.claimed_by.startswith("2@")
        assert post is not None and post.platform_ref == f"{slack.channel_id}:{recorded['ts']}"
        assert any(m.startswith("deleted our second copy") for m in caplog.messages)
    finally:
        gate.set()
        await stop(a, b)
        await slack.stop()


async def test_a_retry_that_sent_deletes_a_stray_copy_that_landed_before_its_record(db):
    """The same race the other way round: A's post lands after B looked, while B's own is on its
    way. Whoever learns of both first (A finding B's record, or B looking once more after its
    record and finding A's copy by its key) deletes A's copy: one question in the channel."""
    slack = FakeSlack()
    await slack.start()
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, slack, clock), await replica(db.url, slack, clock)
    a[0].daily.renew_every_s = 3600
    gate = slack.hold("chat.postMessage")
    try:
        sending = asyncio.create_task(a[0].daily.post_now(where_of("slack")))
        await slack.wait_until(lambda: slack.waiting("chat.postMessage"), WAIT_S)
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        recovering = asyncio.create_task(b[0].daily.recover_unsent())  # looks, then waits too
        await slack.wait_until(lambda: len([c for c in slack.calls if c.method == "chat.postMessage"
                                           and c.status == 0]) == 2, WAIT_S)
        gate.set()  # both land; A's answer is then fenced out, B records its own
        [post_id] = await asyncio.wait_for(recovering, WAIT_S)
        await asyncio.wait_for(sending, WAIT_S)
        [left] = slack.in_channel()
        async with b[0].db.read() as session:
            post = await session.get(Post, post_id)
        assert post is not None and post.platform_ref == f"{slack.channel_id}:{left['ts']}"
        assert len(slack.sent("chat.delete")) == 1
    finally:
        gate.set()
        await stop(a, b)
        await slack.stop()


# ---- the closing summary, exactly once ----------------------------------------------------


async def test_the_closing_summary_survives_a_crash_between_its_send_and_its_record(drill):
    channels = Channels(drill.clock)
    store = CrashBeforeRecord(WeeklyClaims(drill.db))
    weekly = weekly_posting(drill.db, drill.clock, channels, bank=BANK)
    here = await schedule(drill, channels, HERE)
    claim_id = await weekly.fire(here)
    await weekly_off(drill, here)
    drill.clock.advance(days=7)
    crashing = weekly_posting(drill.db, drill.clock, channels, bank=BANK, claims=store)
    assert await crashing.close_due() == [claim_id]  # closed; the summary landed, unrecorded
    assert [(c, t) for c, t, _ in channels.closings()] == [("c1", "m1")]
    assert await weekly.close_due() == [] and await weekly.recover_unsent() == []  # lease held
    drill.clock.advance(seconds=CLAIM_LEASE.total_seconds())
    [closing_id] = await weekly.recover_unsent()  # takes over, looks in the thread, finds it
    assert closing_id != claim_id and channels.lookups == 1
    [(channel, thread, text)] = channels.closings()
    assert (channel, thread) == ("c1", "m1") and text.endswith(SUMMARY_NOBODY)
    async with drill.db.read() as session:
        closing = await session.get(WeeklyClaim, closing_id)
        challenge = await session.get(WeeklyClaim, claim_id)
    assert closing is not None and challenge is not None
    assert (closing.kind, closing.platform_ref) == (CLOSING, "m2") and closing.sent_at is not None
    assert closing.week_start == challenge.week_start and challenge.closed_at is not None
    assert await weekly.recover_unsent() == [] and await weekly.close_due() == []
    assert len(channels.closings()) == 1


async def test_a_closing_claimed_but_never_sent_is_sent_once_by_recovery(drill):
    """The process died after winning the closing claim, before sending: recovery posts the
    summary (nothing in the thread yet), and no second close posts another."""
    channels = Channels(drill.clock)
    weekly = weekly_posting(drill.db, drill.clock, channels, bank=BANK)
    here = await schedule(drill, channels, HERE)
    claim_id = await weekly.fire(here)
    await weekly_off(drill, here)
    drill.clock.advance(days=7)
    async with drill.db.write() as session:
        week = (await session.get(WeeklyClaim, claim_id)).week_start  # type: ignore[union-attr]
        session.add(WeeklyClaim(channel_id=here, kind=CLOSING, week_start=week, item=None,
                                claimed_at=drill.clock.now(), claimed_by="1@dead"))
    assert await weekly.close_due() == []  # someone is closing it: not twice
    drill.clock.advance(seconds=CLAIM_LEASE.total_seconds())
    assert len(await weekly.recover_unsent()) == 1
    assert [(c, t) for c, t, _ in channels.closings()] == [("c1", "m1")]
    async with drill.db.read() as session:
        assert (await session.get(WeeklyClaim, claim_id)).closed_at is not None  # type: ignore[union-attr]
    assert await weekly.close_due() == [] and len(channels.closings()) == 1


async def test_the_closing_summary_is_found_in_the_thread_on_each_platform(db, fake):
    """Through the real publishers: the summary goes into the challenge's thread keyed (Discord
    nonce, Slack metadata); the process dies before recording it; the replica that takes over
    finds it in the thread (Discord by its title, Slack by its metadata) and posts nothing."""
    clock = FakeClock(datetime.now(UTC))
    app = await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    weekly = app[0].scheduler.weekly
    assert weekly is not None
    try:
        await app[0].daily.set_schedule(here, at="09:00", timezone="UTC")
        day = clock.now().strftime("%a").lower()
        await weekly.set_weekly(here, WeeklyKind.CHALLENGE, day, clock.now().strftime("%H:%M"))
        async with app[0].db.write() as session:
            channel_pk = (await channel_row(session, here)).id
        claim_id = await weekly.fire(channel_pk)
        assert claim_id is not None
        async with app[0].db.write() as session:  # its week is over (the platforms keep real time)
            await session.execute(Schedule.__table__.update().where(Schedule.channel_id == channel_pk)
                                  .values(challenge_at=None))
            row = await session.get(WeeklyClaim, claim_id)
            assert row is not None and row.platform_ref and row.sent_at
            row.sent_at, challenge_ref = clock.now() - timedelta(days=7), row.platform_ref
        weekly.poster.store = CrashBeforeRecord(weekly.poster.store)  # type: ignore[assignment]
        assert await weekly.close_due() == [claim_id]
        [summary] = thread_messages(fake, challenge_ref)
        assert SUMMARY_NOBODY in str(summary)
        clock.advance(seconds=CLAIM_LEASE.total_seconds())
        [closing_id] = await weekly.recover_unsent()
        assert thread_messages(fake, challenge_ref) == [summary]
        assert len(channel_messages(fake)) == 1  # the challenge; the summary is in its thread
        async with app[0].db.read() as session:
            closing = await session.get(WeeklyClaim, closing_id)
        assert closing is not None and closing.sent_at is not None
        if isinstance(fake, FakeDiscord):
            assert closing.platform_ref == f"{challenge_ref.split(':')[1]}:{summary['id']}"
        else:
            channel, ts = challenge_ref.split(":")[:2]
            assert closing.platform_ref == f"{channel}:{summary['ts']}:{ts}"
    finally:
        await stop(app)


# ---- a dry connection pool at fire time ---------------------------------------------------


@pytest.mark.postgres
async def test_a_fire_on_an_exhausted_pool_still_posts_from_the_next_sweep(pg_url, caplog, monkeypatch):
    """The app as it ships, with a pool of one connection, held elsewhere while the channel's
    job fires: the fire fails before any claim row exists (QueuePool timeout). The next sweep
    finds the post missing past its time and posts it, once."""
    from bot.app import build_app
    from bot.config import Settings
    from bot.core.domain.identity import Where
    from bot.storage.db import Database
    from tests.conftest import TABLES, RecordingPublisher

    admin = Database(pg_url)
    async with admin.engine.begin() as conn:
        await conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    await admin.dispose()
    monkeypatch.setattr("bot.app.Database", functools.partial(Database, pool_size=1, max_overflow=0,
                                                              pool_timeout=0.2))
    clock = FakeClock(datetime(2026, 3, 4, 8, 59, tzinfo=UTC))
    app = await build_app(Settings(_env_file=None, database_url=pg_url), clock=clock, with_runner=False)
    publisher = RecordingPublisher()
    app.publisher.register("chat", publisher)
    try:
        await app.daily.set_schedule(Where("chat", "w1", "c1", "one"), at="09:00", timezone="UTC",
                                     weekdays="daily")
        async with app.db.read() as session:
            [channel_pk] = (await session.scalars(select(Schedule.channel_id))).all()
        app.scheduler.queue.start()
        clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
        caplog.set_level(logging.WARNING)
        async with app.db.engine.connect():  # the pool's one connection, busy elsewhere
            await app.scheduler.fire_daily(channel_pk, "chat")
            await app.scheduler.queue.drained(10)
        assert app.scheduler.detail()["failed"] == 1 and publisher.posts == []
        assert any("QueuePool limit" in m for m in caplog.messages)
        async with app.db.read() as session:
            assert (await session.scalars(select(DailyClaim))).all() == []  # failed before claiming
        clock.advance(seconds=30)
        for _ in range(2):  # the tick's sweep; the second finds nothing left
            await app.scheduler.sweep()
            await app.scheduler.queue.drained(10)
        assert len(publisher.posts) == 1 and app.scheduler.detail()["late"] == 1
    finally:
        app.scheduler.shutdown()
        await app.close()


async def test_a_weekly_fire_that_fails_before_its_claim_is_posted_by_the_next_sweep(drill, monkeypatch, caplog):
    """The weekly challenge's job fails before any claim exists (a dry pool): the tick's sweep
    finds this week's post missing past its time and posts it, named once in the log."""
    from bot.core.posting.fanout import PostingQueue
    from bot.scheduler import DailyScheduler
    from tests.support.weekly_claims import EASIEST, title

    channels = Channels(drill.clock)
    weekly = weekly_posting(drill.db, drill.clock, channels, bank=BANK)
    daily = build_daily(drill, channels)
    await daily.set_schedule(HERE, at="23:00", timezone="Europe/Berlin")  # no daily post due now
    await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "wed", "10:00")  # now: Wed 10:00 CET
    async with drill.db.write() as session:
        here = (await channel_row(session, HERE)).id
    scheduler = DailyScheduler(daily, weekly=weekly, queue=PostingQueue(workers=1))
    scheduler.queue.start()
    real = weekly.fire

    async def dry_pool(channel_pk: int, kind: WeeklyKind = WeeklyKind.CHALLENGE) -> int | None:
        raise TimeoutError("QueuePool limit of size 10 overflow 20 reached, connection timed out")

    monkeypatch.setattr(weekly, "fire", dry_pool)
    caplog.set_level(logging.WARNING)
    try:
        await scheduler.fire_weekly(here, WeeklyKind.CHALLENGE, "discord")
        await scheduler.queue.drained(10)
        assert channels.posts() == [] and scheduler.detail()["failed"] == 1
        monkeypatch.setattr(weekly, "fire", real)
        drill.clock.advance(minutes=1)
        for _ in range(2):  # the tick's sweep; the second finds nothing left
            await scheduler.sweep()
            await scheduler.queue.drained(10)
    finally:
        scheduler.shutdown()
    assert channels.posts() == [title(EASIEST[0])]
    late = [m for m in caplog.messages if "missing past its time" in m]
    assert late == ["weekly challenge post of discord:c1 for 2026-03-02 was missing past its time; "
                    "posting it late"]
    assert scheduler.detail()["late"] == 1

