"""Message → terminal text: markup spans, button keys and compact updates."""

from __future__ import annotations

import io

from rich.console import Console

from bot.adapters.console.render import (
    button_word,
    compact_update,
    keys_for,
    render_message,
    styled,
)
from bot.core.domain.actions import Action, Verb
from bot.core.domain.messages import Attachment, Button, Message


def plain(renderable: object, width: int = 100) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, force_terminal=False).print(renderable)
    return out.getvalue()


def style_at(text: object, index: int) -> str:
    return " ".join(str(span.style) for span in text.spans if span.start <= index < span.end)


def test_core_markup_becomes_styles_and_brackets_stay_text() -> None:
    text = styled("Use **x[0]** with `t[:, None]` and _care_ [bold]not markup[/bold]")
    assert text.plain == "Use x[0] with t[:, None] and care [bold]not markup[/bold]"
    assert "bold" in style_at(text, text.plain.index("x[0]"))
    assert "cyan" in style_at(text, text.plain.index("t[:"))
    assert "italic" in style_at(text, text.plain.index("care"))
    assert style_at(text, text.plain.index("not markup")) == ""


def test_underscores_inside_names_are_not_italic() -> None:
    text = styled("call zero_grad() then loss_fn")
    assert text.plain == "call zero_grad() then loss_fn"
    assert not text.spans


def test_bold_may_contain_code() -> None:
    text = styled("**Fix:** `model.eval()` and **use `no_grad`**")
    assert text.plain == "Fix: model.eval() and use no_grad"
    assert "cyan" in style_at(text, text.plain.index("no_grad"))


def test_buttons_get_words_and_numbers() -> None:
    pick = [Button(Action(Verb.PICK, 7, i).encode(), letter) for i, letter in enumerate("ABCD")]
    keys = keys_for(pick)
    assert [(k.word, k.number) for k in keys] == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
    assert keys[2].button.action_id == "td:a:7:2"
    nav = keys_for([Button("td:n:7:0", "Next question"), Button("td:x:7:0", "Stop")])
    assert [k.word for k in nav] == ["next", "stop"]


def test_disabled_and_ambiguous_buttons() -> None:
    keys = keys_for([Button("td:a:1:0", "Go"), Button("td:a:1:1", "Go on"),
                     Button("td:a:1:2", "Hidden", disabled=True), Button("td:a:1:3", "3")])
    assert [(k.word, k.number) for k in keys] == [("go", 1), ("", 2), ("", 3)]
    assert button_word("  Show answer ") == "show"


def test_a_question_renders_with_its_keys_and_code() -> None:
    msg = Message(title="Quiz 1/2 · Autograd", footer="0 answered")
    msg.text("What does `x.grad` hold?").text("**A.** one\n**B.** two").code("x = torch.ones(2)\nprint(x)")
    msg.buttons = [Button(f"td:a:3:{i}", letter) for i, letter in enumerate("AB")]
    shown = plain(render_message(msg, public=True))
    assert "Quiz 1/2 · Autograd" in shown and "What does x.grad hold?" in shown
    assert "A. one" in shown and "x = torch.ones(2)" in shown
    assert "Type a · b  (or 1-2)" in shown
    assert "0 answered" in shown
    labelled = plain(render_message(Message(buttons=[Button("td:s:3:0", "Show answer")]), public=False))
    assert "Type show = Show answer  (or 1)" in labelled


def test_thread_context_and_attachments_are_named() -> None:
    msg = Message(title="Finished").text("ok")
    msg.attachments = [Attachment("output.txt", b"x" * 10)]
    shown = plain(render_message(msg, public=True, context="↳ thread of: run by ana"))
    assert shown.index("↳ thread of: run by ana") < shown.index("Finished")
    assert "attached: output.txt" in shown


def test_compact_update_only_when_just_the_footer_changed() -> None:
    before = Message(title="Daily question", footer="0 answered").text("Q?")
    after = Message(title="Daily question", footer="1 answered").text("Q?")
    line = compact_update(before, after)
    assert line is not None and line.plain == "↻ Daily question — 1 answered"
    revealed = Message(title="Daily question · answer").text("Q?").text("✅ A")
    assert compact_update(before, revealed) is None
