"""A member's own numbers: accuracy, mastery and readiness per topic, weakest topics, streaks.

Readiness is the expected share right on an interview-level (difficulty 3) question, from the
member's own picks through the online update (``bot.core.progress.ability``), per topic and
overall (the banks' topic mix), with the topics that would raise the overall figure most.

Answers to a channel question that is still open are *pending*: counted as such, never as
right or wrong, until the reveal (a round's picks are not even told to the member before).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.content.bank import Kind, Library
from bot.core.domain.scoring import StreakLine, StreakState, monday_of, shown_weeks
from bot.core.learning.online import LABEL_LOGITS, PRIOR_VAR, Belief
from bot.core.learning.readiness import (
    INTERVIEW_LEVEL,
    OverallReadiness,
    Readiness,
    from_belief,
    overall_readiness,
    readiness,
)
from bot.core.progress.ports import ProgressReads, StreakRow

if TYPE_CHECKING:
    from bot.core.stores import Tx

__all__ = ["MemberStats", "TopicStats", "member_readiness", "member_stats", "weekly_line"]

WEAKEST_SHOWN = 3


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
    freezes: int = 0  # streak freezes banked (``bot.core.domain.scoring``)
    freezes_used: int = 0
    pending: int = 0  # answers to questions not revealed yet (not in the numbers above)
    readiness: dict[str, Readiness] = field(default_factory=dict)  # per answered topic
    overall: OverallReadiness | None = None
    # weekly-mode streaks (``/daily streak weekly N``): the channel's, or without a channel
    # the member's longest such; ``daily``: whether the daily streak above applies too
    weekly: StreakLine | None = None
    daily: bool = True

    @property
    def streaks(self) -> list[StreakLine]:
        """The streak lines the member reads, daily first."""
        lines = [StreakLine(self.current_streak, self.best_streak)] if self.daily else []
        return lines + ([self.weekly] if self.weekly is not None else [])

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    @property
    def weakest(self) -> list[TopicStats]:
        """Topics with at least one wrong answer, lowest accuracy first: a topic answered
        all right is nobody's weak spot, and one wrong answer out of one is a signal."""
        missed = [t for t in self.topics if t.correct < t.answered]
        return sorted(missed, key=lambda t: (t.accuracy, t.mastery, t.topic))[:WEAKEST_SHOWN]


async def member_stats(
    reads: ProgressReads, session: Tx, library: Library, member_id: int, channel_id: int | None,
    now: datetime | None = None,
) -> MemberStats:
    """The member's numbers (in ``channel_id`` only for the streaks, when given), read in the
    caller's transaction."""
    rows = await reads.member_answers(session, member_id)
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
    now = now or datetime.now(UTC)
    streaks = await reads.streaks_of(session, member_id, channel_id)
    daily_rows = [k for k, per_week, _ in streaks if not per_week]
    weekly: StreakLine | None = None
    for k, per_week, tz in streaks:
        if per_week:
            line = await weekly_line(reads, session, k, per_week, tz, now)
            if weekly is None or (line.current, line.best) > (weekly.current, weekly.best):
                weekly = line
    if weekly is None:  # weekly channels the member answered in but holds no streak yet
        for channel_pk, per_week, tz in await reads.weekly_channel(session, member_id, channel_id):
            weekly = await weekly_line(reads, session, StreakRow(member_id, channel_pk),
                                       per_week or 1, tz, now)
    current = max((k.current or 0 for k in daily_rows), default=0)
    best = max((k.best or 0 for k in daily_rows), default=0)
    freezes = max((k.freezes or 0 for k, _, _ in streaks), default=0)
    used = sum(k.freezes_used or 0 for k, _, _ in streaks)
    ready, overall = member_readiness(library, member_id, await reads.abilities(session, member_id),
                                      also=[t.topic for t in topics])
    return MemberStats(
        answered=len(rows),
        correct=sum(int(bool(r[2])) for r in rows),
        topics=topics,
        current_streak=current or 0,
        best_streak=best or 0,
        freezes=int(freezes or 0),
        freezes_used=int(used or 0),
        pending=pending,
        readiness={t.topic: ready[t.topic] for t in topics},
        overall=overall,
        weekly=weekly,
        daily=bool(daily_rows) or weekly is None,
    )


async def weekly_line(reads: ProgressReads, session: Tx, row: StreakRow, per_week: int, tz: str | None,
                      now: datetime) -> StreakLine:
    """A weekly-mode streak as the member reads it now (this week in the channel's timezone)."""
    monday = monday_of(now.astimezone(ZoneInfo(tz or "UTC")).date())
    answered = await reads.week_answers(session, row.member_id, row.channel_id, monday)
    state = StreakState(row.current or 0, row.best or 0, freezes=row.freezes or 0, week_of=row.week_of,
                        week_answers=row.week_answers or 0, week_done=bool(row.week_done))
    current = shown_weeks(state, this_week=monday, answered=answered, per_week=per_week)
    return StreakLine(current, max(row.best or 0, current), per_week, answered)


def member_readiness(library: Library, member_id: int,
                     abilities: Mapping[str, Belief],
                     also: Iterable[str] = ()) -> tuple[dict[str, Readiness], OverallReadiness]:
    """Readiness in every topic of the banks (untried ones at the prior) and overall, weighted
    by the banks' multiple-choice questions per topic, from the member's stored abilities
    (``bot.storage.estimates``: revealed answers only, so nothing tells an open question's
    result). ``also``: topics to show besides (answered under a topic the banks and the
    estimates no longer hold: at the prior). The reference question is the interview level's
    prior centre."""
    member = str(member_id)
    weights: dict[str, int] = {}
    for q in library.questions:
        if q.kind is Kind.MCQ:
            weights[q.topic] = weights.get(q.topic, 0) + 1
    topics = set(weights) | set(abilities) | set(also)
    estimates = {t: from_belief(member, t, abilities.get(t) or Belief(0.0, PRIOR_VAR)) for t in topics}
    reference = LABEL_LOGITS[INTERVIEW_LEVEL]
    per_topic = {t: readiness(e, reference) for t, e in estimates.items()}
    return per_topic, overall_readiness(estimates, weights, reference)
