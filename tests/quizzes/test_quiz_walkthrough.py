"""A personal quiz as the member walks it (issue 21 survivors of the whole-tree run): the
questions it picks, its private progress, Next and Stop, the summary, and the notices for a
quiz that is gone or someone else's."""

from __future__ import annotations

import random

from bot.core.domain.actions import Verb, decode
from bot.core.quizzes import sequence as quizzes
from bot.core.reveal.posts import order_of
from bot.storage.models import Post, Quiz
from tests.support.clicks import WHERE, click, who


async def start(drill, member, **options) -> tuple[object, Quiz]:
    options = {"topic": None, "count": 3, "difficulty": 1, **options}  # difficulty 1: MCQs only
    async with drill.db.write() as s:
        first = await quizzes.start_quiz(drill.quiz_store, drill.identities, s, drill.library, drill.clock, member, rng=random.Random(1), **options)
    async with drill.db.read() as s:
        quiz = await s.get(Quiz, (await s.get(Post, decode(first.buttons[0].action_id).post_id)).quiz_id)
    return first, quiz


async def pick(drill, member, msg, right: bool):
    post_id = decode(msg.buttons[0].action_id).post_id
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
        keyed = order_of(post).index(drill.library[post.question_id].answer_index)
    return await drill.handle_action(member, click(Verb.PICK, post_id, keyed if right else (keyed + 1) % 4))


async def test_a_quiz_draws_the_difficulty_asked_and_unseen_questions_first(drill) -> None:
    _, hard = await start(drill, who(1), difficulty=3, count=10)
    assert {drill.library[q].difficulty for q in quizzes._ids(hard)} == {3}
    first, quiz = await start(drill, who(2), count=2)
    answered = quizzes._ids(quiz)[0]
    out = await pick(drill, who(2), first, True)
    await drill.handle_action(who(2), click(Verb.STOP, out.post_id))
    _, again = await start(drill, who(2), count=4)  # the 4 questions of difficulty 1
    assert len(quizzes._ids(again)) == 4 and quizzes._ids(again)[-1] == answered  # seen ones last


async def test_next_and_stop_walk_the_quiz_privately_and_sum_it_up(drill) -> None:
    first, quiz = await start(drill, who(1))
    assert first.ephemeral and first.title.startswith("Quiz 1/3 · ")
    out = await pick(drill, who(1), first, True)
    assert [b.label for b in out.reply.buttons] == ["Next question", "Stop", "🚩 Report"]
    foreign = await drill.handle_action(who(2), click(Verb.NEXT, out.post_id))
    assert foreign.reply.plain() == "This is someone else's quiz. Start your own with /quiz."
    second = (await drill.handle_action(who(1), click(Verb.NEXT, out.post_id))).reply
    assert second.ephemeral and second.title.startswith("Quiz 2/3 · ")
    twice = (await drill.handle_action(who(1), click(Verb.NEXT, out.post_id))).reply  # a double click
    assert twice.ephemeral and twice.title == second.title and twice.buttons == second.buttons
    wrong = await pick(drill, who(1), second, False)
    stopped = await drill.handle_action(who(1), click(Verb.STOP, wrong.post_id))
    assert stopped.reply.plain() == "**Quiz finished:** 1/2 correct (2 of 3 answered)."
    after = await drill.handle_action(who(1), click(Verb.NEXT, wrong.post_id))
    assert after.reply.plain() == "**Quiz finished:** 1/2 correct (2 of 3 answered)."


async def test_progress_counts_this_quiz_only(drill) -> None:
    """Two members' quizzes interleave their posts; each one's numbering is its own."""
    theirs, _ = await start(drill, who(2))  # its post comes first
    mine, _ = await start(drill, who(1))
    out = await pick(drill, who(1), mine, True)
    await pick(drill, who(2), theirs, True)
    nxt = (await drill.handle_action(who(1), click(Verb.NEXT, out.post_id))).reply
    assert nxt.title.startswith("Quiz 2/3 · ")


async def test_buttons_of_a_gone_quiz_and_an_empty_review(drill, publisher) -> None:
    gone = await drill.handle_action(who(1), click(Verb.NEXT, 9999))
    assert gone.reply.plain() == "That quiz no longer exists. Start a new one with /quiz."
    channel = await drill.ask(WHERE, publisher, kind="daily")
    not_a_quiz = await drill.handle_action(who(1), click(Verb.STOP, channel.post_id))
    assert not_a_quiz.reply.plain() == "That quiz no longer exists. Start a new one with /quiz."
    async with drill.db.write() as s:
        review = await quizzes.start_review(drill.quiz_store, drill.identities, drill.cards, s, drill.library, drill.clock, who(3), count=len(drill.library))
    walked = review
    for _ in range(len(drill.library)):  # answer the whole review: every card scheduled later
        post_id = decode(walked.buttons[0].action_id).post_id
        if walked.buttons[0].label == "Show answer":
            await drill.handle_action(who(3), click(Verb.SHOW, post_id))
            out = await drill.handle_action(who(3), click(Verb.GRADE, post_id, 3))
        else:
            out = await pick(drill, who(3), walked, True)
        if not any(b.label == "Next question" for b in out.reply.buttons):  # 🚩 Report may remain
            n = len(drill.library)
            text = [line for line in out.reply.plain().splitlines() if line != "[🚩 Report]"]
            assert text[-1] == f"**Review finished:** {n}/{n} correct ({n} of {n} answered)."
            break
        walked = (await drill.handle_action(who(3), click(Verb.NEXT, out.post_id))).reply
    else:
        raise AssertionError("the review never finished")
    async with drill.db.write() as s:
        empty = await quizzes.start_review(drill.quiz_store, drill.identities, drill.cards, s, drill.library, drill.clock, who(3), count=5)
    assert empty.plain() == "Nothing to review right now; every card is scheduled for later."

