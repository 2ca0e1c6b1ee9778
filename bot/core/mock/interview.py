"""A member's interview date (``/mock date 2027-01-15``): the countdown members read, the
suggested next mock, and the rule that brings reviews before the day. Pure: the desk passes
today and the stored date in.

Retention peaks on the day: every review card due after the eve of the interview is brought
to the eve (00:00 UTC the day before), so FSRS's long intervals never skip the interview; from
the eve on, cards are scheduled as usual (a review on the eve is the last before the day).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
HORIZON_DAYS = 730  # a date further out than this is a typo
WEEKLY_UNTIL_DAYS = 14  # more days left than this: a mock a week; fewer: every PACE_DAYS
PACE_DAYS = 3
CLEAR = "clear"

HOW = "Give the date as YYYY-MM-DD, e.g. `{date} 2027-01-15` (or `{date} clear`)."
SET = ("📅 Interview date set: {day}. Reviews due after it are brought to the day before, so "
       "what you know peaks on the day; /stats and your mock reports count down.")
CLEARED = "📅 Interview date cleared; reviews are scheduled as usual again."
NONE_SET = "You have no interview date set. " + HOW
PAST = "{day} is not in the future. " + HOW
TOO_FAR = "{day} is more than two years away. " + HOW


def parse_day(text: str) -> date | None:
    """``YYYY-MM-DD`` as a date (None: not one)."""
    text = text.strip()
    if not DATE.match(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def long_day(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b %Y}"


def countdown(today: date, day: date) -> str | None:
    """The line members read in /stats and the report (None once the day has passed)."""
    left = (day - today).days
    if left < 0:
        return None
    if left == 0:
        return f"📅 Your interview is today ({long_day(day)}). Good luck!"
    return f"📅 Interview in {left} day{'s' if left != 1 else ''} ({long_day(day)})."


def eve(day: date) -> datetime:
    """When cards due after the interview are brought to: 00:00 UTC the day before it."""
    return datetime.combine(day - timedelta(days=1), time(0), tzinfo=UTC)


def next_mock(today: date, day: date, last_mock: date | None) -> date | None:
    """The suggested day of the next mock: weekly while more than two weeks are left, then
    every three days, the last one no later than the eve (None: no day left before it)."""
    left = (day - today).days
    if left <= 0:
        return None
    gap = 7 if left > WEEKLY_UNTIL_DAYS else PACE_DAYS
    suggested = max(today, last_mock + timedelta(days=gap)) if last_mock else today
    return min(suggested, day - timedelta(days=1)) if left > 1 else today


def suggestion(today: date, day: date, last_mock: date | None, mock_command: str) -> str | None:
    when = next_mock(today, day, last_mock)
    if when is None:
        return None
    named = "today" if when == today else long_day(when)
    return f"suggested next mock: {named} (`{mock_command}`)"
