"""What the reveal tells a channel, and the streaks it settles (issue 21, survivors of
bot/core/render and bot/core/reveal/posts.py).

The reveal's title, the share of each letter with no answers, the fastest correct answer (the
fastest, of this post, the first of a tie), the explanation thread, which posts are due, and
which posts move a daily streak.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from bot.core.content.bank import Kind, Question, Snippet
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import CodeBlock
from bot.core.domain.topics import TOPICS
from bot.core.render.answers import answer_feedback, picked_text, why_not_line
from bot.core.render.reveals import explanation_message
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

HERE = Where("discord", "g1", "c1", "one")
THERE = Where("discord", "g1", "c2", "two")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


def question(**extra: object) -> Question:
    fields: dict[str, object] = dict(
        id="r-1", kind=Kind.MCQ, topic="tensors", difficulty=2, prompt="Which one?",
        choices=["right", "wrong a", "wrong b", "wrong c"], answer="right", explanation="Because.",
    )
    fields.update(extra)
    return Question(**fields)


async def ask(drill, publisher, where: Where = HERE, kind: str = "daily"):
    """(post id, keyed position, a wrong position, the question)."""
    posted = await drill.ask(where, publisher, kind=kind)
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        q = drill.library[post.question_id]
        order = order_of(post)
    right = order.index(q.answer_index)
    return posted.post_id, right, (right + 1) % len(order), q


async def pick(drill, member: int, post_id: int, position: int) -> None:
    await drill.handle_action(who(member), Action(Verb.PICK, post_id, position).encode())


def streak_of(message) -> tuple[int, int]:
    found = re.search(r"streak \*\*(\d+)\*\* \(best (\d+)\)", message.plain())
    assert found, message.plain()
    return int(found.group(1)), int(found.group(2))


# ---- the reveal message -------------------------------------------------------------------


async def test_a_reveal_with_no_answers_names_the_post_and_shows_zero_shares(drill, publisher) -> None:
    post_id, right, _, q = await ask(drill, publisher)
    message = await drill.reveal_post(post_id, HERE, publisher)
    stars = "★" * q.difficulty + "☆" * (3 - q.difficulty)
    assert message.title == f"Daily question · {TOPICS[q.topic]} · {stars} · answer"
    lines = message.plain().splitlines()
    assert sum(line.endswith(" — 0 (0%)") for line in lines) == 4
    assert lines[-2:] == ["0 answered · 0% correct", "[🚩 Report]"]


async def test_the_fastest_correct_answer_is_the_quickest_of_this_post(drill, publisher, clock) -> None:
    earlier, right, _, _ = await ask(drill, publisher)
    await pick(drill, 9, earlier, right)  # 0 ms, on another post
    await drill.reveal_post(earlier, HERE, publisher)
    post_id, right, wrong, _ = await ask(drill, publisher, kind="now")
    opened = clock.now()
    clock.advance(90)
    await pick(drill, 1, post_id, right)  # 90 s
    await pick(drill, 3, post_id, wrong)
    clock.set(opened + timedelta(seconds=60))  # read its clock first, inserted second (a race)
    await pick(drill, 2, post_id, right)  # 60 s, a later row
    message = await drill.reveal_post(post_id, HERE, publisher)
    assert message.plain().splitlines()[-2] == "3 answered · 67% correct · fastest correct: Player 2 (60.0 s)"


async def test_of_two_equally_fast_answers_the_first_recorded_wins(drill, publisher, clock) -> None:
    earlier, right, _, _ = await ask(drill, publisher, kind="now")
    await pick(drill, 2, earlier, right)  # Player 2 becomes a member first
    post_id, right, _, _ = await ask(drill, publisher, kind="now")
    clock.advance(5)
    await pick(drill, 1, post_id, right)
    await pick(drill, 2, post_id, right)  # the same instant, recorded second
    message = await drill.reveal_post(post_id, HERE, publisher)
    assert message.plain().endswith("fastest correct: Player 1 (5.0 s)\n[🚩 Report]")


async def test_revealing_a_missing_post_names_it(drill, publisher) -> None:
    with pytest.raises(LookupError, match=r"^post 999 does not exist$"):
        await drill.reveal_post(999, HERE, publisher)


# ---- which posts are due ------------------------------------------------------------------


async def test_posts_are_revealed_at_their_time_and_only_once(drill, publisher, clock) -> None:
    post_id, *_ = await ask(drill, publisher)
    clock.advance(timedelta(hours=12).total_seconds() - 1)
    assert await drill.reveal_due(publisher) == 0
    assert len(publisher.updates) == 0
    clock.advance(1)  # exactly the reveal time
    assert await drill.reveal_due(publisher) == 1
    assert [ref for ref, _ in publisher.updates] == ["m1"]
    assert await drill.reveal_due(publisher) == 0


# ---- streaks: only daily posts of the same channel ----------------------------------------


async def daily(drill, publisher, answers: dict[int, bool], where: Where = HERE, kind: str = "daily") -> None:
    post_id, right, wrong, _ = await ask(drill, publisher, where, kind)
    for member, correct in answers.items():
        await pick(drill, member, post_id, right if correct else wrong)
    await drill.reveal_post(post_id, where, publisher)
    drill.clock.advance(24 * 3600)


async def test_a_first_correct_daily_starts_a_streak_of_one_best_one(drill, publisher) -> None:
    await daily(drill, publisher, {1: True})
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (1, 1)


async def test_other_channels_and_other_post_kinds_neither_break_nor_extend_a_streak(drill, publisher) -> None:
    await daily(drill, publisher, {1: True})
    await daily(drill, publisher, {2: True}, where=THERE)  # another channel's daily
    await daily(drill, publisher, {2: True}, kind="now")  # a /now question member 1 skipped
    await daily(drill, publisher, {1: True}, kind="now")  # and one member 1 got right
    await daily(drill, publisher, {1: True})
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (2, 2)


# ---- the explanation thread and the private reply -----------------------------------------


def test_explanation_thread_lists_three_related_questions_and_two_snippets() -> None:
    q = question(code=[Snippet(code=f"print({i})") for i in range(4)])
    related = [question(id=f"r-{i}", prompt=f"Related {i}?") for i in range(2, 6)]
    message = explanation_message(q, related)
    assert message.title == "Explanation"
    assert [b.code for b in message.blocks if isinstance(b, CodeBlock)] == ["print(0)", "print(1)"]
    assert message.blocks[-1].text == "**Go deeper** (in /quiz and /review):\n• Related 2?\n• Related 3?\n• Related 4?"
    assert "Why not" not in message.plain()  # no distractor has a reason


def test_a_choice_missing_from_the_order_keeps_its_own_letter() -> None:
    q = question(why_not={"wrong b": "b is off by one"})
    assert picked_text(q, [], 2) == "**C.** wrong b"
    assert why_not_line(q, [], 2) == "**Why not C:** b is off by one"


def test_replies_are_private_and_say_exactly_what_happened() -> None:
    q = question()
    locked = answer_feedback(q, [1, 0, 2, 3], 0, correct=True, points=20, reveal_now=False,
                             hide_result=True, closes=None)
    assert locked.ephemeral is True
    assert locked.plain() == "Locked in: **B.** right\nResults are shown when the question closes."
    practice = answer_feedback(q, [1, 0, 2, 3], 0, correct=True, points=0, reveal_now=False,
                               hide_result=False, closes=None)
    assert practice.ephemeral is True
    assert practice.plain() == "**✅ Correct!**\nYou picked **B.** right"


async def test_two_reveals_at_once_credit_the_points_once(drill, publisher) -> None:
    """Two replicas reveal the same post together: one credits the board, one publishes."""
    import asyncio

    post_id, right, _, q = await ask(drill, publisher)
    await pick(drill, 1, post_id, right)
    first, second = await asyncio.gather(*(drill.reveal_post(post_id, HERE, publisher) for _ in range(2)))
    assert first.plain() == second.plain()
    assert len(publisher.updates) == 1
    board = await drill.boards.leaderboard(who(1), HERE, period="all")
    assert board.blocks[0].text == f"🥇 **Player 1** — {10 * q.difficulty} pts · 100% of 1"
