"""What members read of the new content fields: the snippet with an executable question, the
picked distractor's why_not in private feedback, every why_not in the reveal thread, on the
neutral message and as each adapter (Discord, Slack, console) renders it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from bot.adapters.console.render import render_message as console_render
from bot.adapters.discord.render import render_message as discord_render
from bot.adapters.slack.blocks import render as slack_render
from bot.core.content.bank import Bank, Kind, Library, Question
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import CodeBlock, Message
from bot.core.render.answers import answer_feedback
from bot.core.render.questions import question_message
from bot.core.render.reveals import explanation_message
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

HERE = Where("discord", "g1", "c1", "one")
LETTERS = "ABCD"
SNIPPET = "import torch\nx = torch.zeros(2, 3)\nprint(x.view(-1).shape)"
WHY = {
    "`torch.Size([2, 3])`": "`view(-1)` flattens; the shape is no longer 2-D.",
    "`torch.Size([3, 2])`": "Nothing is transposed: -1 infers one dimension of 6.",
    "It raises a RuntimeError": "A fresh tensor is contiguous, so `view` works.",
}


def executable_question() -> Question:
    return Question.model_validate({
        "id": "exe-view", "bank": "display", "kind": "mcq", "topic": "tensors", "difficulty": 2,
        "prompt": "What does this print?",
        "choices": [{"text": "`torch.Size([6])`"},
                    *({"text": t, "why_not": w} for t, w in WHY.items())],
        "answer": "`torch.Size([6])`",
        "explanation": "`view(-1)` infers the single dimension: 2 * 3 = 6.",
        "check": "stdout",
        "code": [{"code": SNIPPET}],
    })


@pytest.fixture
def library() -> Library:
    """The drill's library: one executable MCQ (every channel question is this one)."""
    return Library(banks=[Bank(id="display", title="Display", path=Path("display.yaml"),
                               questions=[executable_question()])])


def codes(message: Message) -> list[str]:
    return [b.code for b in message.blocks if isinstance(b, CodeBlock)]


def test_object_choices_load_as_texts_with_their_why_not() -> None:
    q = executable_question()
    assert q.choices == ["`torch.Size([6])`", *WHY]
    assert q.why_not == WHY
    assert q.shown_snippet is q.code[0]


def test_plain_string_choices_still_load() -> None:
    q = Question.model_validate({
        "id": "plain", "kind": "mcq", "topic": "tensors", "difficulty": 1, "prompt": "Pick one?",
        "choices": ["a", "b"], "answer": "a", "explanation": "Because."})
    assert q.choices == ["a", "b"] and q.why_not == {} and q.shown_snippet is None


def test_question_message_shows_the_snippet_right_after_the_prompt() -> None:
    q = executable_question()
    msg = question_message(1, q, [3, 0, 1, 2], kind="daily")
    assert [type(b).__name__ for b in msg.blocks] == ["TextBlock", "CodeBlock", "TextBlock"]
    assert msg.blocks[0].text == "What does this print?"
    assert codes(msg) == [SNIPPET]
    assert msg.blocks[2].text.splitlines()[0] == "**A.** It raises a RuntimeError"


def test_which_line_questions_number_the_lines_they_name() -> None:
    q = Question.model_validate({
        "id": "which-line", "kind": "mcq", "topic": "tensors", "difficulty": 2,
        "prompt": "Which line raises?",
        "choices": [{"text": "Line 3: the `view` call"},
                    {"text": "Line 2", "why_not": "Transposing is a view and never raises."},
                    {"text": "It runs without an error", "why_not": "The strides cannot merge."}],
        "answer": "Line 3: the `view` call", "explanation": "Strides (1, 3) cannot flatten.",
        "check": "raises_at",
        "code": [{"code": "import torch\ny = torch.zeros(2, 3).t()\ny.view(-1)",
                  "setup": "# hidden"}]})
    msg = question_message(1, q, [0, 1, 2], kind="round")
    assert codes(msg) == ["1  import torch\n2  y = torch.zeros(2, 3).t()\n3  y.view(-1)"]
    assert msg.blocks[0].text == (
        "Which line raises? (The answer is the deepest line of the snippet in the traceback.)")


def test_a_conceptual_question_shows_no_code_with_the_prompt() -> None:
    q = Question.model_validate({
        "id": "concept", "kind": "mcq", "topic": "tensors", "difficulty": 1, "prompt": "Pick one?",
        "choices": ["a", "b"], "answer": "a", "explanation": "Because.",
        "code": [{"code": "print(1)"}]})
    msg = question_message(1, q, [0, 1], kind="quiz")
    assert codes(msg) == []
    assert codes(explanation_message(q)) == ["print(1)"]  # code comes with the answer


async def test_daily_shows_the_snippet_the_wrong_pick_gets_its_why_not_and_the_thread_lists_all(
    drill, publisher
) -> None:
    posted = await drill.ask(HERE, publisher, kind="daily")
    question_msg = publisher.posts[0][1]
    assert question_msg.blocks[0].text == "What does this print?"
    assert codes(question_msg) == [SNIPPET]
    async with drill.db.read() as s:
        order = order_of(await s.get(Post, posted.post_id))
    q = drill.library["exe-view"]
    wrong = next(pos for pos, orig in enumerate(order) if orig != q.answer_index)
    right = order.index(q.answer_index)
    picked = await drill.handle_action(Who("discord", "g1", "u1", "Ann"),
                                       Action(Verb.PICK, posted.post_id, wrong).encode())
    text = picked.reply.plain()
    assert f"**Why not {LETTERS[wrong]}:** {WHY[q.choices[order[wrong]]]}" in text
    good = await drill.handle_action(Who("discord", "g1", "u2", "Bob"),
                                     Action(Verb.PICK, posted.post_id, right).encode())
    assert "Why not" not in good.reply.plain()
    revealed = await drill.reveal_post(posted.post_id, HERE, publisher)
    assert codes(revealed) == [SNIPPET]
    thread = [m for _, m, parent in publisher.posts if parent]
    assert len(thread) == 1
    lines = thread[0].plain().splitlines()
    start = lines.index("**Why not the others:**")
    assert lines[start + 1:start + 4] == [f"• {c} — {w}" for c, w in WHY.items()]
    assert codes(thread[0]) == []  # the snippet was already shown with the question


async def test_quiz_question_shows_the_snippet(drill) -> None:
    msg = await drill.practice.quiz(Who("discord", "g1", "u1", "Ann"), topic=None, count=1,
                                    difficulty=None)
    assert codes(msg) == [SNIPPET]
    assert "What does this print?" in msg.plain()


def test_adapters_render_the_snippet_and_the_why_not() -> None:
    q = executable_question()
    question_msg = question_message(1, q, [0, 1, 2, 3], kind="daily")
    feedback = answer_feedback(q, [0, 1, 2, 3], 1, correct=False, points=0, reveal_now=False,
                               hide_result=False, closes="in 2 h")
    fence = f"```python\n{SNIPPET.rstrip()}\n```"

    embed = discord_render(question_msg).embeds[0].description
    assert embed.startswith(f"What does this print?\n\n{fence}\n\n**A.** `torch.Size([6])`")
    assert f"**Why not B:** {WHY['`torch.Size([2, 3])`']}" in discord_render(feedback).embeds[0].description

    blocks = slack_render(question_msg)["blocks"]
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert texts[0] == "What does this print?"
    assert texts[1] == f"```\n{SNIPPET}\n```"  # Slack code blocks carry no language
    assert texts[2].startswith("*A.* `torch.Size([6])`")
    slack_feedback = [b["text"]["text"] for b in slack_render(feedback)["blocks"] if b["type"] == "section"]
    assert "*Why not B:* `view(-1)` flattens; the shape is no longer 2-D." in slack_feedback

    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(console_render(question_msg, public=True))
    shown = out.getvalue()
    assert "print(x.view(-1).shape)" in shown
    assert shown.index("What does this print?") < shown.index("print(x.view(-1).shape)") < shown.index(
        "torch.Size([6])")


def test_feedback_hides_the_why_not_while_results_are_hidden() -> None:
    q = executable_question()
    hidden = answer_feedback(q, [0, 1, 2, 3], 1, correct=False, points=0, reveal_now=False,
                             hide_result=True, closes=None)
    assert "Why not" not in hidden.plain()
    assert q.kind is Kind.MCQ
