"""Personal quizzes, flashcard self-grading, spaced-repetition review, and live rounds."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from bot.core.domain.actions import Verb, decode
from bot.core.domain.identity import Where, Who
from bot.core.drill.selection import EmptyPoolError
from bot.core.reveal.posts import order_of
from bot.storage.models import Answer, Post, Quiz, SrsCard

ME = Who("console", "local", "me", "Me")
OTHER = Who("console", "local", "you", "You")
HERE = Where("console", "local", "room")


def button(msg, verb: Verb, arg: int | None = None) -> str:
    for b in msg.buttons:
        action = decode(b.action_id)
        if action.verb is verb and (arg is None or action.arg == arg):
            return b.action_id
    raise AssertionError(f"no {verb} button in {msg.plain()}")


async def correct_position(drill, action_id: str) -> int:
    async with drill.db.read() as s:
        post = await s.get(Post, decode(action_id).post_id)
        return order_of(post).index(drill.library[post.question_id].answer_index)


async def test_quiz_runs_to_a_summary_with_feedback_and_explanations(drill):
    msg = await drill.practice.quiz(ME, topic="tensors", count=3, difficulty=None)
    assert msg.ephemeral and "Quiz 1/3" in msg.title
    for i in range(3):
        pick = button(msg, Verb.PICK)
        right = await correct_position(drill, pick)
        choose = right if i < 2 else (right + 1) % 4
        out = await drill.handle_action(ME, pick.rsplit(":", 1)[0] + f":{choose}")
        assert out.recorded and "**Why:**" in out.reply.plain()  # explanation right away
        assert out.public is None  # private: nothing to refresh in a channel
        if i < 2:
            msg = (await drill.handle_action(ME, button(out.reply, Verb.NEXT))).reply
    assert "Quiz finished:** 2/3 correct" in out.reply.plain()
    async with drill.db.read() as s:
        assert await s.scalar(select(func.sum(Answer.points))) == 0  # practice earns no points


async def test_double_click_on_next_does_not_skip_and_others_cannot_answer(drill):
    msg = await drill.practice.quiz(ME, topic="tensors", count=3, difficulty=None)
    pick = button(msg, Verb.PICK)
    out = await drill.handle_action(ME, pick)
    nxt = button(out.reply, Verb.NEXT)
    first = (await drill.handle_action(ME, nxt)).reply
    second = (await drill.handle_action(ME, nxt)).reply
    assert first.title == second.title and "2/3" in first.title
    assert button(first, Verb.PICK) == button(second, Verb.PICK)
    stolen = await drill.handle_action(OTHER, button(first, Verb.PICK))
    assert "someone else's quiz" in stolen.reply.plain() and not stolen.recorded
    stop = await drill.handle_action(ME, button(out.reply, Verb.STOP))
    assert "Quiz finished" in stop.reply.plain()


async def test_quiz_input_errors_are_clear(drill):
    with pytest.raises(EmptyPoolError, match="no questions match"):
        await drill.practice.quiz(ME, topic="data", count=5, difficulty=None)


async def test_flashcard_show_and_self_grade_drive_fsrs(drill, clock):
    msg = await drill.practice.review(ME, count=20)
    # nothing answered yet: review serves new questions; find a flashcard among them
    for _ in range(20):
        if any(decode(b.action_id).verb is Verb.SHOW for b in msg.buttons):
            break
        out = await drill.handle_action(ME, button(msg, Verb.PICK))
        msg = (await drill.handle_action(ME, button(out.reply, Verb.NEXT))).reply
    shown = (await drill.handle_action(ME, button(msg, Verb.SHOW))).reply
    assert "How well did you know it?" in shown.plain()
    graded = await drill.handle_action(ME, button(shown, Verb.GRADE, 1))
    assert graded.recorded and "Saved: **Again**" in graded.reply.plain()
    again = await drill.handle_action(ME, button(shown, Verb.GRADE, 4))
    assert "already graded" in again.reply.plain() and not again.recorded
    post_id = decode(button(shown, Verb.GRADE, 1)).post_id
    async with drill.db.read() as s:
        qid = (await s.get(Post, post_id)).question_id
        card = await s.get(SrsCard, (1, qid))
    assert card is not None and card.reps == 1
    # an hour later every card seen so far is due: the review serves them before unseen ones
    clock.advance(hours=1)
    nxt = await drill.practice.review(ME, count=20)
    async with drill.db.read() as s:
        known = set(await s.scalars(select(SrsCard.question_id).where(SrsCard.member_id == 1)))
        ids = (await s.scalar(select(Quiz).order_by(Quiz.id.desc()).limit(1))).question_ids.split(",")
    assert qid in known and set(ids[: len(known)]) == known
    assert nxt.title.startswith(f"Review 1/{min(20, len(drill.library))}")


async def test_live_round_posts_reveals_and_final_standings(drill, publisher, clock):
    import asyncio

    clock.auto = False
    round_id = await drill.rounds.start(HERE, ME, count=2, seconds=20, topic=None)
    assert isinstance(round_id, int)
    busy = await drill.rounds.start(HERE, OTHER, count=2, seconds=20, topic=None)
    assert "already running" in busy.plain()
    task = asyncio.create_task(drill.rounds.play(round_id, HERE, publisher))

    for number in (1, 2):
        while clock.sleepers == 0:  # the question is up and the timer runs
            await asyncio.sleep(0.01)
        ref, msg, thread = [p for p in publisher.posts if p[1].buttons][-1]
        assert thread is None and "Round" in msg.title
        pick = button(msg, Verb.PICK)
        right = await correct_position(drill, pick)
        out = await drill.handle_action(ME, pick.rsplit(":", 1)[0] + f":{right}")
        assert "Locked in" in out.reply.plain() and "Correct" not in out.reply.plain()
        assert "1 answered" in out.public.footer
        clock.advance(20)
        while clock.sleepers and number == 1:
            await asyncio.sleep(0.01)
    final = await task
    assert "final standings" in final.title and "**Me**" in final.plain()
    reveals = [m for _, m in publisher.updates]
    assert len(reveals) == 2 and all("1 answered · 100% correct" in m.plain() for m in reveals)
    # results after each question go into that question's thread
    assert sum("after question" in (m.title or "") for _, m, t in publisher.posts if t) == 2
    assert isinstance(await drill.rounds.start(HERE, OTHER, count=1, seconds=10, topic=None), int)


async def test_a_topic_round_names_each_standing_where_it_belongs(drill, publisher, clock):
    import asyncio

    clock.auto = False
    round_id = await drill.rounds.start(HERE, ME, count=2, seconds=30, topic="tensors")
    busy = await drill.rounds.start(HERE, OTHER, count=2, seconds=20, topic=None)
    assert busy.plain() == "A round is already running in this channel; wait for it to finish."
    task = asyncio.create_task(drill.rounds.play(round_id, HERE, publisher))
    for number in (1, 2):
        while clock.sleepers == 0:
            await asyncio.sleep(0.01)
        ref, msg, _ = [p for p in publisher.posts if p[1].buttons][-1]
        pick = button(msg, Verb.PICK)
        right = await correct_position(drill, pick)
        if number == 1:  # one right, one wrong
            await drill.handle_action(ME, pick.rsplit(":", 1)[0] + f":{right}")
        else:
            await drill.handle_action(ME, pick.rsplit(":", 1)[0] + f":{(right + 1) % 4}")
        clock.advance(30)
        while clock.sleepers and number == 1:
            await asyncio.sleep(0.01)
    final = await task
    async with drill.db.read() as s:
        posts = (await s.scalars(select(Post).where(Post.round_id == round_id).order_by(Post.id))).all()
    assert [drill.library[p.question_id].topic for p in posts] == ["tensors", "tensors"]
    assert all((p.closes_at - p.opened_at).total_seconds() == 30 for p in posts)
    refs = [ref for ref, m, t in publisher.posts if m.buttons]
    threaded = [(m.title, t) for _, m, t in publisher.posts if t and m.title != "Explanation"]
    assert threaded == [("Round — after question 1/2", refs[0]), ("Round — after question 2/2", refs[1])]
    assert publisher.posts[-1][1] is final and publisher.posts[-1][2] is None
    points = (await drill.rounds.standings(round_id, "x")).plain().splitlines()[1]
    assert final.title == "Round — final standings" and final.plain().splitlines()[1] == points
    assert points.startswith("1. **Me** — ") and points.endswith(" pts (1 correct)")
