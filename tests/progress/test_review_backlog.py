"""A review backlog is no wall: after an absence /review serves at most DUE_PER_DAY cards a
day, adds no new cards on top, and says how many wait (through the fake Discord)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.domain.kinds import PostKind
from bot.core.progress import srs
from bot.storage.hot_statements import upsert_srs_card
from bot.storage.models import Member, Post, Quiz
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import FakeDiscord, User, text_of

pytestmark = pytest.mark.platform("discord")

ALICE = User(800_000_000_000_000_001, "alice")
BACKLOG = 30


async def seed_backlog(app: App, clock: FakeClock) -> None:
    """Alice saw BACKLOG questions a week ago and missed every review since."""
    async with app.db.write() as session:
        member_id = await session.scalar(select(Member.id).where(Member.user_id == str(ALICE.id)))
        assert member_id is not None
        mcqs = [q for q in app.library.questions if q.kind.value == "mcq"][:BACKLOG]
        for q in mcqs:
            card = srs.next_card(member_id, q.id, None, 0, srs.rating_for(False),
                                 clock.now() - timedelta(days=7))
            await upsert_srs_card(session, card)


async def review(fake: FakeDiscord) -> str:
    token = await fake.slash("review", ALICE, count=50)
    return text_of(await fake.original_of(token))


async def test_a_backlog_is_spread_over_days(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    await fake.original_of(await fake.slash("stats", ALICE))  # Alice becomes a member
    await seed_backlog(app, discord_clock)
    first = await review(fake)
    assert "Review 1/20" in first
    assert ("10 more due cards wait for the next days: at most 20 reviews a day, so a missed "
            "day is no wall.") in first
    async with app.db.read() as session:
        quiz = await session.scalar(select(Quiz).order_by(Quiz.id.desc()).limit(1))
        assert quiz is not None and len(quiz.question_ids.split(",")) == 20  # no new cards added

    # Alice works through today's 20 (through the same app the adapter serves)
    who = Who("discord", str(fake.guild_id), str(ALICE.id), "alice")
    for _ in range(20):
        async with app.db.read() as session:
            post_id = await session.scalar(
                select(Post.id).where(Post.quiz_id == quiz.id, Post.closed_at.is_(None),
                                      Post.kind == PostKind.REVIEW).order_by(Post.id.desc()).limit(1))
        assert post_id is not None
        out = await app.drill.handle_action(who, Action(Verb.PICK, post_id, 0).encode())
        nxt = [b.action_id for b in out.reply.buttons if decode(b.action_id).verb is Verb.NEXT]
        if nxt:
            await app.drill.handle_action(who, nxt[0])
    done = await review(fake)
    assert ("You did your 20 reviews for today. " in done
            and "at most 20 reviews a day, so a missed day is no wall. Try /quiz for more practice." in done)

    discord_clock.advance(days=1)  # a new day: the rest of the backlog comes up
    assert "Review 1/" in await review(fake)
