"""A member's accuracy per topic, which orders /review (weakest topics first): exact figures
from revealed answers only, the member's own (issue 21 survivors of the whole-tree run)."""

from __future__ import annotations

from bot.core.domain.actions import Verb, decode
from bot.core.quizzes import sequence as quizzes
from bot.core.reveal.posts import order_of
from bot.storage.identity import member_row
from bot.storage.models import Post, Quiz
from tests.support.clicks import WHERE, click, who


async def answered(drill, publisher, topic: str, picks: dict[int, bool], *, reveal: bool = True) -> None:
    posted = await drill.ask(WHERE, publisher, kind="daily", topic=topic)
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        right = order_of(post).index(drill.library[post.question_id].answer_index)
    for n, ok in picks.items():
        await drill.handle_action(who(n), click(Verb.PICK, posted.post_id, right if ok else (right + 1) % 4))
    if reveal:
        await drill.reveal_post(posted.post_id, WHERE, publisher)


async def test_accuracy_counts_only_the_members_revealed_answers(drill, publisher) -> None:
    await answered(drill, publisher, "autograd", {1: True, 2: False})
    await answered(drill, publisher, "autograd", {1: False, 2: False})
    await answered(drill, publisher, "autograd", {1: True})
    await answered(drill, publisher, "tensors", {1: False, 2: True})
    await answered(drill, publisher, "tensors", {1: True}, reveal=False)  # still open: not yet
    async with drill.db.read() as s:
        member = await member_row(s, who(1), drill.clock)
        assert await drill.practice.reads.member_topic_accuracy(s, member.id) == {"autograd": (2 / 3, 3), "tensors": (0.0, 1)}


async def test_review_offers_the_weakest_topic_first(drill, publisher) -> None:
    """tensors 0% first, then the untried optimization (counted as 50%), then autograd 100%.
    With the success band wide open every question is in it, so only the topic order remains
    (adaptive ordering: tests/learning/test_adaptive_practice.py)."""
    await answered(drill, publisher, "autograd", {1: True})
    await answered(drill, publisher, "tensors", {1: False})
    async with drill.db.write() as s:
        first = await quizzes.start_review(drill.quiz_store, drill.identities, drill.cards, s, drill.library, drill.clock, who(1), count=20,
                                           band=(0.0, 1.0))
        quiz = await s.get(Quiz, (await s.get(Post, decode(first.buttons[0].action_id).post_id)).quiz_id)
        topics = [drill.library[qid].topic for qid in quizzes._ids(quiz)]
    rank = {"tensors": 0, "optimization": 1, "autograd": 2}
    assert [rank[t] for t in topics] == sorted(rank[t] for t in topics) and set(topics) == set(rank)
    assert len(topics) == len(drill.library) - 2  # every question but the two answered ones
