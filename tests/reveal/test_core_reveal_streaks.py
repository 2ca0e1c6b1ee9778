"""Reveal results, streak settlement, and no-repeat question selection."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.domain.topics import UnknownTopicError
from bot.core.reveal.posts import order_of
from bot.storage.models import Post, Streak

WHERE = Where("slack", "T1", "C1", "drills")


def who(n: int) -> Who:
    return Who("slack", "T1", f"U{n}", f"Member {n}")


async def daily(drill, publisher):
    posted = await drill.ask(WHERE, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        q = drill.library[post.question_id]
        order = order_of(post)
    right = order.index(q.answer_index)
    return posted, q, right, (right + 1) % 4


async def test_reveal_publishes_counts_percent_fastest_and_explanation(drill, publisher, clock):
    posted, q, right, wrong = await daily(drill, publisher)
    clock.advance(5)
    await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, wrong).encode())
    clock.advance(5)
    await drill.handle_action(who(2), Action(Verb.PICK, posted.post_id, right).encode())
    clock.advance(5)
    await drill.handle_action(who(3), Action(Verb.PICK, posted.post_id, right).encode())
    other = next(x for x in drill.library.questions if x.id != q.id)
    q.related = [other.id, "no-such-question"]
    msg = await drill.reveal_post(posted.post_id, WHERE, publisher)
    text = msg.plain()
    assert "3 answered · 67% correct" in text
    assert "fastest correct: Member 2 (10.0 s)" in text
    assert f"{q.answer} — 2 (67%)" in text
    # the message was edited in place and the explanation went to its thread
    assert publisher.updates[-1][0] == posted.ref
    ref, thread_msg, thread_of = publisher.posts[-1]
    assert thread_of == posted.ref and q.explanation in thread_msg.plain()
    assert f"• {other.prompt}" in thread_msg.plain()  # related questions by their prompt
    # answering after the reveal is refused; revealing again changes nothing
    late = await drill.handle_action(who(4), Action(Verb.PICK, posted.post_id, right).encode())
    assert "closed" in late.reply.plain()
    n_updates = len(publisher.updates)
    again = await drill.reveal_post(posted.post_id, WHERE, publisher)
    assert again.plain() == text and len(publisher.updates) == n_updates


async def test_streaks_count_consecutive_correct_daily_posts(drill, publisher, clock):
    async def day(correct_members, wrong_members):
        posted, q, right, wrong = await daily(drill, publisher)
        for n in correct_members:
            await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, right).encode())
        for n in wrong_members:
            await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, wrong).encode())
        clock.advance(hours=13)
        await drill.reveal_due(publisher)
        clock.advance(hours=11)

    await day([1, 2], [])
    await day([1], [2])
    await day([1, 2], [])
    await day([1], [])  # member 2 skips a day: streak broken
    async with drill.db.read() as s:
        rows = {r.member_id: (r.current, r.best) for r in await s.scalars(select(Streak))}
    assert sorted(rows.values()) == [(0, 1), (4, 4)]
    stats = await drill.practice.stats(who(1), WHERE)
    assert "streak **4** (best 4)" in stats.plain()


async def test_channel_never_repeats_until_pool_exhausted(drill, publisher):
    seen = []
    for _ in range(12):  # the test library has 12 MCQs
        posted = await drill.ask(WHERE, publisher, kind="now", reveal_after=None)
        async with drill.db.read() as s:
            seen.append((await s.get(Post, posted.post_id)).question_id)
    assert len(set(seen)) == 12
    posted = await drill.ask(WHERE, publisher, kind="now", reveal_after=None)  # new cycle
    async with drill.db.read() as s:
        assert (await s.get(Post, posted.post_id)).question_id in seen


async def test_topic_filtered_pool_and_unknown_topic(drill, publisher):
    for _ in range(4):
        posted = await drill.ask(WHERE, publisher, kind="now", topic="Autograd")
        async with drill.db.read() as s:
            q = drill.library[(await s.get(Post, posted.post_id)).question_id]
        assert q.topic == "autograd"
    with pytest.raises(UnknownTopicError, match=r"unknown topic 'quantum'.*autograd"):
        await drill.practice.quiz(who(1), topic="quantum", count=5, difficulty=None)
