"""Daily claims as admins and members see them: every /daily now reply, today's post in the
channel's own date, takeovers at the lease boundary, and the look-before-resend step (issue 21,
survivors of bot/core/daily/service.py and delivery.py). The channel is an in-process fake that
keys posts like Discord's nonce / Slack's metadata."""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select, update

from bot.app import build_daily
from bot.core.daily.service import (
    BEING_POSTED,
    CATCH_UP_GRACE,
    INSTANCE_ID,
    DailyPosting,
    TodaysPost,
    _reason,
    attempt_of,
    token_for,
)
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where
from bot.core.drill.delivery import (
    KEY_PREFIX,
    WEEKLY_PREFIX,
    Delivery,
    LookupUnavailableError,
    find_sent,
    permalink,
    publish_once,
    send_or_find,
)
from bot.storage.identity import channel_row
from bot.storage.models import DailyClaim, Post

HERE = Where("discord", "g1", "c1", "general")
POSTED = "Posted today's question."
FOUND = "Today's question was already in the channel (an earlier try got through); it is recorded now."
UNCHECKABLE = ("An earlier try may already have posted today's question, and I cannot check the "
               "channel's history, so I did not post it again.")


def failed(reason: str) -> str:
    return (f"I could not post today's question yet ({reason}). It is queued: I retry it "
            "automatically within a minute, or run /daily now again.")


class Channel:
    """Keeps what it accepted, keyed; can die after accepting, refuse lookups, or stall."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Where, object, str | None]] = []  # ref, where, message, key
        self.die_after_accept = False
        self.lookup_unavailable = False
        self.lookups: list[Delivery] = []
        self.during_send: object = None  # an async callable run inside the keyed send
        self.stall = False
        self.cancelled = 0  # keyed sends the sender gave up on
        self.updates: list[str] = []
        self.fail_in: set[str] = set()  # channel ids whose keyed sends fail
        self.wheres: list[tuple[str, str]] = []  # (call, channel id)

    async def publish(self, where, message, *, thread_of=None) -> str:
        self.sent.append((f"m{len(self.sent) + 1}", where, message, None))
        return self.sent[-1][0]

    async def publish_once(self, where, message, delivery: Delivery) -> str:
        self.wheres.append(("publish_once", where.channel_id))
        if where.channel_id in self.fail_in:
            raise ConnectionError("channel unreachable")
        ref = f"m{len(self.sent) + 1}"
        self.sent.append((ref, where, message, delivery.key))
        if self.during_send is not None:
            await self.during_send()  # type: ignore[operator]
        if self.stall:
            try:
                await asyncio.Event().wait()  # never answers; the sender's deadline ends it
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if self.die_after_accept:
            self.die_after_accept = False
            raise TimeoutError("no answer from the platform")
        return ref

    async def find_sent(self, where, delivery: Delivery) -> str | None:
        self.lookups.append(delivery)
        self.wheres.append(("find_sent", where.channel_id))
        if self.lookup_unavailable:
            raise LookupUnavailableError("missing history scope")
        return next((ref for ref, _, _, key in self.sent if key == delivery.key), None)

    async def update(self, where, ref, message) -> None:
        self.updates.append(ref)

    def keyed(self) -> list[str | None]:
        return [key for *_, key in self.sent if key]


@pytest.fixture
def channel() -> Channel:
    return Channel()


@pytest.fixture
def daily(drill, channel) -> DailyPosting:
    return build_daily(drill, channel)


async def claim_row(daily: DailyPosting) -> DailyClaim:
    async with daily.db.read() as s:
        return (await s.scalars(select(DailyClaim))).one()


async def steal_claim(daily: DailyPosting) -> None:
    """Another replica takes the claim over (a new fencing token)."""
    async with daily.db.write() as s:
        await s.execute(update(DailyClaim).values(claimed_by="9@other"))


# ---- /daily now replies -------------------------------------------------------------------


async def test_posted_then_extra_with_the_schedules_topic(daily, channel, drill, clock) -> None:
    await daily.set_schedule(HERE, at="09:00", timezone="UTC", topic="autograd", reveal_after_hours=3)
    assert (await daily.post_now(HERE)).plain() == POSTED
    claim = await claim_row(daily)
    assert channel.keyed() == [f"tdpost{claim.post_id}"]
    assert claim.claimed_by == token_for(1) and claim.local_date == date(2026, 3, 4)
    extra = await daily.post_now(HERE)
    async with drill.db.read() as s:
        posts = (await s.scalars(select(Post).order_by(Post.id))).all()
    assert extra.plain() == f"Today's question was already posted, so I posted an extra one (#{posts[1].id})."
    assert [(p.kind, drill.library[p.question_id].topic) for p in posts] == [
        ("daily", "autograd"), ("now", "autograd")]
    assert posts[0].local_date == date(2026, 3, 4) and posts[0].platform_ref == "m1"
    assert posts[1].closes_at == posts[0].closes_at  # the extra one is revealed with today's
    assert posts[0].closes_at - posts[0].opened_at == timedelta(hours=3)
    for _ in range(3):
        await daily.post_now(HERE)
    async with drill.db.read() as s:
        extras = (await s.scalars(select(Post).where(Post.id > posts[1].id))).all()
    assert [(p.kind, drill.library[p.question_id].topic) for p in extras] == [("now", "autograd")] * 3


async def test_an_accepted_post_whose_answer_was_lost_is_found_not_resent(daily, channel, clock, caplog) -> None:
    channel.die_after_accept = True
    assert (await daily.post_now(HERE)).plain() == failed("TimeoutError: no answer from the platform")
    claim = await claim_row(daily)
    assert claim.sent_at is None
    assert claim.claimed_at.replace(tzinfo=None) == (clock.now() - daily.lease).replace(tzinfo=None)
    caplog.set_level(logging.INFO, logger="bot.core.daily.service")
    assert (await daily.post_now(HERE)).plain() == FOUND
    assert channel.keyed() == [f"tdpost{claim.post_id}"]  # once
    async with daily.db.read() as s:
        post = await s.get(Post, claim.post_id)
    [looked] = channel.lookups
    assert looked.post_id == claim.post_id
    assert looked.since.replace(tzinfo=None) == (post.opened_at - timedelta(minutes=2)).replace(tzinfo=None)
    assert post.platform_ref == "m1" and (await claim_row(daily)).claimed_by == token_for(2)
    assert f"daily post {claim.post_id} was already in channel c1; recorded without re-sending" in caplog.messages


async def test_a_retry_that_cannot_look_never_sends_again(daily, channel, caplog) -> None:
    channel.die_after_accept = True
    await daily.post_now(HERE)
    channel.lookup_unavailable = True
    assert (await daily.post_now(HERE)).plain() == UNCHECKABLE
    claim = await claim_row(daily)
    assert claim.sent_at is None and len(channel.keyed()) == 1
    assert caplog.messages[-1] == (
        f"daily post {claim.post_id} may already be in channel c1, but I cannot check (missing history "
        "scope); not sending it again, to never post twice"
    )


async def test_a_claim_another_replica_holds_is_being_posted(daily, channel, clock) -> None:
    async with daily.db.write() as s:
        channel_pk = (await channel_row(s, HERE)).id
        s.add(DailyClaim(channel_id=channel_pk, local_date=date(2026, 3, 4), claimed_at=clock.now(),
                         claimed_by="1@other"))
    assert (await daily.post_now(HERE)).plain() == BEING_POSTED
    clock.advance(daily.lease.total_seconds())  # exactly one lease later: expired, taken over
    assert (await daily.post_now(HERE)).plain() == POSTED
    claim = await claim_row(daily)
    assert claim.claimed_by == token_for(2)
    assert claim.claimed_at.replace(tzinfo=None) == clock.now().replace(tzinfo=None)  # a fresh lease


async def test_a_claim_taken_over_while_sending_is_left_to_its_new_owner(daily, channel, caplog) -> None:
    daily.renew_every_s = 0.01

    async def takeover() -> None:
        await steal_claim(daily)
        channel.stall = True

    channel.during_send = takeover
    assert (await daily.post_now(HERE)).plain() == BEING_POSTED
    claim = await claim_row(daily)
    assert caplog.messages[-1] == f"daily post {claim.post_id}: claim taken over by another process while sending"
    assert claim.sent_at is None


async def test_a_claim_taken_over_after_the_send_is_not_recorded(daily, channel, drill, caplog) -> None:
    channel.during_send = lambda: steal_claim(daily)
    assert (await daily.post_now(HERE)).plain() == BEING_POSTED
    claim = await claim_row(daily)
    assert claim.sent_at is None
    async with drill.db.read() as s:
        assert (await s.get(Post, claim.post_id)).platform_ref is None
    assert caplog.messages[-1] == (
        f"daily post {claim.post_id} sent, but the claim was taken over; its new owner finds the "
        "message before re-sending"
    )


async def test_a_send_past_its_deadline_fails_and_is_retried_by_recovery(daily, channel, caplog) -> None:
    daily.renew_every_s, daily.publish_deadline_s = 0.01, 0.05
    channel.stall = True
    reply = await daily.post_now(HERE)
    assert reply.plain() == failed("TimeoutError: no answer from the platform within 0 s")
    assert caplog.messages[-1] == "/daily now could not post in c1: TimeoutError: no answer from the platform within 0 s"
    assert channel.cancelled == 1  # the stalled send was called off, not left running
    channel.stall = False
    [post_id] = await daily.recover_unsent()
    assert (await claim_row(daily)).post_id == post_id and len(channel.keyed()) == 1


# ---- today's post, recovery, catch-up -----------------------------------------------------


async def test_todays_post_is_found_by_the_schedules_local_date(daily, channel, clock) -> None:
    assert await daily.todays_post(HERE) is None
    await daily.set_schedule(HERE, at="09:00", timezone="Pacific/Kiritimati")  # UTC+14
    clock.set(datetime(2026, 3, 4, 12, 0, tzinfo=UTC))  # already Thursday there
    await daily.post_now(HERE)
    claim = await claim_row(daily)
    assert claim.local_date == date(2026, 3, 5)
    assert await daily.todays_post(HERE) == TodaysPost(claim.post_id, "m1", False)
    clock.advance(hours=12)
    assert await daily.todays_post(HERE) == TodaysPost(claim.post_id, "m1", True)


async def test_todays_post_without_a_schedule_uses_utc(daily, channel, clock) -> None:
    clock.set(datetime(2026, 3, 4, 23, 30, tzinfo=UTC))
    await daily.post_now(HERE)
    post_id = (await claim_row(daily)).post_id
    assert await daily.todays_post(HERE) == TodaysPost(post_id, "m1", False)


async def test_recovery_takes_a_claim_exactly_one_lease_old_in_its_own_channel(daily, channel, drill, clock) -> None:
    async with daily.db.write() as s:
        channel_pk = (await channel_row(s, HERE)).id
        s.add(DailyClaim(channel_id=channel_pk, local_date=date(2026, 3, 4), claimed_at=clock.now(),
                         claimed_by="4@dead"))
    clock.advance(daily.lease.total_seconds() - 1)
    assert await daily.recover_unsent() == []
    clock.advance(1)
    [post_id] = await daily.recover_unsent()
    assert [(w.channel_id, w.workspace) for _, w, _, _ in channel.sent] == [("c1", "g1")]
    claim = await claim_row(daily)
    assert (claim.post_id, claim.claimed_by) == (post_id, token_for(5))
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
    assert (post.closes_at - post.opened_at) == timedelta(hours=12)  # unscheduled: 12 h reveal


async def test_recovery_reports_only_posts_that_reached_the_channel(daily, channel, clock) -> None:
    channel.die_after_accept = True
    await daily.post_now(HERE)
    channel.lookup_unavailable = True
    clock.advance(1)
    assert await daily.recover_unsent() == []


async def test_catch_up_posts_within_the_grace_and_not_when_paused(daily, channel, clock) -> None:
    await daily.set_schedule(HERE, at="09:00", timezone="UTC")
    async with daily.db.write() as s:
        channel_pk = (await channel_row(s, HERE)).id
    clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC) + CATCH_UP_GRACE + timedelta(seconds=1))
    assert await daily.catch_up() == []  # too late: not yesterday's question today
    clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC) + CATCH_UP_GRACE)
    await daily.set_paused(HERE, True)
    assert await daily.catch_up() == []
    assert await daily.fire(channel_pk) is None  # paused
    await daily.set_paused(HERE, False)
    assert len(await daily.catch_up()) == 1


async def test_fire_without_a_schedule_posts_nothing(daily, channel) -> None:
    assert await daily.fire(12345) is None and channel.sent == []


# ---- small parts --------------------------------------------------------------------------


def test_fencing_tokens_and_reasons() -> None:
    assert token_for(3) == f"3@{INSTANCE_ID}"
    assert (attempt_of("7@abc"), attempt_of("dead-process"), attempt_of("@abc")) == (7, 1, 1)
    assert _reason(ValueError("")) == "ValueError"
    assert _reason(ValueError("  first line\nsecond")) == "ValueError: first line"
    assert _reason(ValueError("x" * 300)) == "ValueError: " + "x" * 200


def test_delivery_keys_and_which_buttons_name_them() -> None:
    when = datetime(2026, 3, 4, tzinfo=UTC)
    question, weekly = Delivery(12, when), Delivery(12, when, WEEKLY_PREFIX)
    assert (question.key, weekly.key, KEY_PREFIX) == ("tdpost12", "tdweek12", "tdpost")
    assert question.is_question and not weekly.is_question
    assert question.named_by(Action(Verb.PICK, 12, 0)) and not question.named_by(Action(Verb.PICK, 13, 0))
    assert not question.named_by(Action(Verb.TAKE, 12))
    assert weekly.named_by(Action(Verb.TAKE, 12)) and weekly.named_by(Action(Verb.PROGRESS, 12))
    assert not weekly.named_by(Action(Verb.PICK, 12, 0)) and not weekly.named_by(Action(Verb.TAKE, 11))


async def test_delivery_helpers_fall_back_where_the_platform_cannot(channel) -> None:
    from tests.conftest import RecordingPublisher

    plain = RecordingPublisher()
    delivery = Delivery(5, datetime(2026, 3, 4, tzinfo=UTC))
    assert await publish_once(plain, HERE, "msg", delivery) == "m1" and plain.posts[0][2] is None  # type: ignore[arg-type]
    assert await find_sent(plain, HERE, delivery) is None
    assert await send_or_find(plain, HERE, "msg", delivery, retry=True) == ("m2", False)  # type: ignore[arg-type]
    assert await send_or_find(channel, HERE, "msg", delivery, retry=False) == ("m1", False)  # type: ignore[arg-type]
    assert channel.lookups == []  # a first send does not look
    assert await send_or_find(channel, HERE, "msg", delivery, retry=True) == ("m1", True)  # type: ignore[arg-type]
    assert channel.keyed() == ["tdpost5"]
    assert await permalink(plain, HERE, "m1") is None

    class Links:
        def __init__(self, fail: bool) -> None:
            self.fail = fail

        async def permalink(self, where, ref) -> str:
            if self.fail:
                raise ConnectionError("down")
            return f"https://chat/{where.channel_id}/{ref}"

    assert await permalink(Links(False), HERE, "m7") == "https://chat/c1/m7"
    assert await permalink(Links(True), HERE, "m7") is None


# ---- more than one channel, the fence, the schedule behind a recovery ---------------------


async def test_a_stale_token_sends_nothing(daily, channel, clock) -> None:
    from bot.core.daily.service import Claim, Outcome, Sent, adhoc_view

    async with daily.db.write() as s:
        channel_pk = (await channel_row(s, HERE)).id
        s.add(DailyClaim(channel_id=channel_pk, local_date=date(2026, 3, 4), claimed_at=clock.now(),
                         claimed_by="2@other"))
    stale = Claim(adhoc_view(channel_pk, HERE), date(2026, 3, 4), token_for(1))
    assert await daily._send(stale) == Sent(Outcome.LOST, None)
    assert channel.sent == []


async def test_recovery_goes_on_past_a_failing_channel_and_follows_each_schedule(daily, channel, drill, clock, caplog) -> None:
    there = Where("discord", "g1", "c2", "other")
    await daily.set_schedule(there, at="09:00", timezone="UTC", topic="autograd", reveal_after_hours=3)
    async with daily.db.write() as s:
        for where in (HERE, there):
            pk = (await channel_row(s, where)).id
            s.add(DailyClaim(channel_id=pk, local_date=date(2026, 3, 4), claimed_at=clock.now(),
                             claimed_by="1@dead"))
    channel.fail_in = {"c1"}
    clock.advance(daily.lease.total_seconds())
    [post_id] = await daily.recover_unsent()
    assert "daily post of channel c1 not sent yet (will retry): ConnectionError: channel unreachable" in caplog.messages
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
    assert drill.library[post.question_id].topic == "autograd"
    assert post.closes_at - post.opened_at == timedelta(hours=3)


async def test_catch_up_goes_on_past_a_paused_channel_and_returns_the_post(daily, channel, drill, clock) -> None:
    there = Where("discord", "g1", "c2", "other")
    await daily.set_schedule(HERE, at="09:00", timezone="UTC")
    await daily.set_schedule(there, at="09:00", timezone="UTC")
    await daily.set_paused(HERE, True)
    [post_id] = await daily.catch_up()
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
    assert post.kind == "daily" and post.platform_ref == "m1"


async def test_daily_questions_are_mcqs_even_where_the_topic_has_flashcards(daily, channel, drill, clock) -> None:
    await daily.set_schedule(HERE, at="09:00", timezone="UTC", topic="autograd")  # 4 MCQs, 3 flashcards
    for _ in range(7):
        await daily.post_now(HERE)
        clock.advance(days=1)
    async with drill.db.read() as s:
        ids = [p.question_id for p in await s.scalars(select(Post).order_by(Post.id))]
    assert len(ids) == 7 and all(i.startswith("t-mcq-") for i in ids)


async def test_daily_and_now_questions_share_one_no_repeat_cycle(daily, channel, drill, clock, publisher) -> None:
    for _ in range(6):
        await daily.post_now(HERE)
        await drill.ask(HERE, publisher, kind="now")
        clock.advance(days=1)
    async with drill.db.read() as s:
        ids = [p.question_id for p in await s.scalars(select(Post))]
    assert len(set(ids)) == 12  # all twelve MCQs before any repeat


async def test_the_next_fire_reveals_yesterdays_post_in_the_channel(daily, channel, clock) -> None:
    await daily.set_schedule(HERE, at="09:00", timezone="UTC")
    async with daily.db.write() as s:
        channel_pk = (await channel_row(s, HERE)).id
    first = await daily.fire(channel_pk)
    clock.advance(days=1)
    second = await daily.fire(channel_pk)
    assert first is not None and second is not None and channel.updates == ["m1"]


async def test_a_schedule_far_from_utc_claims_its_own_date(daily, channel, clock) -> None:
    await daily.set_schedule(HERE, at="09:00", timezone="Pacific/Kiritimati")  # 19:00 UTC the day before
    clock.set(datetime(2026, 3, 4, 19, 0, tzinfo=UTC))
    assert len(await daily.catch_up()) == 1
    assert (await claim_row(daily)).local_date == date(2026, 3, 5)


async def test_every_platform_call_names_the_channel(channel) -> None:
    from tests.conftest import RecordingPublisher

    class Plain(RecordingPublisher):
        async def publish(self, where, message, *, thread_of=None) -> str:
            channel.wheres.append(("publish", where.channel_id))
            return await super().publish(where, message, thread_of=thread_of)

    delivery = Delivery(5, datetime(2026, 3, 4, tzinfo=UTC))
    await publish_once(Plain(), HERE, "msg", delivery)  # type: ignore[arg-type]
    await send_or_find(channel, HERE, "msg", delivery, retry=True)  # type: ignore[arg-type]
    await find_sent(channel, HERE, delivery)
    assert channel.wheres == [("publish", "c1"), ("find_sent", "c1"), ("publish_once", "c1"), ("find_sent", "c1")]


async def test_the_drills_seed_decides_the_daily_questions_and_their_order(daily, channel, drill, clock) -> None:
    """Same seed, same days: the same questions with the same shuffled choices, which is what
    makes a run of the bot reproducible (the console's and the tests' seeded drills)."""
    there = Where("discord", "g1", "c2", "other")
    shown: dict[str, list[tuple[str, str]]] = {}
    for where in (HERE, there):
        drill.rng = random.Random(11)
        await daily.set_schedule(where, at="09:00", timezone="UTC")
        day = clock.now()
        for _ in range(5):
            await daily.post_now(where)
            clock.advance(days=1)
        clock.set(day)
        async with drill.db.write() as s:
            channel_pk = (await channel_row(s, where)).id
            posts = await s.scalars(select(Post).where(Post.channel_id == channel_pk).order_by(Post.id))
            shown[where.channel_id] = [(p.question_id, p.choice_order) for p in posts]
    assert len({q for q, _ in shown["c1"]}) == 5  # five different questions (1 in 95,040 by chance)
    assert shown["c1"] == shown["c2"]
