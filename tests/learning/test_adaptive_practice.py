"""Adaptive practice (issue 33): /quiz and /review serve questions whose predicted success for
the member lies in the target band, so a member who answers everything right climbs to harder
questions within a few quizzes and one who answers everything wrong comes back down. Members
are simulated through the core (``Drill.practice`` and the answer buttons), exactly as a chat
would drive them; the difficulties served are read back from the quizzes."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import build_app, build_drill
from bot.config import Settings
from bot.core.content.bank import Bank, Kind, Library, Question
from bot.core.domain.actions import Verb, decode
from bot.core.domain.identity import Who
from bot.core.domain.messages import Message
from bot.core.drill.service import Drill
from bot.core.reveal.posts import order_of
from bot.storage.models import Post, Quiz
from tests.support.clicks import click

PER_LEVEL = 12  # multiple-choice questions per topic and difficulty


def _mcq(topic: str, level: int, i: int) -> Question:
    return Question(
        id=f"a-{topic}-{level}-{i}", bank="adaptive", kind=Kind.MCQ, topic=topic, difficulty=level,
        prompt=f"{topic} question {level}.{i}?", choices=["right", "wrong a", "wrong b", "wrong c"],
        answer="right", explanation="Because.",
    )


@pytest.fixture
def library() -> Library:
    questions = [_mcq(topic, level, i) for topic in ("tensors", "autograd")
                 for level in (1, 2, 3) for i in range(PER_LEVEL)]
    return Library(banks=[Bank(id="adaptive", title="Adaptive", path=Path("adaptive.yaml"),
                               questions=questions)])


def member(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"User {n}")


async def _latest_quiz_levels(drill: Drill) -> list[int]:
    async with drill.db.read() as s:
        quiz = await s.scalar(select(Quiz).order_by(Quiz.id.desc()).limit(1))
    assert quiz is not None
    return [drill.library[q].difficulty for q in quiz.question_ids.split(",")]


async def walk(drill: Drill, who: Who, first: Message, right: bool) -> None:
    """Answer every question of the quiz that ``first`` opens, right or wrong, then Next."""
    msg = first
    for _ in range(50):  # bounded: a quiz has at most 20 questions
        post_id = decode(msg.buttons[0].action_id).post_id
        async with drill.db.read() as s:
            post = await s.get(Post, post_id)
            assert post is not None
            keyed = order_of(post).index(drill.library[post.question_id].answer_index)
        out = await drill.handle_action(who, click(Verb.PICK, post_id, keyed if right else (keyed + 1) % 4))
        assert out.recorded
        if not any(decode(b.action_id).verb is Verb.NEXT for b in out.reply.buttons):
            assert "finished" in out.reply.plain()
            return
        msg = (await drill.handle_action(who, click(Verb.NEXT, post_id))).reply
    raise AssertionError("the quiz never finished")


async def quizzes_served(drill: Drill, who: Who, answers: list[bool], *, review: bool = False) -> list[list[int]]:
    """Difficulties of each quiz served, answering all of quiz k right when ``answers[k]``."""
    served = []
    for right in answers:
        first = (await drill.practice.review(who, count=5) if review
                 else await drill.practice.quiz(who, topic="tensors", count=5, difficulty=None))
        served.append(await _latest_quiz_levels(drill))
        await walk(drill, who, first, right)
    return served


def mean(levels: list[int]) -> float:
    return sum(levels) / len(levels)


async def test_a_member_who_answers_everything_right_climbs_and_comes_down_when_wrong(drill: Drill) -> None:
    assert drill.practice.band == (0.70, 0.85)  # the default of PRACTICE_TARGET_BAND
    climb = await quizzes_served(drill, member(1), [True] * 6)
    # new: 68% predicted on an easy question, the nearest to 70-85%; harder ones are far below
    assert climb[0] == [1] * 5
    assert climb[2] == [2] * 5  # after 10 right answers
    assert climb[5] == [3] * 5  # after 25: interview level
    assert [mean(q) for q in climb] == sorted(mean(q) for q in climb)
    fall = await quizzes_served(drill, member(1), [False] * 4)
    # fall[0] was chosen before the first wrong answer; then the served difficulty drops
    assert mean(fall[1]) < mean(climb[5]) and mean(fall[2]) < mean(fall[1]) + 0.5
    assert fall[3] == [1] * 5  # 15 wrong answers later: easy questions only


async def test_a_member_who_answers_everything_wrong_stays_on_easy_questions(drill: Drill) -> None:
    served = await quizzes_served(drill, member(2), [False] * 2)
    assert served == [[1] * 5, [1] * 5]


async def test_the_band_is_a_setting(db, library, clock) -> None:
    import random

    hard = build_drill(db, library, clock, rng=random.Random(7), practice_band=(0.25, 0.35))
    # 32% predicted on a difficulty-3 question for a new member: in this band at once
    assert (await quizzes_served(hard, member(3), [True]))[0] == [3] * 5


async def _review_served(drill: Drill, who: Who, count: int) -> list[tuple[str, int]]:
    first = await drill.practice.review(who, count=count)
    assert first.title.startswith(f"Review 1/{count}")
    async with drill.db.read() as s:
        quiz = await s.scalar(select(Quiz).order_by(Quiz.id.desc()).limit(1))
    assert quiz is not None
    return [(drill.library[q].topic, drill.library[q].difficulty) for q in quiz.question_ids.split(",")]


async def test_review_serves_due_cards_then_questions_in_the_band(drill: Drill, clock) -> None:
    await quizzes_served(drill, member(4), [True] * 4)  # tensors: 10 easy, 10 medium, all right
    # predicted success: tensors medium in the band; autograd (never tried) easy 68% and tensors
    # hard just below it; within a ring the weakest topic first (never tried before all right)
    assert await _review_served(drill, member(4), 12) == [("tensors", 2)] * 2 + [("autograd", 1)] * 10
    clock.advance(hours=24 * 60)  # every card answered so far is due: they come first
    served = await _review_served(drill, member(4), 24)
    assert sorted(served[:20]) == [("tensors", 1)] * 10 + [("tensors", 2)] * 10
    assert served[20:] == [("tensors", 2)] * 2 + [("autograd", 1)] * 2


async def test_stats_show_the_readiness_the_quizzes_earned(drill: Drill) -> None:
    await quizzes_served(drill, member(5), [True] * 3)  # 15 right: 10 easy, 5 medium
    lines = (await drill.practice.stats(member(5))).plain().splitlines()
    assert lines[:4] == [
        "**Stats for User 5**", "**15** answered · **100%** correct · streak **0** (best 0)",
        "Tensors: 100% of 15 · mastery 15/36 · readiness 65% (39-84%)",
        # Autograd untried: 27% at the prior, the most headroom of the two topics (36 questions each)
        "Interview readiness (expected share right on a difficulty-3 question): 46% (22-78%) · "
        "raise it most with Autograd, Tensors",
    ]


async def test_build_app_hands_the_band_setting_to_practice(db_url: str) -> None:
    app = await build_app(Settings(database_url=db_url, practice_target_band="30-45"), with_runner=False)
    try:
        assert app.drill.practice.band == (0.30, 0.45)
    finally:
        await app.close()
