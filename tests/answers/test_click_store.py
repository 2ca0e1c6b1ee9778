"""Raw click writes (bot.storage.hot_writes): used for a known member's pick on both databases,
falling back whole to the session when a click needs the ORM; on SQLite an error leaves nothing
behind and another process's write lock is waited for without stopping the event loop."""

from __future__ import annotations

import asyncio
import random
import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.app import build_drill
from bot.core.answers import recording as answers
from bot.core.content.bank import Library
from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.drill.service import Drill
from bot.core.progress import srs
from bot.storage.db import Database
from bot.storage.models import Answer, SrsCard
from tests.conftest import RecordingPublisher
from tests.support.sqlite_lock import hold_lock

HERE = Where("test", "w", "c", "general")
ANA = Who("test", "w", "u-ana", "ana")


@pytest.fixture
async def sqlite_drill(tmp_path: Path, sqlite_template: Path, library: Library, clock: FakeClock):
    path = tmp_path / "hot.db"
    shutil.copy(sqlite_template, path)
    db = Database(f"sqlite+aiosqlite:///{path}")
    yield build_drill(db, library, clock, rng=random.Random(2))
    await db.dispose()


async def pick(drill: Drill, post_id: int, position: int = 0, who: Who = ANA):
    return await drill.handle_action(who, Action(Verb.PICK, post_id, position).encode())


async def answers_of(drill: Drill) -> list[tuple[int, int]]:
    async with drill.db.read() as session:
        return list((await session.execute(select(Answer.post_id, Answer.choice).order_by(Answer.id))).tuples())


async def test_a_known_members_pick_needs_no_session(drill: Drill, monkeypatch: pytest.MonkeyPatch) -> None:
    publisher = RecordingPublisher()
    first = await drill.ask(HERE, publisher, kind="daily")
    second = await drill.ask(HERE, publisher, kind="daily")
    assert (await pick(drill, first.post_id)).recorded  # a new member: through the session

    async def no_session(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pick went through the ORM session")

    monkeypatch.setattr(drill.db, "transaction", no_session)
    outcome = await pick(drill, second.post_id, 2)
    assert outcome.recorded and outcome.public is not None
    assert "1 answered" in outcome.public.plain()
    again = await pick(drill, second.post_id, 1)  # a double click: the first answer stands
    assert not again.recorded and "You already answered" in again.reply.plain()
    async with drill.db.read() as session:  # one spaced-repetition card per answered question
        assert await session.scalar(select(func.count()).select_from(SrsCard)) == 2
    assert [p for p, _ in await answers_of(drill)] == [first.post_id, second.post_id]


async def test_a_quiz_pick_falls_back_whole_and_counts_once(drill: Drill) -> None:
    started = await drill.practice.quiz(ANA, topic=None, count=2, difficulty=None)
    post_id = decode(started.buttons[0].action_id).post_id
    warm = await drill.ask(HERE, RecordingPublisher(), kind="daily")
    await pick(drill, warm.post_id)  # the member is known: the quiz pick starts on the raw path
    outcome = await pick(drill, post_id)
    assert outcome.recorded
    assert [b.label for b in outcome.reply.buttons] == ["Next question", "Stop", "🚩 Report"]
    assert [p for p, _ in await answers_of(drill)].count(post_id) == 1


async def test_an_error_inside_the_raw_transaction_leaves_nothing(
    sqlite_drill: Drill, monkeypatch: pytest.MonkeyPatch
) -> None:
    publisher = RecordingPublisher()
    warm = await sqlite_drill.ask(HERE, publisher, kind="daily")
    await pick(sqlite_drill, warm.post_id)
    post = await sqlite_drill.ask(HERE, publisher, kind="daily")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("rendering failed after the insert")

    monkeypatch.setattr(answers, "answer_feedback", broken)
    with pytest.raises(RuntimeError):
        await pick(sqlite_drill, post.post_id)
    assert [p for p, _ in await answers_of(sqlite_drill)] == [warm.post_id]
    monkeypatch.undo()
    assert (await pick(sqlite_drill, post.post_id)).recorded


async def test_a_raw_pick_waits_for_another_process_without_blocking_the_loop(
    sqlite_drill: Drill, tmp_path: Path
) -> None:
    publisher = RecordingPublisher()
    warm = await sqlite_drill.ask(HERE, publisher, kind="daily")
    await pick(sqlite_drill, warm.post_id)
    post = await sqlite_drill.ask(HERE, publisher, kind="daily")
    holder = hold_lock(tmp_path / "hot.db", 0.8)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    outcome = await pick(sqlite_drill, post.post_id)
    waited = time.monotonic() - started
    task.cancel()
    holder.wait(timeout=10)
    assert outcome.recorded
    assert waited >= 0.4  # it waited for the other process's commit
    assert ticks >= waited / 0.01 * 0.5  # and the loop kept running meanwhile


async def test_a_cached_post_still_refuses_after_its_reveal_and_updates_an_existing_card(
    drill: Drill, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a second click on a post reads nothing first (the post is cached): the
    write itself refuses a post revealed meanwhile, and an existing card is read and updated."""
    from bot.storage import hot_statements

    publisher = RecordingPublisher()
    ben, cy = Who("test", "w", "u-ben", "ben"), Who("test", "w", "u-cy", "cy")
    warm = await drill.ask(HERE, publisher, kind="daily")
    for member in (ANA, ben, cy):
        await pick(drill, warm.post_id, 0, member)  # both members are known from now on
    post = await drill.ask(HERE, publisher, kind="daily")
    async with drill.db.write() as session:  # published, as adapters record it
        from bot.storage.models import Post

        (await session.get(Post, post.post_id)).platform_ref = "m-post"  # type: ignore[union-attr]
    assert (await pick(drill, post.post_id, 0, ANA)).recorded  # reads the post, caches it
    if not drill.db.is_sqlite:
        broken = hot_statements.HotStatement("SELECT 1 / 0", {})
        monkeypatch.setattr(hot_statements, "CLICK_STATE", broken)  # a read would fail now
    second = await pick(drill, post.post_id, 1, ben)
    assert second.recorded and second.public is not None and "2 answered" in second.public.plain()
    monkeypatch.undo()
    # the same question again in a later post: ben's card exists and is updated, not replaced
    async with drill.db.read() as session:
        from bot.storage.models import Post

        question_id = (await session.get(Post, post.post_id)).question_id  # type: ignore[union-attr]
    again = await drill.ask(HERE, publisher, kind="daily")
    async with drill.db.write() as session:
        row = await session.get(Post, again.post_id)
        row.question_id, row.platform_ref = question_id, "m-again"  # type: ignore[union-attr]
    await pick(drill, again.post_id, 0, ANA)  # caches the post
    async with drill.db.read() as session:
        ben_id = list(await session.scalars(
            select(Answer.member_id).where(Answer.post_id == post.post_id).order_by(Answer.id)))[1]
        before = await session.get(SrsCard, (ben_id, question_id))
    assert (await pick(drill, again.post_id, 0, ben)).recorded
    async with drill.db.read() as session:
        card = await session.get(SrsCard, (ben_id, question_id))
        answer = (await session.scalars(select(Answer).where(Answer.post_id == again.post_id,
                                                             Answer.member_id == ben_id))).one()
    # the second review of ben's card, not a new card's first review
    expected = srs.next_card(ben_id, question_id, before.state, before.reps,
                             srs.rating_for(answer.correct), answer.answered_at)
    assert (card.reps, card.state) == (2, expected["state"])
    assert card.state != srs.next_card(ben_id, question_id, None, 1, srs.rating_for(answer.correct),
                                       answer.answered_at)["state"]
    await drill.reveal_post(again.post_id, HERE, publisher)
    late = await pick(drill, again.post_id, 2, cy)  # known, the post cached, but revealed
    assert not late.recorded
    assert late.reply.plain() == "This question is closed; answers are no longer accepted."
    known_late = await pick(drill, again.post_id, 2, ben)
    assert not known_late.recorded and "You already answered" in known_late.reply.plain()


async def test_a_new_schedule_timezone_shows_in_the_next_click_on_a_cached_post(drill: Drill) -> None:
    """The kept snapshot names the channel's timezone; `/daily schedule` in another one must
    not leave clicks saying the old "revealed at" for a minute."""
    from bot.app import build_daily
    from bot.storage.models import Post

    publisher = RecordingPublisher()
    ben = Who("test", "w", "u-ben", "ben")
    daily = build_daily(drill, publisher)
    assert "Europe/Paris" in (await daily.set_schedule(HERE, at="09:00", timezone="Europe/Paris")).plain()
    warm = await drill.ask(HERE, publisher, kind="daily")
    for member in (ANA, ben):
        await pick(drill, warm.post_id, 0, member)
    post = await drill.ask(HERE, publisher, kind="daily")
    async with drill.db.write() as session:
        (await session.get(Post, post.post_id)).platform_ref = "m-post"  # type: ignore[union-attr]
    first = await pick(drill, post.post_id, 0, ANA)  # on PostgreSQL the post is kept from here
    assert "CET" in first.reply.plain() or "CEST" in first.reply.plain()
    await daily.set_schedule(HERE, at="09:00", timezone="Asia/Tokyo")
    second = await pick(drill, post.post_id, 0, ben)
    assert second.recorded and "JST" in second.reply.plain() and "CET" not in second.reply.plain()
