"""Mistakes a member can make (a bad topic, group name, timezone or button): each becomes a
private notice with the error's own message, never "something went wrong"."""

from __future__ import annotations

from bot.core.model.actions import BadActionError
from bot.core.model.identity import BadTimezoneError
from bot.core.model.topics import UnknownTopicError
from bot.core.play.quizzes import QuizError
from bot.core.play.selection import EmptyPoolError
from bot.core.progress.groups import GroupError

USER_ERRORS: tuple[type[Exception], ...] = (
    UnknownTopicError,
    EmptyPoolError,
    QuizError,
    GroupError,
    BadTimezoneError,
    BadActionError,
)
