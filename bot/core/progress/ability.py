"""The labelled difficulty of every question: the prior of a question's stored difficulty
before answers or a refit move it (``bot.storage.estimates``)."""

from __future__ import annotations

from bot.core.content.bank import Library


def labels_of(library: Library) -> dict[str, int]:
    """Labelled difficulty of every question, community ones included."""
    return {q.id: q.difficulty for q in (*library.questions, *library.community.values())}
