"""Mistakes a member can make (a bad topic, group name, timezone or button): each becomes a
private notice with the error's own message, never "something went wrong"."""

from __future__ import annotations

from bot.core.domain.actions import BadActionError
from bot.core.domain.identity import BadTimezoneError
from bot.core.domain.topics import UnknownTopicError
from bot.core.drill.selection import EmptyPoolError
from bot.core.progress.groups import GroupError
from bot.core.quizzes.sequence import QuizError

USER_ERRORS: tuple[type[Exception], ...] = (
    UnknownTopicError,
    EmptyPoolError,
    QuizError,
    GroupError,
    BadTimezoneError,
    BadActionError,
)
