"""Operational failures in one line: what could not be reached, where, and why.

A missing database, a closed port, a wrong password, an unreachable Discord or Slack API or a
missing Redis is a set-up problem, not a bug: the operator needs the one line that names it,
not 400 lines of traceback (those stay available at DEBUG). The culprit is found from the
modules the exception passed through, so no stage of start-up has to wrap its own calls.
"""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url

from bot.observability.logs import redact

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger("torchdrill.failure")

# module prefix seen in the traceback -> what failed
_CULPRITS = (
    (("sqlalchemy", "asyncpg", "aiosqlite", "sqlite3", "bot.storage"), "database"),
    (("discord",), "discord"),
    (("slack_sdk", "slack_bolt"), "slack"),
    (("redis", "runner.redis_queue"), "redis"),
)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _modules(tb: TracebackType | None) -> list[str]:
    names = []
    while tb is not None:
        names.append(str(tb.tb_frame.f_globals.get("__name__", "")))
        tb = tb.tb_next
    return names


def culprit(exc: BaseException) -> str | None:
    """database, discord, slack or redis: the deepest of them the failure came through."""
    for e in _chain(exc):
        if type(e).__module__.split(".")[0] in ("asyncpg", "sqlite3"):
            return "database"
    for e in _chain(exc):
        for module in reversed(_modules(e.__traceback__)):
            for prefixes, name in _CULPRITS:
                if module.startswith(prefixes):
                    return name
    return None


def _reason(exc: BaseException) -> str:
    """The innermost message, which names the cause (refused, password, no such database)."""
    for e in reversed(_chain(exc)):
        text = str(e).strip()
        if text:
            text = text.splitlines()[0]
            if text.startswith("(") and ") " in text:  # "(sqlalchemy.dialects...Error) <msg>"
                text = text.split(") ", 1)[1]
            return redact(text)
    return type(exc).__name__


def _safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return redact(url)


def describe(exc: BaseException, settings: Settings) -> str | None:
    """One line for an operational failure, or None when it looks like a bug."""
    what = culprit(exc)
    reason = _reason(exc)
    if what == "database":
        return f"cannot use the database at {_safe_url(settings.database_url)}: {reason}"
    if what == "discord":
        import discord

        if any(isinstance(e, discord.LoginFailure) for e in _chain(exc)):
            return f"Discord refused DISCORD_TOKEN: {reason}"
        return f"cannot reach the Discord API at {settings.discord_api_base_url}: {reason}"
    if what == "slack":
        from slack_sdk.errors import SlackApiError

        refused = next((e for e in _chain(exc) if isinstance(e, SlackApiError)), None)
        if refused is not None:
            return f"Slack refused SLACK_BOT_TOKEN: {refused.response.get('error', reason)}"
        return f"cannot reach the Slack API at {settings.slack_api_base_url}: {reason}"
    if what == "redis":
        return f"cannot reach Redis at {_safe_url(settings.redis_url)}: {reason}"
    return None


def report(exc: BaseException, settings: Settings, *, json: bool) -> bool:
    """Say an operational failure in one line (a JSON record when logs are JSON); the
    traceback only at DEBUG. False when ``exc`` is not one (the caller re-raises)."""
    line = describe(exc, settings)
    if line is None:
        return False
    debug = str(settings.log_level).upper() == "DEBUG"
    if json:
        log.error(line, exc_info=exc if debug else None)
    else:
        print(line, file=sys.stderr)
        if debug:
            traceback.print_exception(exc, file=sys.stderr)
    return True
