"""Neutral ``Message`` → rich renderables for a terminal.

Question texts contain brackets (``x[0]``) that rich would read as markup, so text is never
parsed as rich markup: the core's small markup (``**bold**``, ``_italic_``, `` `code` ``) is
turned into styled spans directly. Code blocks hold members' program output: terminal
escape bytes in it are shown as visible symbols (␛), so output cannot drive the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from bot.core.domain.messages import Button, CodeBlock, Message

_SPAN = re.compile(
    r"(?P<code>`[^`\n]+`)|(?P<bold>\*\*(?:(?!\*\*).)+?\*\*)|(?P<italic>(?<![\w*])_[^_\n]+?_(?![\w]))",
    re.DOTALL,
)
CODE_THEME = "ansi_dark"  # uses the terminal's own palette: readable on dark and light themes


def styled(text: str, style: str = "") -> Text:
    """The core's markup as a rich Text (bold may contain `code`, code contains nothing)."""
    out = Text(style=style)
    pos = 0
    for match in _SPAN.finditer(text):
        out.append(text[pos : match.start()])
        token = match.group(0)
        if match.group("code"):
            out.append(token[1:-1], style="bold cyan")
        elif match.group("bold"):
            out.append_text(styled(token[2:-2], "bold"))
        else:
            out.append_text(styled(token[1:-1], "italic"))
        pos = match.end()
    out.append(text[pos:])
    return out


@dataclass(frozen=True)
class Key:
    """What to type for one button of the message on screen."""

    word: str  # e.g. "a", "show", "again"; "" when only the number works
    number: int
    button: Button


def button_word(label: str) -> str:
    """``"A"`` → ``"a"``, ``"Show answer"`` → ``"show"``, ``"Next question"`` → ``"next"``."""
    first = label.strip().split(" ")[0].lower() if label.strip() else ""
    return re.sub(r"[^a-z0-9]", "", first)


def keys_for(buttons: Sequence[Button]) -> list[Key]:
    """Number the enabled buttons 1..n and give each a word from its label when unambiguous."""
    keys: list[Key] = []
    taken: set[str] = set()
    for number, button in enumerate((b for b in buttons if not b.disabled), start=1):
        word = button_word(button.label)
        if not word or word in taken or word.isdigit():
            word = ""
        taken.add(word)
        keys.append(Key(word, number, button))
    return keys


def keys_line(keys: Sequence[Key]) -> Text:
    parts = []
    for key in keys:
        if not key.word:
            parts.append(f"{key.number} = {key.button.label}")
        elif key.word == key.button.label.lower():
            parts.append(key.word)
        else:
            parts.append(f"{key.word} = {key.button.label}")
    numbers = "1" if len(keys) == 1 else f"1-{len(keys)}"
    line = Text("Type ", style="bold")
    line.append(" · ".join(parts), style="bold green")
    line.append(f"  (or {numbers})", style="dim")
    return line


_CONTROL_BYTES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible_controls(text: str) -> str:
    return _CONTROL_BYTES.sub(
        lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), text)


def body(message: Message) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for block in message.blocks:
        if isinstance(block, CodeBlock):
            lexer = block.language if block.language not in ("", "text") else "text"
            parts.append(
                Syntax(visible_controls(block.code.rstrip("\n")), lexer, theme=CODE_THEME, word_wrap=True,
                       background_color="default")
            )
        else:
            parts.append(styled(block.text))
    return parts


def render_message(message: Message, *, public: bool, context: str | None = None) -> RenderableType:
    """Channel posts in a panel (as everyone would see them); private replies without one."""
    parts = body(message)
    keys = keys_for(message.buttons)
    if keys:
        parts.append(keys_line(keys))
    if message.footer:
        parts.append(styled(message.footer, "dim italic"))
    if message.attachments:
        names = ", ".join(a.filename for a in message.attachments)
        parts.append(Text(f"attached: {names}", style="dim"))
    if public:
        title = styled(message.title, "bold") if message.title else None
        panel = Panel(Group(*parts), title=title, title_align="left", border_style="bright_black")
        if context:
            return Group(Text(context, style="magenta"), panel)
        return panel
    head = [styled(message.title, "bold")] if message.title else []
    if context:
        head.insert(0, Text(context, style="magenta"))
    return Group(*head, *parts)


def compact_update(before: Message, after: Message) -> Text | None:
    """When only the footer changed (e.g. the answer count), one line says so."""
    if before.blocks != after.blocks or before.buttons != after.buttons or before.title != after.title:
        return None
    line = Text("↻ ", style="dim")
    line.append_text(styled(after.title or "message", "dim"))
    if after.footer:
        line.append(" — ", style="dim")
        line.append_text(styled(after.footer, "dim"))
    return line
