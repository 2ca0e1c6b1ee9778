"""Short private notices: one line a member reads, and the counts in them."""

from __future__ import annotations

from bot.core.domain.messages import Message


def counted(n: int, noun: str) -> str:
    """`1 hint`, `2 hints`: members read counts, not `hint(s)`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def notice(text: str) -> Message:
    return Message(ephemeral=True).text(text)


def closed_message() -> Message:
    """A click that came too late and had not answered before (otherwise: already_answered)."""
    return notice("This question is closed; answers are no longer accepted.")
