"""The weekly challenge through the real Discord and Slack publishers against the fakes: a
sender frozen after the platform accepted the post is fenced out, and the replica that takes
over finds the post by its key (Discord nonce, Slack metadata) instead of sending it again."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.core.daily.service import CLAIM_LEASE
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.reveal.posts import order_of
from bot.core.weekly.service import WeeklyKind
from bot.storage.models import Post, WeeklyClaim
from tests.support.daily_process import where_of
from tests.support.posting_race import (
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


async def test_a_frozen_weekly_sender_is_fenced_out_and_the_post_found_not_repeated(db, fake):
    clock = FakeClock(datetime.now(UTC))
    a, b = await replica(db.url, fake, clock), await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    weekly_a, weekly_b = a[0].scheduler.weekly, b[0].scheduler.weekly
    assert weekly_a is not None and weekly_b is not None
    gate = hold_answer(fake)
    try:
        await a[0].daily.set_schedule(here, at="09:00", timezone="UTC")
        day = clock.now().strftime("%a").lower()
        reply = await weekly_a.set_weekly(here, WeeklyKind.CHALLENGE, day, clock.now().strftime("%H:%M"))
        assert "Weekly challenge:" in reply.plain()
        async with a[0].db.read() as session:
            from bot.storage.models import Schedule

            channel_pk = (await session.scalars(select(Schedule.channel_id))).one()
        sending = asyncio.create_task(weekly_a.fire(channel_pk))
        await eventually(fake, lambda: accepted(fake))
        clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
        [claim_id] = await weekly_b.recover_unsent()  # takes over, looks, finds A's message
        gate.set()
        assert await asyncio.wait_for(sending, WAIT_S) is None  # A's record is fenced out
        [message] = channel_messages(fake)
        text = str(message)
        assert "Weekly challenge:" in text and "/challenge week" in text
        async with b[0].db.read() as session:
            row = await session.get(WeeklyClaim, claim_id)
            assert row is not None and row.sent_at is not None
            assert row.platform_ref == ref_of(fake, message) and row.claimed_by.startswith("2@")
        assert await weekly_b.recover_unsent() == []
        assert await weekly_b.fire(channel_pk) is None  # this week's is done
        assert len(channel_messages(fake)) == 1
        # a member presses "Take this challenge": the problem opens privately as their current one
        who = Who(here.platform, here.workspace, "42", "Ada")
        taken = await b[0].commands.press(who, Action(Verb.TAKE, claim_id).encode())
        assert taken.reply.ephemeral
        challenge = b[0].commands.services.challenges.bank.get(row.item or "")
        assert challenge is not None and challenge.title in (taken.reply.title or "")
        assert (await b[0].commands.services.challenges.current(who)) == challenge
        gone = await b[0].commands.press(who, Action(Verb.TAKE, claim_id + 1000).encode())
        assert "no weekly challenge" in gone.reply.plain()
    finally:
        gate.set()
        await stop(a, b)


async def test_the_digest_reaches_each_platform_with_its_chart(db, fake):
    """Discord: the PNG in the message (multipart); Slack: the upload flow, alt text included."""
    clock = FakeClock(datetime.now(UTC))
    app = await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    weekly = app[0].scheduler.weekly
    assert weekly is not None
    try:
        await app[0].daily.set_schedule(here, at="09:00", timezone="UTC")
        day = clock.now().strftime("%a").lower()
        await weekly.set_weekly(here, WeeklyKind.DIGEST, day, clock.now().strftime("%H:%M"))
        [claim_id] = await weekly.catch_up()
        [message] = channel_messages(fake)
        assert "Weekly digest" in str(message) and "Nobody scored last week" in str(message)
        if platform(fake) == "discord":
            [png] = message["attachments"]
            assert png["filename"] == "leaderboard.png"
        else:
            done = await fake.wait_for("files.completeUploadExternal")
            [upload] = fake.uploads.values()
            assert upload.startswith(b"\x89PNG") and "leaderboard.png" in str(done.data)
            [asked] = fake.sent("files.getUploadURLExternal")
            assert "nobody has scored yet" in str(asked.data)  # the alt text
        async with app[0].db.read() as session:
            row = await session.get(WeeklyClaim, claim_id)
            assert row is not None and row.platform_ref == ref_of(fake, message)
    finally:
        await stop(app)


async def test_the_digest_links_the_hardest_question_to_its_message(db, fake):
    clock = FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    app = await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    drill, weekly = app[0].drill, app[0].scheduler.weekly
    assert weekly is not None
    try:
        await app[0].daily.set_schedule(here, at="09:00", timezone="UTC")
        posted = await drill.ask(here, app[0].publisher, kind="daily")
        async with drill.db.read() as session:
            post = await session.get(Post, posted.post_id)
            right = order_of(post).index(drill.library[post.question_id].answer_index)
        for n, ok in ((1, True), (2, False), (3, False)):
            who = Who(here.platform, here.workspace, f"u{n}", f"Player {n}")
            await drill.handle_action(who, Action(Verb.PICK, posted.post_id, right if ok else (right + 1) % 4).encode())
        await drill.reveal_post(posted.post_id, here, app[0].publisher)
        clock.advance(days=5)  # Mon 9 Mar: last week's digest
        shown = await weekly.set_weekly(here, WeeklyKind.DIGEST, "now", None)
        assert shown.plain() == "Posted last week's digest."
        digest = next(m for m in channel_messages(fake) if "Weekly digest" in str(m))
        if platform(fake) == "discord":
            link = f"https://discord.com/channels/{here.workspace}/{post.platform_ref.replace(':', '/')}"
        else:
            channel, ts = post.platform_ref.split(":")[:2]
            link = f"https://fake.slack.test/archives/{channel}/p{ts.replace('.', '')}"
        assert f"(1 of 3 right, 33%; posted Wed 04 Mar) · its thread: {link}" in str(digest)
    finally:
        await stop(app)


async def test_my_progress_under_a_digest_answers_privately_with_the_members_stats(db, fake):
    clock = FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    app = await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    try:
        who = Who(here.platform, here.workspace, "42", "Ada")
        pressed = await app[0].commands.press(who, Action(Verb.PROGRESS, 1).encode())
        stats = await app[0].commands.stats_of(who, None)
        assert pressed.reply.ephemeral
        assert pressed.reply.plain() == stats.plain() and "Ada" in pressed.reply.plain()
    finally:
        await stop(app)
