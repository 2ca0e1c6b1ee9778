"""🚩 report reasons and the note's limit, defined once: the /report command's choices
(bot.core.commands.catalogue), the 🚩 form and the reply texts (bot.core.learning.report_desk)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportReason:
    value: str  # stored, and typed in /report reason:…
    label: str  # what members read on a button or in a menu
    description: str
    aliases: tuple[str, ...] = ()


REPORT_REASONS: tuple[ReportReason, ...] = (
    ReportReason("wrong-key", "Wrong key", "the marked answer is wrong", ("wrong", "key")),
    ReportReason("ambiguous", "Ambiguous", "more than one answer fits"),
    ReportReason("outdated", "Outdated", "no longer true of current PyTorch"),
    ReportReason("typo", "Typo", "a typo or formatting slip"),
)
NOTE_MAX = 300  # characters of a report's note
