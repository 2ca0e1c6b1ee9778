"""What a member reads privately after answering: right or wrong and why, a flashcard's
answer with its grades, an answer already given."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.content.bank import Kind, Question
from bot.core.domain.actions import Action, Verb
from bot.core.domain.messages import Button, Message
from bot.core.domain.scoring import StreakLine
from bot.core.render.questions import GRADE_LABELS, GRADES, LETTERS
from bot.core.render.reveals import explanation_blocks


def why_not_line(question: Question, order: Sequence[int], original_choice: int) -> str | None:
    """Why the picked distractor is wrong, labelled with the letter the member saw."""
    why = question.why_not.get(question.choices[original_choice])
    if why is None:
        return None
    pos = list(order).index(original_choice) if original_choice in order else original_choice
    return f"**Why not {LETTERS[pos]}:** {why}"


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
    streak: StreakLine | None = None,
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
    if streak is not None:
        msg.text(streak.after_answer())
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
    grade = GRADE_LABELS.get(choice, str(choice))
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
