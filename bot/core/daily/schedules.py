"""Schedules as the core reads them: the daily time, weekdays, timezone, topic and banks of a
channel, its weekly posts' times, and when each fires (DST included). Pure: the rows come from
bot.storage.schedules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.content.community import DEFAULT_BANK_SOURCE, SOURCE_LABELS
from bot.core.domain.identity import Where
from bot.core.domain.topics import TOPICS

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_REVEAL = timedelta(hours=12)
CATCH_UP_GRACE = timedelta(hours=3)  # a restart this long after the hour still posts


class ScheduleError(ValueError):
    pass


def parse_time(value: str) -> str:
    match = re.fullmatch(r"\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*", value.lower())
    if not match:
        raise ScheduleError(f"invalid time {value!r}: use HH:MM in 24-hour form, e.g. 09:00 or 17:30")
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if match.group(3):
        if not 1 <= hour <= 12:
            raise ScheduleError(f"invalid time {value!r}: the hour must be 1-12 with am/pm")
        hour = hour % 12 + (12 if match.group(3) == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleError(f"invalid time {value!r}: hours go to 23 and minutes to 59")
    return f"{hour:02d}:{minute:02d}"


def parse_weekdays(value: str | None) -> list[str]:
    text = (value or "mon-fri").strip().lower()
    named = {"weekdays": "mon-fri", "workdays": "mon-fri", "daily": "mon-sun", "every day": "mon-sun",
             "all": "mon-sun", "weekends": "sat,sun"}
    text = named.get(text, text)
    days: list[str] = []
    for part in re.split(r"[,\s]+", text):
        if not part:
            continue
        ends = part.split("-")
        if not all(e[:3] in WEEKDAYS for e in ends) or len(ends) > 2:
            raise ScheduleError(
                f"invalid weekdays {value!r}: use e.g. mon-fri, mon,wed,fri, daily or weekends"
            )
        first, last = WEEKDAYS.index(ends[0][:3]), WEEKDAYS.index(ends[-1][:3])
        span = range(first, last + 1) if first <= last else [*range(first, 7), *range(0, last + 1)]
        days.extend(WEEKDAYS[i] for i in span if WEEKDAYS[i] not in days)
    if not days:
        raise ScheduleError(f"invalid weekdays {value!r}: name at least one day")
    return sorted(days, key=WEEKDAYS.index)


@dataclass(frozen=True)
class ScheduleView:
    channel_pk: int
    where: Where
    time_of_day: str
    timezone: str
    weekdays: list[str]
    topic: str | None
    reveal_after: timedelta
    paused: bool
    challenge_at: str | None = None  # the weekly challenge, "mon 09:00" (bot.core.weekly.service)
    digest_at: str | None = None  # the weekly digest, same form
    bank_source: str = DEFAULT_BANK_SOURCE  # built-in banks, the community's, or both

    def fire_time_on(self, day: date) -> datetime:
        hour, minute = map(int, self.time_of_day.split(":"))
        return datetime.combine(day, time(hour, minute), tzinfo=ZoneInfo(self.timezone)).astimezone(
            ZoneInfo("UTC")
        )

    def last_fire_at_or_before(self, now: datetime) -> datetime | None:
        local_today = now.astimezone(ZoneInfo(self.timezone)).date()
        for back in range(8):
            day = local_today - timedelta(days=back)
            if WEEKDAYS[day.weekday()] in self.weekdays and self.fire_time_on(day) <= now:
                return self.fire_time_on(day)
        return None

    def next_fire_after(self, now: datetime) -> datetime | None:
        local_today = now.astimezone(ZoneInfo(self.timezone)).date()
        for ahead in range(9):
            day = local_today + timedelta(days=ahead)
            if WEEKDAYS[day.weekday()] in self.weekdays and self.fire_time_on(day) > now:
                return self.fire_time_on(day)
        return None

    def reveal_at(self, posted_at: datetime) -> datetime:
        """At the next post or after the reveal delay, whichever is sooner."""
        delay = posted_at + self.reveal_after
        nxt = self.next_fire_after(posted_at)
        return min(delay, nxt) if nxt else delay


def view_of(row: Any) -> ScheduleView:
    """A schedule row (bot.storage.schedules) as the core reads it."""
    return ScheduleView(
        channel_pk=row.channel_pk,
        where=Where(row.platform, row.external_id, row.channel_id, row.name),
        time_of_day=row.time_of_day,
        timezone=row.timezone,
        weekdays=row.weekdays.split(","),
        topic=row.topic,
        reveal_after=timedelta(minutes=row.reveal_after_minutes),
        paused=bool(row.paused),
        challenge_at=row.challenge_at,
        digest_at=row.digest_at,
        bank_source=row.bank_source or DEFAULT_BANK_SOURCE,
    )


@dataclass(frozen=True)
class Due:
    """A daily post whose fire time has come and that has no claim yet."""

    view: ScheduleView
    fire_time: datetime

    @property
    def local_date(self) -> date:
        return self.fire_time.astimezone(ZoneInfo(self.view.timezone)).date()


def describe(view: ScheduleView, now: datetime) -> str:
    days = ",".join(view.weekdays)
    topic = TOPICS[view.topic] if view.topic else "all topics"
    state = "⏸ paused" if view.paused else "▶ active"
    banks = "" if view.bank_source == DEFAULT_BANK_SOURCE else f"{SOURCE_LABELS[view.bank_source]} · "
    text = (
        f"{state} · {view.time_of_day} {view.timezone} on {days} · {topic} · {banks}"
        f"reveal after {int(view.reveal_after.total_seconds() // 3600)} h or at the next post"
    )
    nxt = view.next_fire_after(now)
    if nxt and not view.paused:
        local = nxt.astimezone(ZoneInfo(view.timezone))
        text += f"\nNext question: {local:%a %d %b %H:%M} {local.tzname()}"
    if view.challenge_at:
        day, hhmm = view.challenge_at.split()
        text += f"\nWeekly challenge: {day} {hhmm} {view.timezone}"
    if view.digest_at:
        day, hhmm = view.digest_at.split()
        text += f"\nWeekly digest: {day} {hhmm} {view.timezone}"
    return text


def adhoc_view(channel_pk: int, where: Where) -> ScheduleView:
    """How /daily now and recovery treat a channel without a schedule: UTC, all topics."""
    return ScheduleView(channel_pk, where, "09:00", "UTC", list(WEEKDAYS), None, DEFAULT_REVEAL, False)
