"""A question as posted: header, prompt, code, choices and the buttons to answer it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsrs import Rating

from bot.core.content.bank import Check, Kind, Question
from bot.core.domain.actions import Action, Verb
from bot.core.domain.kinds import CHANNEL_KINDS, PostKind
from bot.core.domain.messages import Block, Button, ButtonStyle, Message
from bot.core.domain.topics import TOPICS

LETTERS = "ABCDEFGH"
# A flashcard's self-grade is an FSRS rating; its value travels in the button's action id.
GRADES = ((Rating.Again, "Again", ButtonStyle.DANGER), (Rating.Hard, "Hard", ButtonStyle.SECONDARY),
          (Rating.Good, "Good", ButtonStyle.PRIMARY), (Rating.Easy, "Easy", ButtonStyle.SUCCESS))
GRADE_LABELS: dict[int, str] = {grade: label for grade, label, _ in GRADES}
KIND_TITLES: dict[str, str] = {PostKind.DAILY: "Daily question", PostKind.ROUND: "Round", PostKind.QUIZ: "Quiz",
               PostKind.REVIEW: "Review", PostKind.NOW: "Question"}


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
    msg.text(question.shown_prompt)
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
