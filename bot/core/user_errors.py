"""Mistakes a member can make (a bad topic, group name, timezone or button): each becomes a
private notice with the error's own message, never "something went wrong"."""

from __future__ import annotations

from bot.core.actions import BadActionError
from bot.core.groups import GroupError
from bot.core.identity import BadTimezoneError
from bot.core.quizzes import QuizError
from bot.core.selection import EmptyPoolError
from bot.core.topics import UnknownTopicError

USER_ERRORS: tuple[type[Exception], ...] = (
    UnknownTopicError,
    EmptyPoolError,
    QuizError,
    GroupError,
    BadTimezoneError,
    BadActionError,
)
