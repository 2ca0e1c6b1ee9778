"""Answering daily/channel posts: idempotency, closing, scoring and the reply."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import func, select

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.storage.models import Answer
from tests.support.clicks import channel_post

WHERE = Where("discord", "g1", "c1", "general")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"User {n}")




async def test_first_answer_counts_and_second_says_already_answered(drill, publisher):
    posted, question, _order, right, wrong = await channel_post(drill, publisher)
    first = await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, right).encode())
    assert first.recorded and first.reply.title == "✅ Correct!"
    assert f"+{10 * question.difficulty} points" in first.reply.plain()
    assert "1 answered" in first.public.footer
    second = await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, wrong).encode())
    assert not second.recorded
    assert "already answered" in second.reply.plain()
    assert question.answer in second.reply.plain()  # tells what they chose (the first pick)
    async with drill.db.read() as s:
        rows = (await s.scalars(select(Answer))).all()
    assert len(rows) == 1 and rows[0].correct and rows[0].points == 10 * question.difficulty


async def test_wrong_answer_scores_nothing_and_explanation_waits_for_reveal(drill, publisher):
    posted, question, _order, right, wrong = await channel_post(drill, publisher)
    out = await drill.handle_action(who(2), Action(Verb.PICK, posted.post_id, wrong).encode())
    assert out.reply.title == "❌ Not quite"
    assert question.explanation not in out.reply.plain()
    assert "reveal" in (out.reply.footer or "")


async def test_answer_after_close_is_refused(drill, publisher, clock):
    posted, question, _order, right, wrong = await channel_post(drill, publisher)
    clock.advance(hours=13)
    out = await drill.handle_action(who(3), Action(Verb.PICK, posted.post_id, right).encode())
    assert not out.recorded and "closed" in out.reply.plain()
    async with drill.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Answer)) == 0


async def test_bad_and_stale_buttons_get_clear_messages(drill, publisher):
    assert "not one of mine" in (await drill.handle_action(who(1), "garbage")).reply.plain()
    out = await drill.handle_action(who(1), Action(Verb.PICK, 999, 0).encode())
    assert "no longer exists" in out.reply.plain()
    posted, *_ = await channel_post(drill, publisher)
    out = await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, 9).encode())
    assert "does not match" in out.reply.plain() and not out.recorded


async def test_removed_question_is_reported_not_crashing(drill, publisher, library):
    posted, question, _order, right, _ = await channel_post(drill, publisher)
    library.banks[0].questions.remove(question)
    library._reindex()
    out = await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, right).encode())
    assert "removed" in out.reply.plain()


async def test_200_concurrent_answers_from_100_members_record_exactly_100(drill, publisher):
    posted, question, _order, right, wrong = await channel_post(drill, publisher)
    # even members answer right, odd wrong; each clicks twice (second click with the other choice)
    clicks = []
    for n in range(100):
        first, second = (right, wrong) if n % 2 == 0 else (wrong, right)
        clicks.append((n, first))
        clicks.append((n, second))
    results = await asyncio.gather(
        *(drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, c).encode()) for n, c in clicks)
    )
    assert sum(r.recorded for r in results) == 100
    async with drill.db.read() as s:
        answers = (await s.scalars(select(Answer))).all()
    assert len(answers) == 100
    by_member = {a.member_id: a for a in answers}
    assert len(by_member) == 100
    # either click may win the race; whichever did is scored consistently
    for a in answers:
        assert a.correct == (a.choice == question.answer_index)
        assert a.points == (10 * question.difficulty if a.correct else 0)
    winners = {
        (n, c) for (n, c), r in zip(clicks, results, strict=True) if r.recorded
    }
    assert len({n for n, _ in winners}) == 100
    assert sum("already answered" in r.reply.plain() for r in results) == 100


async def test_speed_bonus_only_when_channel_enables_it(drill, publisher, clock):
    from bot.storage.identity import channel_row

    async with drill.db.write() as s:
        (await channel_row(s, WHERE)).speed_bonus = True
    posted, question, _order, right, _ = await channel_post(drill, publisher)
    clock.advance(timedelta(hours=3).total_seconds())  # a quarter of the 12 h window gone
    out = await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, right).encode())
    async with drill.db.read() as s:
        pts = await s.scalar(select(Answer.points))
    assert pts == 10 * question.difficulty + 4  # round(5 * 0.75)
    assert f"+{pts} points" in out.reply.plain()
