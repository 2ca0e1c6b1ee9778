"""Exactly one daily post, driven as the platforms would drive it.

The real Discord and Slack publishers talk to the fakes; a child process is kill -9'd before
the send or after the platform accepted the post; a publish stalls past the lease while a
second replica runs; the platform answers 5xx or 429 first; the history scope is missing.
Each case runs on SQLite and PostgreSQL, and ends with exactly one message in the channel.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.daily.service import CLAIM_LEASE
from bot.core.domain.clock import FakeClock, as_utc
from bot.storage.models import DailyClaim, Post
from tests.support.daily_process import where_of
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack
from tests.support.posting_race import (
    POSTS_PATH,
    WAIT_S,
    accepted,
    channel_messages,
    eventually,
    hold_answer,
    platform,
    ref_of,
    replica,
    stop,
)

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord", "slack"),
    pytest.mark.usefixtures("quick_backoff"),
]

REPO = Path(__file__).resolve().parents[2]
CHILD_S = 60  # a child process imports the whole bot before it gets anywhere


def posts_of(fake: FakeDiscord | FakeSlack, post_id: int) -> list[dict[str, Any]]:
    return fake.posts_of(post_id)


async def the_claim(app: App) -> DailyClaim:
    async with app.db.read() as session:
        return (await session.scalars(select(DailyClaim))).one()


async def assert_one_post_recorded(app: App, fake: FakeDiscord | FakeSlack) -> int:
    """Exactly one message in the channel, and it is the one the claim and post recorded."""
    claim = await the_claim(app)
    assert claim.sent_at is not None and claim.post_id is not None
    [message] = channel_messages(fake)
    assert posts_of(fake, claim.post_id) == [message]
    async with app.db.read() as session:
        post = await session.get(Post, claim.post_id)
        assert post is not None and post.platform_ref == ref_of(fake, message)
    return claim.post_id


@pytest.mark.slow
@pytest.mark.parametrize("crash_at", ["before-send", "after-accepted"])
async def test_kill_9_at_either_crash_point_then_recovery_posts_once(db, fake, crash_at):
    gate = hold_answer(fake) if crash_at == "after-accepted" else None
    when = datetime.now(UTC).replace(microsecond=0)
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(REPO / "tests" / "support" / "daily_process.py"), "crash", platform(fake), db.url,
        fake.api_base_url, crash_at, when.isoformat(), cwd=REPO,
    )
    try:
        if gate is not None:
            await fake.wait_until(lambda: accepted(fake), CHILD_S)
            child.kill()
        assert await asyncio.wait_for(child.wait(), CHILD_S) == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
    if gate is not None:
        gate.set()
    assert len(channel_messages(fake)) == (1 if crash_at == "after-accepted" else 0)
    # the next process to start recovers the claim once its lease has expired
    clock = FakeClock(when + CLAIM_LEASE + timedelta(seconds=1))
    recovery = await replica(db.url, fake, clock)
    try:
        app = recovery[0]
        claim = await the_claim(app)
        assert claim.sent_at is None and claim.post_id is not None  # recorded before the send
        assert await app.daily.recover_unsent() == [claim.post_id]
        assert await app.daily.recover_unsent() == []
        await assert_one_post_recorded(app, fake)
    finally:
        await stop(recovery)


async def test_publish_stalled_past_the_lease_with_a_second_replica_posts_once(db, fake):
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, fake, clock), await replica(db.url, fake, clock)
    a[0].daily.renew_every_s = 0.05
    gate = hold_answer(fake)
    try:
        sending = asyncio.create_task(a[0].daily.post_now(where_of(platform(fake))))
        await eventually(fake, lambda: accepted(fake))
        for _ in range(4):  # twice the lease passes while the platform sits on the answer
            clock.advance(seconds=CLAIM_LEASE.total_seconds() / 2)
            now = clock.now()
            await wait_for_renewal(a[0], now)
            assert await b[0].daily.recover_unsent() == []  # a live owner keeps its claim
        gate.set()
        assert (await asyncio.wait_for(sending, WAIT_S)).plain() == "Posted today's question."
        clock.advance(seconds=CLAIM_LEASE.total_seconds() * 2)
        assert await b[0].daily.recover_unsent() == []
        await assert_one_post_recorded(b[0], fake)
    finally:
        gate.set()
        await stop(a, b)


async def test_a_frozen_owner_is_fenced_out_and_the_new_owner_finds_its_post(db, fake, caplog):
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, fake, clock), await replica(db.url, fake, clock)
    a[0].daily.renew_every_s = 3600  # frozen: it never renews
    gate = hold_answer(fake)
    try:
        sending = asyncio.create_task(a[0].daily.post_now(where_of(platform(fake))))
        await eventually(fake, lambda: accepted(fake))
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        caplog.set_level(logging.INFO, logger="bot.core.daily.service")
        [post_id] = await b[0].daily.recover_unsent()  # takes over, looks, finds A's message
        assert "already in channel" in caplog.text
        assert (await the_claim(b[0])).claimed_by.startswith("2@")  # the fencing token moved on
        gate.set()
        reply = (await asyncio.wait_for(sending, WAIT_S)).plain()
        assert reply == "Today's question is being posted right now; it will appear here in a moment."
        assert await assert_one_post_recorded(b[0], fake) == post_id
    finally:
        gate.set()
        await stop(a, b)


async def wait_for_renewal(app: App, now: datetime) -> None:
    """Bounded: the owner renews every 50 ms while its publish is pending."""
    for _ in range(200):
        if as_utc((await the_claim(app)).claimed_at) >= now:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the owner did not renew its lease")


@pytest.mark.parametrize("accepted_first", [False, True], ids=["refused", "accepted"])
async def test_a_5xx_then_success_posts_once(db, fake, accepted_first):
    """A 5xx before the platform took the post, or after it did (the answer was lost)."""
    if isinstance(fake, FakeDiscord):
        fake.fail("POST", POSTS_PATH, 500, after=accepted_first)  # discord.py retries 5xx
    elif accepted_first:
        fake.fail_after["chat.postMessage"] = [500]
    else:
        fake.failures["chat.postMessage"] = [503]
    app = await replica(db.url, fake, FakeClock(datetime.now(UTC)))
    try:
        reply = await app[0].daily.post_now(where_of(platform(fake)))
        assert reply.plain() == "Posted today's question."
        await assert_one_post_recorded(app[0], fake)
    finally:
        await stop(app)


async def test_a_429_is_waited_out(db, fake):
    if isinstance(fake, FakeDiscord):
        fake.fail("POST", POSTS_PATH, 429, retry_after=0.2)
    else:
        fake.rate_limits["chat.postMessage"] = [1]
    app = await replica(db.url, fake, FakeClock(datetime.now(UTC)))
    try:
        assert (await app[0].daily.post_now(where_of(platform(fake)))).plain() == "Posted today's question."
        await assert_one_post_recorded(app[0], fake)
        if isinstance(fake, FakeDiscord):  # both tries: keyed, and pinging nobody
            tries = [r.json for r in fake.sent("POST", POSTS_PATH)]
            assert len(tries) == 2 and {t["nonce"] for t in tries} == {tries[0]["nonce"]}
            assert all(t["enforce_nonce"] and t["allowed_mentions"]["parse"] == [] for t in tries)
            assert not any(t["allowed_mentions"].get(k) for t in tries for k in ("users", "roles"))
    finally:
        await stop(app)


async def test_failed_post_in_an_unscheduled_channel_is_retried_and_told_truthfully(db, fake):
    """Every attempt fails: the admin hears so, and the claim is finished later."""
    if isinstance(fake, FakeDiscord):
        for _ in range(5):
            fake.fail("POST", POSTS_PATH, 400)  # not retried by discord.py
    else:
        fake.failures["chat.postMessage"] = [500] * 12
    clock = FakeClock(datetime.now(UTC))
    app = await replica(db.url, fake, clock)
    try:
        where = where_of(platform(fake))
        first = (await app[0].daily.post_now(where)).plain()
        assert first.startswith("I could not post today's question yet (") and "queued" in first
        assert channel_messages(fake) == []
        fake.failures.clear()
        clock.advance(seconds=1)
        [post_id] = await app[0].daily.recover_unsent()  # the scheduler tick, no schedule needed
        assert await assert_one_post_recorded(app[0], fake) == post_id
        again = (await app[0].daily.post_now(where)).plain()
        assert again.startswith("Today's question was already posted, so I posted an extra one")
    finally:
        await stop(app)


async def test_slack_without_history_scope_never_posts_twice(db, caplog):
    fake = FakeSlack()
    await fake.start()
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, fake, clock), await replica(db.url, fake, clock)
    gate = fake.hold_answer("chat.postMessage")
    try:
        sending = asyncio.create_task(a[0].daily.post_now(where_of("slack")))
        await fake.wait_until(lambda: fake.accepted_unanswered("chat.postMessage"), WAIT_S)
        sending.cancel()  # the owner dies after Slack accepted the post
        await asyncio.gather(sending, return_exceptions=True)
        gate.set()
        fake.scopes = set()
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        with caplog.at_level(logging.ERROR, logger="bot.core.daily.service"):
            assert await b[0].daily.recover_unsent() == []
        assert "cannot check" in caplog.text and "channels:history" in caplog.text
        assert len(fake.in_channel()) == 1 and (await the_claim(b[0])).sent_at is None
        fake.scopes = {"channels:history"}  # the admin adds the scope
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        [post_id] = await b[0].daily.recover_unsent()
        assert await assert_one_post_recorded(b[0], fake) == post_id
    finally:
        gate.set()
        await stop(a, b)
        await fake.stop()
