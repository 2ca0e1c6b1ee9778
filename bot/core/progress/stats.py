"""A member's own numbers: accuracy and mastery per topic, weakest topics, streaks.

Answers to a channel question that is still open are *pending*: counted as such, never as
right or wrong, until the reveal (a round's picks are not even told to the member before).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Library
from bot.storage.models import Answer, Streak
from bot.storage.progress_queries import on_open_question

MIN_ANSWERS_FOR_WEAK = 2




@dataclass(frozen=True)
class TopicStats:
    topic: str
    answered: int
    correct: int
    mastered: int  # distinct questions whose latest answer was correct
    available: int  # questions in the banks for this topic

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    @property
    def mastery(self) -> float:
        return self.mastered / self.available if self.available else 0.0


@dataclass(frozen=True)
class MemberStats:
    answered: int
    correct: int
    topics: list[TopicStats]
    current_streak: int
    best_streak: int
    pending: int = 0  # answers to questions not revealed yet (not in the numbers above)

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    @property
    def weakest(self) -> list[TopicStats]:
        tried = [t for t in self.topics if t.answered >= MIN_ANSWERS_FOR_WEAK]
        return sorted(tried, key=lambda t: (t.accuracy, t.mastery, t.topic))[:3]


async def topic_accuracy(session: AsyncSession, member_id: int) -> dict[str, tuple[float, int]]:
    rows = await session.execute(
        select(Answer.topic, func.sum(case((Answer.correct, 1), else_=0)), func.count())
        .where(Answer.member_id == member_id, ~on_open_question())
        .group_by(Answer.topic)
    )
    return {topic: (int(c or 0) / n, n) for topic, c, n in rows}


async def member_stats(
    session: AsyncSession, library: Library, member_id: int, channel_id: int | None
) -> MemberStats:
    rows = (
        await session.execute(
            select(Answer.question_id, Answer.topic, Answer.correct, on_open_question())
            .where(Answer.member_id == member_id)
            .order_by(Answer.answered_at, Answer.id)
        )
    ).all()
    pending = sum(1 for r in rows if r[3])
    rows = [r for r in rows if not r[3]]
    latest: dict[str, tuple[str, bool]] = {}
    per_topic: dict[str, list[int]] = {}
    for question_id, topic, correct, _ in rows:
        latest[question_id] = (topic, bool(correct))
        counts = per_topic.setdefault(topic, [0, 0])
        counts[0] += 1
        counts[1] += int(bool(correct))
    mastered: dict[str, int] = {}
    for topic, correct in latest.values():
        mastered[topic] = mastered.get(topic, 0) + int(correct)
    available: dict[str, int] = {}
    for q in library.questions:
        available[q.topic] = available.get(q.topic, 0) + 1
    topics = [
        TopicStats(t, a, c, mastered.get(t, 0), available.get(t, 0))
        for t, (a, c) in sorted(per_topic.items())
    ]
    streak_query = select(func.max(Streak.current), func.max(Streak.best)).where(
        Streak.member_id == member_id
    )
    if channel_id is not None:
        streak_query = streak_query.where(Streak.channel_id == channel_id)
    current, best = (await session.execute(streak_query)).one()
    return MemberStats(
        answered=len(rows),
        correct=sum(int(bool(r[2])) for r in rows),
        topics=topics,
        current_streak=current or 0,
        best_streak=best or 0,
        pending=pending,
    )
