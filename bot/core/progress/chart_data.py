"""The numbers behind every chart, computed in the core so they can be tested by hand.

Charts only draw these; each has a text alternative built from the same numbers, so the
figures in the message and in the picture cannot disagree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.domain.topics import TOPICS
from bot.core.learning.readiness import OverallReadiness, Readiness

CALENDAR_WEEKS = 12


@dataclass(frozen=True)
class TopicBar:
    topic: str
    answered: int
    accuracy: float  # share of answers correct
    retrievability: float | None  # mean FSRS recall probability of the topic's cards now
    readiness: Readiness | None = None  # expected share right on an interview-level question

    def readiness_text(self) -> str:
        if self.readiness is None:
            return ""
        if not self.readiness.enough_data:
            return f", readiness: {self.readiness.describe()}"
        r = self.readiness
        return f", readiness {round(100 * r.expected)}% ({round(100 * r.low)}-{round(100 * r.high)}%)"


@dataclass(frozen=True)
class Calendar:
    """Answers per local day for the last ``CALENDAR_WEEKS`` weeks, Monday-first columns."""

    first_day: date  # a Monday
    counts: tuple[int, ...]  # one per day from first_day, 7 × weeks

    @property
    def weeks(self) -> int:
        return len(self.counts) // 7

    def count_on(self, day: date) -> int:
        index = (day - self.first_day).days
        return self.counts[index] if 0 <= index < len(self.counts) else 0

    @property
    def active_days(self) -> int:
        return sum(1 for c in self.counts if c)


@dataclass(frozen=True)
class StatsChart:
    name: str
    topics: tuple[TopicBar, ...]
    calendar: Calendar
    streak: int
    best_streak: int
    overall: OverallReadiness | None = None  # with the topics that would raise it most
    weekly_streak: bool = False  # the streak counts weeks (``/daily streak weekly``)

    def streak_text(self) -> str:
        """``streak 3 (best 5)``, or ``streak 3 weeks (best 5)`` in weekly mode."""
        unit = (" week" if self.streak == 1 else " weeks") if self.weekly_streak else ""
        return f"streak {self.streak}{unit} (best {self.best_streak})"

    def overall_text(self) -> str:
        if self.overall is None:
            return ""
        o = self.overall
        figure = (f"{round(100 * o.expected)}% ({round(100 * o.low)}-{round(100 * o.high)}%)" if o.enough_data
                  else o.describe())
        raise_most = (", raise it most with " + ", ".join(TOPICS[t] for t in o.raise_most)) if o.raise_most else ""
        return f"Interview readiness {figure}{raise_most}"

    def alt_text(self) -> str:
        bars = "; ".join(
            f"{TOPICS[t.topic]} {round(100 * t.accuracy)}% correct"
            + (f", recall {round(100 * t.retrievability)}%" if t.retrievability is not None else "")
            + t.readiness_text()
            for t in self.topics
        )
        overall = f"{self.overall_text()}. " if self.overall is not None else ""
        return (
            f"Progress of {self.name}: {bars or 'no answers yet'}. {overall}"
            f"Active on {self.calendar.active_days} of the last {7 * self.calendar.weeks} days. "
            f"S{self.streak_text()[1:]}."
        )


@dataclass(frozen=True)
class Line:
    name: str
    days: tuple[date, ...]
    cumulative: tuple[int, ...]  # points so far at the end of each day


@dataclass(frozen=True)
class BoardChart:
    title: str
    lines: tuple[Line, ...]

    def alt_text(self) -> str:
        if not self.lines:
            return f"{self.title}: nobody has scored yet."
        ends = ", ".join(f"{line.name} {line.cumulative[-1]} pts" for line in self.lines)
        return f"{self.title}, points over time: {ends}."


@dataclass(frozen=True)
class GroupChart:
    group: str
    topics: tuple[tuple[str, float | None, float | None], ...]  # topic, group, channel accuracy
    weekly: tuple[tuple[str, tuple[int, ...]], ...]  # member, answers per week (oldest first)

    def alt_text(self) -> str:
        parts = [
            f"{TOPICS[t]} group {_pct(g)} vs this channel {_pct(c)}" for t, g, c in self.topics
        ]
        active = ", ".join(f"{name} {sum(weeks)} answers" for name, weeks in self.weekly)
        return (f"Group {self.group}: accuracy per topic: {'; '.join(parts) or 'no answers yet'}. "
                f"Activity over {len(self.weekly[0][1]) if self.weekly else 0} weeks: {active or 'none'}.")


def _pct(share: float | None) -> str:
    return "–" if share is None else f"{round(100 * share)}%"


def calendar_of(times: Iterable[datetime], now: datetime, tz: str, weeks: int = CALENDAR_WEEKS) -> Calendar:
    """Bin answer times into local days; the last column is the current (local) week."""
    zone = ZoneInfo(tz)
    today = now.astimezone(zone).date()
    first = today - timedelta(days=today.weekday()) - timedelta(weeks=weeks - 1)
    counts = [0] * (7 * weeks)
    for moment in times:
        index = (moment.astimezone(zone).date() - first).days
        if 0 <= index < len(counts):
            counts[index] += 1
    return Calendar(first, tuple(counts))


def cumulative_lines(
    events: Iterable[tuple[str, datetime, int]], start: date, end: date, tz: str, keep: Sequence[str]
) -> tuple[Line, ...]:
    """(member, when, points) → one cumulative line per member in ``keep`` order, day by day."""
    zone = ZoneInfo(tz)
    days = tuple(start + timedelta(days=i) for i in range((end - start).days + 1))
    per_day: dict[str, dict[date, int]] = defaultdict(lambda: defaultdict(int))
    for name, when, points in events:
        per_day[name][when.astimezone(zone).date()] += points
    lines = []
    for name in keep:
        total, series = 0, []
        for day in days:
            total += per_day[name].get(day, 0)
            series.append(total)
        lines.append(Line(name, days, tuple(series)))
    return tuple(lines)


def weekly_counts(times: Iterable[datetime], now: datetime, tz: str, weeks: int) -> tuple[int, ...]:
    cal = calendar_of(times, now, tz, weeks)
    return tuple(sum(cal.counts[7 * w: 7 * w + 7]) for w in range(weeks))
