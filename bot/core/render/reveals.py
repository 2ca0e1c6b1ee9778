"""The reveal: the answer with each choice's share, and the explanation in its thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.content.bank import Question
from bot.core.domain.messages import Message
from bot.core.render.buttons import flag_button
from bot.core.render.questions import LETTERS, question_header, shown_code


def explanation_blocks(msg: Message, question: Question, *, with_code: bool = True) -> Message:
    msg.text(f"**Why:** {question.explanation}")
    if with_code:  # the snippet shown with the question is not repeated
        for snippet in [s for s in question.code if s is not question.shown_snippet][:2]:
            msg.code(snippet.code)
    return msg


def why_not_list(question: Question) -> str | None:
    """Every distractor with its reason, for the reveal thread."""
    lines = [f"• {c} — {question.why_not[c]}" for c in question.choices if c in question.why_not]
    return "**Why not the others:**\n" + "\n".join(lines) if lines else None

@dataclass
class RevealFacts:
    counts: list[int]  # by displayed position
    total: int
    correct: int
    fastest: tuple[str, int] | None  # (display name, ms)


def reveal_message(post_id: int, question: Question, order: Sequence[int], facts: RevealFacts,
                   *, kind: str) -> Message:
    msg = Message(title=question_header(question, kind) + " · answer")
    msg.text(question.shown_prompt)
    if question.shown_snippet is not None:
        msg.code(shown_code(question))
    lines = []
    for pos, orig in enumerate(order):
        mark = "✅" if orig == question.answer_index else "▫️"
        share = f"{facts.counts[pos]} ({_pct(facts.counts[pos], facts.total)})"
        lines.append(f"{mark} **{LETTERS[pos]}.** {question.choices[orig]} — {share}")
    msg.text("\n".join(lines))
    summary = f"{facts.total} answered · {_pct(facts.correct, facts.total)} correct"
    if facts.fastest:
        summary += f" · fastest correct: {facts.fastest[0]} ({facts.fastest[1] / 1000:.1f} s)"
    msg.text(summary)
    msg.buttons = [flag_button(post_id)]
    return msg


def explanation_message(question: Question, related: Sequence[Question] = ()) -> Message:
    """Posted in the question's thread at the reveal; ``related`` are the questions to go deeper."""
    msg = Message(title="Explanation")
    explanation_blocks(msg, question)
    others = why_not_list(question)
    if others:
        msg.text(others)
    if related:
        msg.text("**Go deeper** (in /quiz and /review):\n" + "\n".join(f"• {q.prompt}" for q in related[:3]))
    return msg


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "0%"
