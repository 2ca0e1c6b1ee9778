"""The quality report: questions and picks in, rows and a markdown document out.

Markdown because maintainers read it on GitHub or in an editor and it diffs well between
exports; one table per bank, flagged questions first, then a legend of the columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bot.core.content.bank import Kind, Question
from bot.core.learning.irt import ItemEstimate, fit
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.learning.quality import (
    QualityRules,
    QuestionQuality,
    QuestionStats,
    assess,
    assess_stats,
)


def items_of(questions: Iterable[Question]) -> list[ItemInfo]:
    """The multiple-choice questions, the only ones whose picks say right or wrong."""
    return [ItemInfo(q.id, q.topic, q.difficulty, len(q.choices), q.answer_index, q.bank)
            for q in questions if q.kind is Kind.MCQ]


def quality_rows(questions: Iterable[Question], picks: Sequence[Pick],
                 rules: QualityRules | None = None) -> list[QuestionQuality]:
    """Fit every pick of these questions jointly, then assess each question; flagged first
    (the simulation's path)."""
    items = items_of(questions)
    known = {item.question for item in items}
    picks = [p for p in picks if p.question in known]
    return _ordered(assess(items, picks, fit(picks), rules))


def stored_quality_rows(items: Sequence[ItemInfo], stats: Mapping[str, QuestionStats],
                        estimates: Mapping[str, ItemEstimate],
                        rules: QualityRules | None = None) -> list[QuestionQuality]:
    """The rows from aggregated picks and stored estimates (/bank quality, the export): no fit."""
    return _ordered(assess_stats(items, stats, estimates, rules))


def _ordered(rows: list[QuestionQuality]) -> list[QuestionQuality]:
    return sorted(rows, key=lambda row: (row.bank, not row.flags, -row.answers, row.question))


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def _picks_cell(row: QuestionQuality) -> str:
    if not row.answers:
        return "-"
    return " ".join(f"{_letter(k)}{'*' if k == row.key else ''} {rate:.0%}"
                    for k, rate in enumerate(row.pick_rates))


def _calibrated_cell(row: QuestionQuality) -> str:
    if row.calibrated is None:
        return "-"
    return f"{row.calibrated:+.2f} (≈{row.calibrated_level})"


def _discrimination_cell(row: QuestionQuality) -> str:
    r = "-" if row.discrimination is None else f"r {row.discrimination:+.2f}"
    return r if row.slope is None else f"{r}, a {row.slope:.2f}"


def _seconds(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f} s"


HEADER = ("| question | topic | answers | right | discrimination | picks (* key) | median time "
          "| label | calibrated | flags |")
LEGEND = """\
Columns: *right* is the share of answers that picked the key; *discrimination* is the
point-biserial correlation between being right and the member's fitted ability in the topic
(r), and the 2PL slope (a) once a question has enough answers; *calibrated* is the fitted
difficulty in logits (0 = an average member has even odds) with the label it is nearest to.
Flags need at least 30 answers to a question."""


def _cell(text: str) -> str:
    """Member text inside a table cell: one line, no column breaks."""
    return " ".join(text.split()).replace("|", "\\|")


def reports_section(reports: Mapping[str, tuple[str, Sequence[str]]]) -> list[str]:
    """Questions members flagged with 🚩: question -> (the reasons counted, their notes)."""
    if not reports:
        return []
    lines = ["## Reported by members (🚩)", "", "| question | reports | notes |", "|---|---|---|"]
    for question in sorted(reports):
        reasons, notes = reports[question]
        lines.append(f"| `{question}` | {reasons} | {' · '.join(_cell(n) for n in notes) or '-'} |")
    return [*lines, ""]


def render_markdown(rows: Sequence[QuestionQuality], titles: dict[str, str], total_picks: int,
                    reports: Mapping[str, tuple[str, Sequence[str]]] | None = None) -> str:
    flagged = sum(1 for row in rows if row.flags)
    reported = f", {len(reports)} reported by members" if reports else ""
    lines = ["# Question quality", "",
             f"{len(rows)} multiple-choice questions, {total_picks:,} answers, {flagged} flagged{reported}.", "",
             *reports_section(reports or {})]
    for bank in dict.fromkeys(row.bank for row in rows):
        lines += [f"## {titles.get(bank, bank)} (`{bank}`)", "", HEADER, "|" + "---|" * 10]
        for row in (r for r in rows if r.bank == bank):
            flags = "; ".join([*row.flags, *row.notes]) if row.flags else ""
            lines.append(
                f"| `{row.question}` | {row.topic} | {row.answers} | "
                f"{f'{row.share_right:.0%}' if row.answers else '-'} | {_discrimination_cell(row)} | "
                f"{_picks_cell(row)} | {_seconds(row.median_ms)} | {row.labelled} | "
                f"{_calibrated_cell(row)} | {flags} |")
        lines.append("")
    return "\n".join([*lines, LEGEND, ""])
