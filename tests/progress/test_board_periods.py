"""Leaderboard period words, error text and boundaries members read (issue 21, periods.py survivors)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.domain.periods import Period, Scope, parse_enum, period_label, period_start


@pytest.mark.parametrize(
    ("typed", "period"),
    [("all-time", Period.ALL), ("alltime", Period.ALL), ("weekly", Period.WEEK), ("monthly", Period.MONTH),
     (" Week ", Period.WEEK), ("MONTH", Period.MONTH), ("all", Period.ALL)],
)
def test_period_words_members_type(typed: str, period: Period) -> None:
    assert parse_enum(Period, typed, Period.WEEK) is period


@pytest.mark.parametrize("typed", ["server", "guild", "team", " Workspace "])
def test_workspace_aliases(typed: str) -> None:
    assert parse_enum(Scope, typed, Scope.CHANNEL) is Scope.WORKSPACE


@pytest.mark.parametrize("typed", [None, ""])
def test_missing_value_takes_the_default(typed: str | None) -> None:
    assert parse_enum(Period, typed, Period.MONTH) is Period.MONTH


def test_unknown_period_message_names_the_choices() -> None:
    with pytest.raises(ValueError) as exc:
        parse_enum(Period, "Fortnight", Period.WEEK)
    assert str(exc.value) == "unknown period 'Fortnight'; choose one of: week, month, all"


def test_week_starts_monday_midnight_local() -> None:
    now = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)  # Friday in UTC, Thursday evening in New York
    assert period_start(Period.WEEK, now, "UTC") == datetime(2026, 11, 30, tzinfo=UTC)
    assert period_start(Period.WEEK, now, "America/New_York") == datetime(2026, 11, 30, 5, tzinfo=UTC)
    monday = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    assert period_start(Period.WEEK, monday, "UTC") == monday


def test_month_starts_on_the_first_local() -> None:
    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)  # still November in New York
    assert period_start(Period.MONTH, now, "UTC") == datetime(2026, 12, 1, tzinfo=UTC)
    assert period_start(Period.MONTH, now, "America/New_York") == datetime(2026, 11, 1, 4, tzinfo=UTC)
    assert period_start(Period.ALL, now, "UTC") is None


def test_period_labels() -> None:
    now = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
    assert period_label(Period.WEEK, now, "UTC") == "week 49, 2026"
    assert period_label(Period.MONTH, datetime(2026, 12, 1, 3, tzinfo=UTC), "America/New_York") == "November 2026"
    assert period_label(Period.ALL, now, "UTC") == "all time"
