"""Slash-command text → arguments, and Slack message text → runnable code.

Slack hands a command's arguments over as one free-text string. Members may write them
positionally (``/quiz autograd 5``) or by name in either style the help shows
(``count=5``, ``time:09:00``); a malformed argument yields a message naming it, never a guess.
Validation of values (ranges, topics, timezones) stays in the core.
"""

from __future__ import annotations

import html
import re
import shlex
from dataclasses import dataclass, field

_NAMED = re.compile(r"^([a-z_]+)[:=](.*)$", re.DOTALL)
_FENCED = re.compile(r"```(.*?)```", re.DOTALL)
_LANG_LINE = re.compile(r"(?:python|py|python3|pycon|text|console|bash|sh)?\n", re.IGNORECASE)


class ArgError(ValueError):
    """A message for the member, e.g. ``count must be a whole number (got 'five')``."""


@dataclass
class Args:
    positional: list[str] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)


def split_args(text: str, names: set[str]) -> Args:
    """Words (quotes group words), where ``name=value`` / ``name:value`` for known names."""
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise ArgError(f"could not read the arguments ({exc}); check the quotes") from None
    args = Args()
    for word in words:
        match = _NAMED.match(word)
        if match and match.group(1).lower() in names:
            args.named[match.group(1).lower()] = match.group(2)
        else:
            args.positional.append(word)
    return args


def as_int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ArgError(f"{name} must be a whole number (got {value!r})") from None


def as_float(name: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ArgError(f"{name} must be a number (got {value!r})") from None


def numbers_and_words(
    args: Args, number_names: tuple[str, ...], word_name: str
) -> dict[str, str]:
    """Positional numbers fill ``number_names`` in order; one other word fills ``word_name``."""
    values = dict(args.named)
    numbers = [w for w in args.positional if w.lstrip("-").isdigit()]
    words = [w for w in args.positional if not w.lstrip("-").isdigit()]
    free = [n for n in number_names if n not in values]
    if len(numbers) > len(free):
        raise ArgError(f"too many numbers: {' '.join(numbers)} (expected {', '.join(number_names)})")
    values.update(zip(free, numbers, strict=False))
    if words:
        if word_name in values or len(words) > 1:
            raise ArgError(f"unexpected argument {' '.join(words)!r}")
        values[word_name] = words[0]
    return values


@dataclass(frozen=True)
class QuizArgs:
    topic: str | None
    count: int
    difficulty: int | None


def quiz_args(text: str) -> QuizArgs:
    """``/quiz [topic] [count] [difficulty]``."""
    values = numbers_and_words(
        split_args(text, {"topic", "count", "difficulty"}), ("count", "difficulty"), "topic"
    )
    difficulty = values.get("difficulty")
    return QuizArgs(
        values.get("topic"),
        as_int("count", values.get("count", "5")),
        as_int("difficulty", difficulty) if difficulty is not None else None,
    )


@dataclass(frozen=True)
class RoundArgs:
    count: int
    seconds: int
    topic: str | None


def round_args(text: str) -> RoundArgs:
    """``/round [count] [seconds] [topic]``."""
    values = numbers_and_words(
        split_args(text, {"topic", "count", "seconds"}), ("count", "seconds"), "topic"
    )
    return RoundArgs(
        as_int("count", values.get("count", "5")),
        as_int("seconds", values.get("seconds", "30")),
        values.get("topic"),
    )


def review_count(text: str) -> int:
    """``/review [count]``."""
    args = split_args(text, {"count"})
    if len(args.positional) > 1:
        raise ArgError(f"unexpected argument {' '.join(args.positional[1:])!r}")
    value = args.named.get("count") or (args.positional[0] if args.positional else "10")
    return as_int("count", value)


@dataclass(frozen=True)
class BoardArgs:
    scope: str | None
    period: str | None
    group: str | None


def leaderboard_args(text: str) -> BoardArgs:
    """``/leaderboard [scope] [period] [group name]``, positionally or by name."""
    args = split_args(text, {"scope", "period", "group"})
    rest = list(args.positional)
    values = dict(args.named)
    for name in ("scope", "period"):
        if name not in values and rest:
            values[name] = rest.pop(0)
    if rest:
        if "group" in values:
            raise ArgError(f"unexpected argument {' '.join(rest)!r}")
        values["group"] = " ".join(rest)
    return BoardArgs(values.get("scope"), values.get("period"), values.get("group"))


def group_args(text: str) -> tuple[str, str | None]:
    """``/group create|join|leave|list [name]``; the name may contain spaces."""
    words = (text or "").split(maxsplit=1)
    action = words[0] if words else "list"
    name = words[1].strip() if len(words) > 1 else None
    return action, name or None


DAILY_SUBCOMMANDS = ("schedule", "pause", "resume", "now", "status")


@dataclass(frozen=True)
class DailyArgs:
    sub: str
    time: str | None = None
    timezone: str = "UTC"
    weekdays: str | None = None
    topic: str | None = None
    reveal_after_hours: float | None = None


def daily_args(text: str) -> DailyArgs:
    """``/daily schedule 09:00 [timezone] [weekdays] [topic=…] [reveal=hours]`` or a verb."""
    names = {"time", "timezone", "tz", "weekdays", "days", "topic", "reveal", "reveal_after_hours"}
    args = split_args(text, names)
    if not args.positional or args.positional[0].lower() not in DAILY_SUBCOMMANDS:
        raise ArgError("use /daily schedule|pause|resume|now|status")
    sub, rest = args.positional[0].lower(), args.positional[1:]
    named = args.named
    if sub != "schedule":
        if rest or named:
            raise ArgError(f"/daily {sub} takes no arguments")
        return DailyArgs(sub)
    values = {
        "time": named.get("time"),
        "timezone": named.get("timezone") or named.get("tz"),
        "weekdays": named.get("weekdays") or named.get("days"),
    }
    for name in ("time", "timezone", "weekdays"):
        if values[name] is None and rest:
            values[name] = rest.pop(0)
    if rest:
        raise ArgError(f"unexpected argument {' '.join(rest)!r}")
    if not values["time"]:
        raise ArgError("/daily schedule needs a time, e.g. /daily schedule 09:00 Europe/Berlin mon-fri")
    reveal = named.get("reveal") or named.get("reveal_after_hours")
    return DailyArgs(
        "schedule",
        time=values["time"],
        timezone=values["timezone"] or "UTC",
        weekdays=values["weekdays"],
        topic=named.get("topic"),
        reveal_after_hours=as_float("reveal", reveal) if reveal is not None else None,
    )


def code_from_slack(text: str) -> str:
    """Slack escapes &, <, > in message text and writes ```code``` without a newline."""

    def fence(match: re.Match[str]) -> str:
        inner = match.group(1)
        if _LANG_LINE.match(inner):
            return match.group(0)
        return "```\n" + inner.strip("\n") + "\n```"

    return _FENCED.sub(fence, html.unescape(text or ""))
