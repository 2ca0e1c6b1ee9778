"""The buttons under a question that are not answers: 🚩 report, next and stop."""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb
from bot.core.domain.messages import Button, ButtonStyle

FLAG_LABEL = "🚩 Report"


def flag_button(post_id: int) -> Button:
    """The 🚩 under a revealed question and in private feedback (``bot.core.learning.report_desk``)."""
    return Button(Action(Verb.FLAG, post_id).encode(), FLAG_LABEL, ButtonStyle.SECONDARY)


def nav_buttons(post_id: int, has_next: bool) -> list[Button]:
    if not has_next:
        return []
    return [
        Button(Action(Verb.NEXT, post_id).encode(), "Next question", ButtonStyle.PRIMARY),
        Button(Action(Verb.STOP, post_id).encode(), "Stop", ButtonStyle.SECONDARY),
    ]
