"""/bank quality: the question-quality lab for admins, from chat.

A community bank is judged on its own community's answers; the built-in banks (``builtin``) on
every community's, as they are calibrated. Nothing is fitted here: the calibrated difficulties
(and 2PL slopes) are the stored estimates, the members' abilities those stored per topic, and
the per-question statistics one bounded aggregate the database computes (a few rows per
question and choice). The reply lists the flagged questions; the whole table comes as a
markdown attachment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.core.content.bank import Library, Question
from bot.core.content.community import load_question
from bot.core.domain.identity import Who
from bot.core.domain.messages import Attachment, Message
from bot.core.domain.topics import TOPICS
from bot.core.learning.irt import ItemEstimate
from bot.core.learning.picks import ItemInfo
from bot.core.learning.quality import QualityRules, QuestionQuality, QuestionStats
from bot.core.learning.report import items_of, render_markdown, stored_quality_rows
from bot.core.render.notices import counted, notice

BUILTIN = "builtin"
FLAGGED_SHOWN = 10


def _local(question_id: str) -> str:
    return question_id.split(".", 1)[1] if "." in question_id else question_id


def quality_message(label: str, file_stem: str, rows: Sequence[QuestionQuality], answers: int,
                    markdown: str) -> Message:
    """The reply: counts, the flagged questions (at most ``FLAGGED_SHOWN``), the table attached."""
    flagged = [row for row in rows if row.flags]
    msg = Message(title=f"Question quality: {label}", ephemeral=True)
    msg.text(f"{counted(len(rows), 'multiple-choice question')} · {counted(answers, 'answer')} · "
             f"{len(flagged)} flagged (flags need 30 answers to a question)")
    for row in flagged[:FLAGGED_SHOWN]:
        why = "; ".join(row.notes)
        msg.text(f"`{_local(row.question)}` · {', '.join(row.flags)} · {row.share_right:.0%} right of "
                 f"{row.answers}{f' · {why}' if why else ''}")
    if len(flagged) > FLAGGED_SHOWN:
        msg.text(f"… and {len(flagged) - FLAGGED_SHOWN} more in the attached table")
    if not flagged:
        msg.text("No question is flagged.")
    msg.text(f"Every question's share right, discrimination, pick rates and calibrated difficulty: "
             f"{file_stem}.md")
    msg.attachments.append(Attachment(f"{file_stem}.md", markdown.encode("utf-8")))
    return msg


@dataclass(frozen=True)
class CommunityPool:
    """One community bank as the lab reads it: its live questions' stored data."""

    workspace_id: int
    slug: str
    title: str
    questions: list[str]  # each question as stored (load_question reads it)


class QualityData(Protocol):
    """What the lab needs from storage (bot/storage/learning_picks.py implements it)."""

    async def community_bank(self, who: Who, slug: str) -> CommunityPool | None: ...

    async def stats(self, items: Sequence[ItemInfo], workspace_id: int | None,
                    groups: int) -> dict[str, QuestionStats]:
        """Each answered question's sums (``read_question_stats``)."""
        ...

    async def estimates(self, items: Sequence[ItemInfo], workspace_id: int | None) -> dict[str, ItemEstimate]:
        """The stored difficulty (and slope) of each question in its scope."""
        ...


class QualityDesk:
    def __init__(self, data: QualityData, library: Library) -> None:
        self.data, self.library = data, library

    async def report(self, who: Who, bank: str | None, topic: str | None) -> Message:
        slug = (bank or BUILTIN).strip().lower()
        if slug == BUILTIN:
            questions: list[Question] = self.library.questions
            titles = {b.id: b.title for b in self.library.banks}
            workspace_id = None
            label = "built-in banks"
        else:
            pool = await self.data.community_bank(who, slug)
            if pool is None:
                return notice(f"There is no community bank {slug!r} here; /bank list shows "
                              f"them, and {BUILTIN} means the built-in banks.")
            questions = [load_question(d).model_copy(update={"bank": pool.slug}) for d in pool.questions]
            titles, workspace_id, label = {pool.slug: pool.title}, pool.workspace_id, pool.slug
        if topic:
            questions = [q for q in questions if q.topic == topic]
            label += f" · {TOPICS.get(topic, topic)}"
        items = items_of(questions)
        rules = QualityRules()
        stats = await self.data.stats(items, workspace_id, rules.groups)
        estimates = await self.data.estimates(items, workspace_id)
        rows = stored_quality_rows(items, stats, estimates, rules)
        answers = sum(s.answers for s in stats.values())
        stem = f"quality-{slug}" + (f"-{topic}" if topic else "")
        return quality_message(label, stem, rows, answers, render_markdown(rows, titles, answers))
