"""A group mock posts once across replicas: two bot processes (their own app and real
publisher each) share one PostgreSQL database and sweep at the same moment, on the fake
Discord and the fake Slack. One announcement in the channel, members joining through either
replica get the same questions, one board in the announcement's thread, names inert."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from bot.core.commands.dispatch import Caller
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.posting.claims import CLAIM_LEASE
from bot.storage.models import GroupMockClaim, MockItem, MockSession
from tests.support.daily_process import where_of
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_discord import text_of as discord_text
from tests.support.fake_slack import FakeSlack
from tests.support.fake_slack import text_of as slack_text
from tests.support.posting_race import (
    CrashBeforeRecord,
    channel_messages,
    platform,
    replica,
    stop,
    thread_messages,
)

pytestmark = pytest.mark.platform("discord", "slack")


def text_of(server: FakeDiscord | FakeSlack, message: dict[str, Any]) -> str:
    return discord_text(message) if isinstance(server, FakeDiscord) else slack_text(message)


def members(platform_name: str, workspace: str) -> tuple[Who, Who, Who]:
    if platform_name == "discord":
        return (Who("discord", workspace, "800000000000000011", "ana"),
                Who("discord", workspace, "800000000000000012", "@everyone bob"),
                Who("discord", workspace, "800000000000000013", "admin"))
    return (Who("slack", workspace, "U0ANA", "ana"), Who("slack", workspace, "U0BOB", "<!channel> bob"),
            Who("slack", workspace, "U0ADMIN", "admin"))


@pytest.mark.parametrize("db", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_group_mock_posts_once_across_two_replicas(db, fake):
    clock = FakeClock(datetime.now(UTC).replace(second=0, microsecond=0))  # the platforms keep real time
    a, b = await replica(db.url, fake, clock), await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    ana, bob, admin = members(here.platform, here.workspace)
    try:
        at = clock.now() + timedelta(minutes=2)
        scheduled = await a[0].commands.execute_text(Caller(admin, here, True), "mock", f"schedule {at:%H:%M} infra 15")
        ends = at + timedelta(minutes=15)
        assert scheduled.plain() == (
            f"Group mock #1 scheduled: Training/infra engineer · 15 min · {at:%a %d %b %H:%M} UTC. At that "
            "time I post it here with a Start button; everyone who presses it gets the same 10 questions "
            "(8 MCQs, 1 explain-it question (self-graded), 1 coding challenge), and the board goes up when "
            f"it closes at {ends:%a %d %b %H:%M} UTC. `/mock cancel 1` cancels it.")
        refused = await b[0].commands.execute_text(Caller(bob, here, False), "mock", f"schedule {at:%H:%M}")
        assert refused.plain() == "Only workspace admins can use /mock schedule."
        assert await a[0].services.group_mocks.sweep() == 0  # not yet
        clock.advance(minutes=2)
        made = await asyncio.gather(a[0].services.group_mocks.sweep(), b[0].services.group_mocks.sweep())
        assert sorted(made) == [0, 1]
        [post] = channel_messages(fake)
        title = "🎤 Group mock #1 · Training/infra engineer · 15 min"
        body = ("Everyone gets the same 10 questions: 8 MCQs, 1 explain-it question (self-graded), 1 coding "
                "challenge. Press {b}Start{b} for your own private session; every session ends at "
                f"{ends:%a %d %b %H:%M} UTC.")
        later = "The board of this mock appears in this post's thread when it closes."
        if isinstance(fake, FakeDiscord):
            assert text_of(fake, post) == f"\n{title}\n{body.format(b='**')}\n\n{later}\n"
        else:
            assert text_of(fake, post) == f"{title}\n{title}\n{body.format(b='*')}\n{later}\nStart"
        first = await a[0].commands.press(ana, Action(Verb.JOIN, 1).encode())
        second = await b[0].commands.press(bob, Action(Verb.JOIN, 1).encode())
        for joined in (first.reply, second.reply):
            assert joined.title and joined.title.startswith("Mock · MCQ 1/8 · ")
            assert joined.footer == f"⏱ 15:00 left · ends {ends:%H:%M} UTC · item 1/10 · Training/infra engineer"
        async with a[0].db.read() as s:
            sessions = list(await s.scalars(select(MockSession).order_by(MockSession.id)))
            items = [[(i.kind, i.ref) for i in await s.scalars(
                select(MockItem).where(MockItem.mock_id == m.id).order_by(MockItem.idx))] for m in sessions]
        assert len(items) == 2 and items[0] == items[1] and len(items[0]) == 10
        clock.advance(minutes=15)
        made = await asyncio.gather(a[0].services.group_mocks.sweep(), b[0].services.group_mocks.sweep())
        assert sorted(made) == [0, 1]
        async with a[0].db.read() as s:
            claims = {c.kind: c for c in await s.scalars(select(GroupMockClaim))}
        ref = claims["post"].platform_ref
        assert ref is not None
        [board] = thread_messages(fake, ref)
        closed = "🏁 Group mock #1 closed · Training/infra engineer · 15 min"
        if isinstance(fake, FakeDiscord):  # mentions inert: a zero-width space after @ and <
            assert text_of(fake, board) == (
                f"\n{closed}\n2 members took part · ranked by score, then time:\n"
                "🥇 **@\u200beveryone bob** — 0/10 (0%) · 15 min\n🥇 **ana** — 0/10 (0%) · 15 min\n")
        else:
            assert text_of(fake, board) == (
                f"{closed}\n{closed}\n2 members took part · ranked by score, then time:\n"
                "🥇 *&lt;\u200b!channel&gt; bob* — 0/10 (0%) · 15 min\n🥇 *ana* — 0/10 (0%) · 15 min")
        assert await a[0].services.group_mocks.sweep() == 0
        assert thread_messages(fake, ref) == [board] and channel_messages(fake) == [post]
    finally:
        await stop(a, b)


@pytest.mark.parametrize("db", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_crash_between_send_and_record_is_finished_without_a_second_post(db, fake):
    """The process dies after the platform took the announcement (then the board) and before
    recording it: once the lease runs out the sweep takes the claim over, looks in the channel
    (the thread, for the board), finds the post by its key and records it without re-sending."""
    # behind the platforms' real clock: a look back from our time still covers what they hold
    clock = FakeClock(datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30))
    app = await replica(db.url, fake, clock)
    here = where_of(platform(fake))
    ana, _, admin = members(here.platform, here.workspace)
    group = app[0].services.group_mocks
    crashing = CrashBeforeRecord(group.poster.store)
    group.poster.store = crashing  # type: ignore[assignment]
    try:
        at = clock.now() + timedelta(minutes=2)
        await app[0].commands.execute_text(Caller(admin, here, True), "mock", f"schedule {at:%H:%M} infra 10")
        clock.advance(minutes=2)
        assert await group.sweep() == 0  # sent, then the process "died" before recording it
        [post] = channel_messages(fake)
        assert await group.sweep() == 0  # the lease still holds: nobody touches it
        clock.advance(seconds=CLAIM_LEASE.total_seconds())
        assert await group.sweep() == 0  # taken over, found in the channel, recorded: not re-sent
        assert channel_messages(fake) == [post]
        joined = await app[0].commands.press(ana, Action(Verb.JOIN, 1).encode())
        assert joined.reply.title and joined.reply.title.startswith("Mock · MCQ 1/8 · ")
        crashing.armed = True
        clock.advance(minutes=10)
        assert await group.sweep() == 0
        async with app[0].db.read() as s:
            ref = (await s.scalars(select(GroupMockClaim.platform_ref).where(GroupMockClaim.kind == "post"))).one()
        assert ref is not None
        [board] = thread_messages(fake, ref)
        clock.advance(seconds=CLAIM_LEASE.total_seconds())
        assert await group.sweep() == 0
        assert thread_messages(fake, ref) == [board] and channel_messages(fake) == [post]
        async with app[0].db.read() as s:
            claims = list(await s.scalars(select(GroupMockClaim).order_by(GroupMockClaim.id)))
        assert [(c.kind, c.sent_at is not None, c.claimed_by.split("@")[0]) for c in claims] == [
            ("post", True, "2"), ("board", True, "2")]
    finally:
        await stop(app)
