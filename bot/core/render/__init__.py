"""Everything a member reads, rendered into the neutral message model.

No decisions are made here: the functions receive facts computed elsewhere in the core.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fsrs import Rating

from bot.core.content.bank import Check, Kind, Question
from bot.core.model.actions import Action, Verb
from bot.core.model.kinds import CHANNEL_KINDS, PostKind
from bot.core.model.messages import Block, Button, ButtonStyle, Message
from bot.core.model.topics import TOPICS

LETTERS = "ABCDEFGH"
# A flashcard's self-grade is an FSRS rating; its value travels in the button's action id.
GRADES = ((Rating.Again, "Again", ButtonStyle.DANGER), (Rating.Hard, "Hard", ButtonStyle.SECONDARY),
          (Rating.Good, "Good", ButtonStyle.PRIMARY), (Rating.Easy, "Easy", ButtonStyle.SUCCESS))
KIND_TITLES = {PostKind.DAILY: "Daily question", PostKind.ROUND: "Round", PostKind.QUIZ: "Quiz",
               PostKind.REVIEW: "Review", PostKind.NOW: "Question"}


def counted(n: int, noun: str) -> str:
    """`1 hint`, `2 hints`: members read counts, not `hint(s)`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def stars(difficulty: int) -> str:
    return "★" * difficulty + "☆" * (3 - difficulty)


def question_header(question: Question, kind: str, progress: str | None = None) -> str:
    title = KIND_TITLES.get(kind, "Question")
    if progress:
        title = f"{title} {progress}"
    return f"{title} · {TOPICS[question.topic]} · {stars(question.difficulty)}"


def shown_code(question: Question) -> str:
    """The snippet shown with the question; numbered when the choices name lines."""
    code = question.shown_snippet.code if question.shown_snippet else ""
    if question.check is not Check.RAISES_AT:
        return code
    lines = code.rstrip().splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(lines, 1))


def choice_lines(question: Question, order: Sequence[int]) -> str:
    return "\n".join(f"**{LETTERS[pos]}.** {question.choices[orig]}" for pos, orig in enumerate(order))


def question_message(
    post_id: int,
    question: Question,
    order: Sequence[int],
    *,
    kind: str,
    answered: int = 0,
    closes: str | None = None,
    progress: str | None = None,
    ephemeral: bool = False,
) -> Message:
    title, blocks, buttons = _question_parts(post_id, question, tuple(order), kind, progress)
    msg = Message(title=title, blocks=list(blocks), buttons=list(buttons), ephemeral=ephemeral)
    footer = []
    if kind in CHANNEL_KINDS:
        footer.append(f"{answered} answered")
    if closes:
        footer.append(f"answer revealed {closes}")
    msg.footer = " · ".join(footer) or None
    return msg


_PARTS_KEPT = 4096
_parts: dict[tuple[Any, ...], tuple[Question, tuple[str, tuple[Block, ...], tuple[Button, ...]]]] = {}


def _question_parts(
    post_id: int, question: Question, order: tuple[int, ...], kind: str, progress: str | None
) -> tuple[str, tuple[Block, ...], tuple[Button, ...]]:
    """Title, text and buttons of a posted question, built once per post: every click
    re-renders the public view only for its answer count."""
    key = (post_id, question.id, order, kind, progress)
    hit = _parts.get(key)
    if hit is not None and hit[0] is question:  # the same version of the question
        return hit[1]
    msg = Message(title=question_header(question, kind, progress))
    msg.text(question.prompt)
    if question.shown_snippet is not None:  # "what does this print?" needs the code to answer
        msg.code(shown_code(question))
    if question.kind is Kind.MCQ:
        msg.text(choice_lines(question, order))
        msg.buttons = [
            Button(Action(Verb.PICK, post_id, pos).encode(), LETTERS[pos], ButtonStyle.PRIMARY)
            for pos in range(len(order))
        ]
    else:
        msg.buttons = [Button(Action(Verb.SHOW, post_id).encode(), "Show answer", ButtonStyle.PRIMARY)]
    parts = (msg.title or "", tuple(msg.blocks), tuple(msg.buttons))
    if len(_parts) >= _PARTS_KEPT:
        _parts.clear()
    _parts[key] = (question, parts)
    return parts


def explanation_blocks(msg: Message, question: Question, *, with_code: bool = True) -> Message:
    msg.text(f"**Why:** {question.explanation}")
    if with_code:  # the snippet shown with the question is not repeated
        for snippet in [s for s in question.code if s is not question.shown_snippet][:2]:
            msg.code(snippet.code)
    return msg


def why_not_line(question: Question, order: Sequence[int], original_choice: int) -> str | None:
    """Why the picked distractor is wrong, labelled with the letter the member saw."""
    why = question.why_not.get(question.choices[original_choice])
    if why is None:
        return None
    pos = list(order).index(original_choice) if original_choice in order else original_choice
    return f"**Why not {LETTERS[pos]}:** {why}"


def why_not_list(question: Question) -> str | None:
    """Every distractor with its reason, for the reveal thread."""
    lines = [f"• {c} — {question.why_not[c]}" for c in question.choices if c in question.why_not]
    return "**Why not the others:**\n" + "\n".join(lines) if lines else None


def nav_buttons(post_id: int, has_next: bool) -> list[Button]:
    if not has_next:
        return []
    return [
        Button(Action(Verb.NEXT, post_id).encode(), "Next question", ButtonStyle.PRIMARY),
        Button(Action(Verb.STOP, post_id).encode(), "Stop", ButtonStyle.SECONDARY),
    ]


def picked_text(question: Question, order: Sequence[int], original_choice: int) -> str:
    pos = list(order).index(original_choice) if original_choice in order else original_choice
    return f"**{LETTERS[pos]}.** {question.choices[original_choice]}"


def answer_feedback(
    question: Question,
    order: Sequence[int],
    original_choice: int,
    *,
    correct: bool,
    points: int,
    reveal_now: bool,
    hide_result: bool,
    closes: str | None,
    streak: int | None = None,
) -> Message:
    msg = Message(ephemeral=True)
    mine = picked_text(question, order, original_choice)
    if hide_result:
        msg.text(f"Locked in: {mine}")
        msg.text("Results are shown when the question closes.")
        return msg
    if correct:
        msg.title = "✅ Correct!"
        msg.text(f"You picked {mine}" + (f" · +{points} points" if points else ""))
    else:
        msg.title = "❌ Not quite"
        msg.text(f"You picked {mine}")
        why_not = why_not_line(question, order, original_choice)
        if why_not:
            msg.text(why_not)
        if reveal_now:
            msg.text(f"The answer is {picked_text(question, order, question.answer_index)}")
    if streak:
        msg.text(f"🔥 Streak: {streak}")
    if reveal_now:
        explanation_blocks(msg, question)
    elif closes:
        msg.footer = f"The explanation comes with the reveal {closes}."
    return msg


def already_answered(question: Question, order: Sequence[int], choice: int, kind: Kind) -> Message:
    if kind is Kind.MCQ:
        return Message(ephemeral=True).text(
            f"You already answered this one: {picked_text(question, order, choice)}. Only your first answer counts."
        )
    grade = dict((g, label) for g, label, _ in GRADES).get(choice, str(choice))
    return Message(ephemeral=True).text(f"You already graded this card: **{grade}**.")


def flashcard_answer(post_id: int, question: Question) -> Message:
    msg = Message(title=question.prompt, ephemeral=True)
    msg.text(question.answer)
    for snippet in question.code[:3]:
        msg.code(snippet.code)
    msg.text(f"**Key point:** {question.explanation}")
    msg.text("How well did you know it?")
    msg.buttons = [Button(Action(Verb.GRADE, post_id, g).encode(), label, style) for g, label, style in GRADES]
    return msg


@dataclass
class RevealFacts:
    counts: list[int]  # by displayed position
    total: int
    correct: int
    fastest: tuple[str, int] | None  # (display name, ms)


def reveal_message(post_id: int, question: Question, order: Sequence[int], facts: RevealFacts,
                   *, kind: str) -> Message:
    msg = Message(title=question_header(question, kind) + " · answer")
    msg.text(question.prompt)
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


def closed_message() -> Message:
    """A click that came too late and had not answered before (otherwise: already_answered)."""
    return notice("This question is closed; answers are no longer accepted.")


def notice(text: str) -> Message:
    return Message(ephemeral=True).text(text)
