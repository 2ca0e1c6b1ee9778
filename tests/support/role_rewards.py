"""Role rewards on the fake Discord: a daily answered, practice answered, the rewards a channel sets."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.storage.estimates import apply_revealed
from bot.storage.models import Answer, Member, Post
from tests.support.discord_fixtures import correct_position
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of

ALICE = User(800_000_000_000_000_001, "alice")


async def _day(fake: FakeDiscord, app: App, clock: FakeClock, right: list[User], wrong: list[User]) -> None:
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    assert "Posted today's question" in text_of(await fake.original_of(token))
    [question] = [m for m in fake.in_channel(fake.channel_id)  # open ones: a revealed post keeps only 🚩
                  if any(b["custom_id"].startswith("td:a:") for b in buttons_of(m))]
    buttons = buttons_of(question)
    good = await correct_position(app, int(buttons[0]["custom_id"].split(":")[2]))
    for users, pick in ((right, good), (wrong, (good + 1) % 4)):
        for user in users:
            await fake.original_of(await fake.click(int(question["id"]), buttons[pick]["custom_id"], user))
    clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1


async def rewards(fake: FakeDiscord, user: User = ALICE, **options: object) -> str:
    reply = await fake.original_of(await fake.slash("daily", user, admin=user is ALICE, sub="rewards", **options))
    assert reply["flags"] & EPHEMERAL
    return text_of(reply).strip()


async def _practised(app: App, user_id: str, topic: str, count: int, now: datetime) -> None:
    """``count`` right answers in ``topic`` on private quiz posts (as /quiz leaves them: each
    closed post's answer has moved the stored estimates, as the click that closes it does)."""
    questions = [q for q in app.library.questions if q.topic == topic and q.kind.value == "mcq"][:count]
    async with app.db.write() as session:
        member = await session.scalar(select(Member).where(Member.user_id == user_id))
        assert member is not None
        for q in questions:
            post = Post(kind="quiz", question_id=q.id, member_id=member.id, opened_at=now, closed_at=now)
            session.add(post)
            await session.flush()
            session.add(Answer(post_id=post.id, member_id=member.id, workspace_id=member.workspace_id,
                               question_id=q.id, topic=topic, choice=q.answer_index, correct=True,
                               answered_at=now))
            await session.flush()
            await apply_revealed(session, post.id, q, now)
