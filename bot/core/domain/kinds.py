"""What a post is: one enum instead of magic strings (stored as its value, so old rows read)."""

from __future__ import annotations

from enum import StrEnum


class PostKind(StrEnum):
    DAILY = "daily"  # the channel's daily question (streaks, exactly-once claims)
    ROUND = "round"  # a live round's question (speed bonus, picks hidden until the reveal)
    NOW = "now"  # an extra channel question (/daily now after today's was posted)
    QUIZ = "quiz"  # a personal quiz question: never on a board
    REVIEW = "review"  # a spaced-repetition card: never on a board


# Posted in a channel for everyone; these score on the boards once revealed.
CHANNEL_KINDS = frozenset({PostKind.DAILY, PostKind.ROUND, PostKind.NOW})
