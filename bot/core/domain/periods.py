"""Leaderboard periods in a channel's own timezone (a week is the local ISO week)."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import TypeVar
from zoneinfo import ZoneInfo


class Period(StrEnum):
    WEEK = "week"
    MONTH = "month"
    ALL = "all"


class Scope(StrEnum):
    CHANNEL = "channel"
    WORKSPACE = "workspace"
    GROUP = "group"


E = TypeVar("E", bound=StrEnum)


def parse_enum(enum: type[E], value: str | None, default: E) -> E:
    if not value:
        return default
    aliases = {"all-time": "all", "alltime": "all", "server": "workspace", "guild": "workspace",
               "team": "workspace", "weekly": "week", "monthly": "month"}
    wanted = aliases.get(value.strip().lower(), value.strip().lower())
    try:
        return enum(wanted)
    except ValueError as exc:
        options = ", ".join(e.value for e in enum)
        raise ValueError(f"unknown {enum.__name__.lower()} {value!r}; choose one of: {options}") from exc


def period_start(period: Period, now: datetime, tz: str) -> datetime | None:
    """UTC instant at which the current period began in ``tz``; None for all time."""
    if period is Period.ALL:
        return None
    zone = ZoneInfo(tz)
    local = now.astimezone(zone)
    if period is Period.WEEK:
        first_day = local.date() - timedelta(days=local.isoweekday() - 1)
    else:
        first_day = local.date().replace(day=1)
    return datetime.combine(first_day, time(0), tzinfo=zone).astimezone(ZoneInfo("UTC"))


def period_label(period: Period, now: datetime, tz: str) -> str:
    local = now.astimezone(ZoneInfo(tz))
    if period is Period.WEEK:
        year, week, _ = local.isocalendar()
        return f"week {week}, {year}"
    if period is Period.MONTH:
        return f"{local:%B %Y}"
    return "all time"
