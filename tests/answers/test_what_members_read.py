"""Assertions on what members read: the ✅ on the keyed choice whatever the shuffle, counts next
to the right letters, streak numbers after skipped days and wrong answers (issue 21's planted
bugs: both must fail here)."""

from __future__ import annotations

import re

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

HERE = Where("discord", "g1", "c1", "one")
LETTERS = "ABCD"
LINE = re.compile(r"^(✅|▫️) \*\*([A-D])\.\*\* (.*) — (\d+) \(\d+%\)$")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


async def post_with_picks(drill, publisher, picks: dict[int, int]) -> tuple[int, list[int], int]:
    """picks: member -> displayed position. Returns (post id, order, keyed display position)."""
    posted = await drill.ask(HERE, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        order = order_of(post)
        key = drill.library[post.question_id].answer_index
    for member, position in picks.items():
        drill.clock.advance(1)
        await drill.handle_action(who(member), Action(Verb.PICK, posted.post_id, position).encode())
    return posted.post_id, order, order.index(key)


async def test_reveal_marks_the_keyed_choice_and_counts_sit_by_their_letters(drill, publisher) -> None:
    seen_key_positions = set()
    for _ in range(8):  # different shuffles put the key at different letters
        picks = {1: 0, 2: 1, 3: 1, 4: 3}
        post_id, order, key_pos = await post_with_picks(drill, publisher, picks)
        seen_key_positions.add(key_pos)
        message = await drill.reveal_post(post_id, HERE, publisher)
        async with drill.db.read() as s:
            question = drill.library[(await s.get(Post, post_id)).question_id]
        lines = [m for line in message.plain().splitlines() if (m := LINE.match(line))]
        assert [m.group(2) for m in lines] == list(LETTERS[: len(order)])
        marked = [m for m in lines if m.group(1) == "✅"]
        assert len(marked) == 1
        assert marked[0].group(2) == LETTERS[key_pos]
        assert marked[0].group(3) == question.answer
        for position, m in enumerate(lines):
            assert m.group(3) == question.choices[order[position]]
            assert int(m.group(4)) == sum(1 for p in picks.values() if p == position)
        right = sum(1 for p in picks.values() if p == key_pos)
        assert f"4 answered · {round(100 * right / 4)}% correct" in message.plain()
    assert len(seen_key_positions) > 1, "the test needs shuffles that move the key"


async def daily(drill, publisher, answers: dict[int, bool]) -> None:
    post_id, order, key_pos = await post_with_picks(drill, publisher, {})
    for member, correct in answers.items():
        drill.clock.advance(1)
        position = key_pos if correct else (key_pos + 1) % len(order)
        await drill.handle_action(who(member), Action(Verb.PICK, post_id, position).encode())
    await drill.reveal_post(post_id, HERE, publisher)
    drill.clock.advance(24 * 3600)


def streak_of(message) -> tuple[int, int]:
    found = re.search(r"streak \*\*(\d+)\*\* \(best (\d+)\)", message.plain())
    assert found, message.plain()
    return int(found.group(1)), int(found.group(2))


async def test_streak_counts_consecutive_daily_questions_and_breaks(drill, publisher) -> None:
    await daily(drill, publisher, {1: True, 2: True})
    await daily(drill, publisher, {1: True, 2: True})
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (2, 2)
    await daily(drill, publisher, {1: False, 2: True})  # a wrong answer breaks it
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (0, 2)
    assert streak_of(await drill.practice.stats(who(2), HERE)) == (3, 3)


async def test_a_skipped_daily_question_breaks_the_streak(drill, publisher) -> None:
    await daily(drill, publisher, {1: True, 2: True})
    await daily(drill, publisher, {1: True, 2: True})
    await daily(drill, publisher, {2: True})  # member 1 skips this one
    await daily(drill, publisher, {1: True, 2: True})
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (1, 2)
    assert streak_of(await drill.practice.stats(who(2), HERE)) == (4, 4)


async def test_a_skipped_question_still_open_breaks_the_streak_too(drill, publisher) -> None:
    """Day 2 is still open (a long reveal delay) when day 3 is revealed: member 1 skipped day 2,
    so day 3 starts a new streak; it does not continue day 1's."""
    await daily(drill, publisher, {1: True})
    day2, order2, key2 = await post_with_picks(drill, publisher, {})
    drill.clock.advance(24 * 3600)
    await daily(drill, publisher, {1: True})
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (1, 1)
    await drill.reveal_post(day2, HERE, publisher)
    assert streak_of(await drill.practice.stats(who(1), HERE)) == (1, 1)
