"""Twins (``twin_of``) are one question to selection: a channel's cycle serves one version, and a
quiz never holds two."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bot.core.content.bank import Bank, Kind, Library, Question, twin_groups
from bot.core.domain.identity import Where, Who
from bot.core.drill.selection import next_for_channel, without_twins
from bot.storage.identity import channel_row
from bot.storage.served import StoredServed

HERE = Where("discord", "g1", "c1", "one")


def mcq(qid: str, twin_of: str | None = None) -> Question:
    return Question(id=f"{qid}{qid}", bank="twins", kind=Kind.MCQ, topic="tensors", difficulty=1,
                    prompt=f"Question {qid}?", choices=["yes", "no"], answer="yes",
                    explanation="Because.", twin_of=f"{twin_of}{twin_of}" if twin_of else None)


QUESTIONS = [mcq("a"), mcq("b", twin_of="a"), mcq("c", twin_of="b"), mcq("d"), mcq("e", twin_of="d"),
             mcq("f")]
TRIPLE = {"aa", "bb", "cc"}


@pytest.fixture
def library() -> Library:
    return Library(banks=[Bank(id="twins", title="Twins", path=Path("twins.yaml"), questions=QUESTIONS)])


def test_twin_groups_link_both_directions_and_transitively() -> None:
    groups = twin_groups(QUESTIONS)
    assert groups["cc"] == groups["aa"] == frozenset(TRIPLE)
    assert groups["ee"] == frozenset({"dd", "ee"}) and groups["ff"] == frozenset({"ff"})


async def test_a_cycle_serves_one_version_of_each_question(db) -> None:
    rng = random.Random(3)
    served: list[str] = []
    for _ in range(3 * 5):  # five cycles of three distinct questions
        async with db.write() as session:
            channel = await channel_row(session, HERE)
            served.append((await next_for_channel(StoredServed(), session, channel.id, QUESTIONS, "mcq:all", rng)).id)
    cycles = [served[i:i + 3] for i in range(0, len(served), 3)]
    for cycle in cycles:
        assert len(set(cycle) & TRIPLE) == 1, cycles
        assert len(set(cycle) & {"dd", "ee"}) == 1, cycles
        assert "ff" in cycle, cycles
    assert len({q for cycle in cycles for q in cycle if q in TRIPLE}) > 1, "versions should rotate"


def test_without_twins_keeps_the_first_version() -> None:
    order = [QUESTIONS[i] for i in (2, 5, 0, 4, 1, 3)]  # c f a e b d
    assert [q.id for q in without_twins(order)] == ["cc", "ff", "ee"]


async def test_a_quiz_never_holds_two_versions(drill) -> None:
    for seed in range(5):
        msg = await drill.practice.quiz(Who("discord", "g1", f"u{seed}", "Ann"), topic=None, count=6,
                                        difficulty=None, rng=random.Random(seed))
        assert (msg.title or "").startswith("Quiz 1/3 ·"), msg.title  # a or b or c, d or e, f
