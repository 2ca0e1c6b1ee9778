"""The neutral message model every reply is rendered into; each adapter translates it.

Text uses one small markup that both platforms can express: ``**bold**``, ``_italic_``,
`` `code` `` and plain newlines. Adapters convert it (e.g. Slack mrkdwn uses ``*bold*``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ButtonStyle(StrEnum):
    PRIMARY = "primary"
    SECONDARY = "secondary"
    SUCCESS = "success"
    DANGER = "danger"


@dataclass(frozen=True)
class Button:
    """A button whose ``action_id`` is an opaque, self-describing string (see core.actions)."""

    action_id: str
    label: str
    style: ButtonStyle = ButtonStyle.SECONDARY
    disabled: bool = False


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class CodeBlock:
    code: str
    language: str = "python"


Block = TextBlock | CodeBlock


@dataclass(frozen=True)
class Attachment:
    """A file sent with the message, e.g. the full output of a /run job."""

    filename: str
    content: bytes
    description: str | None = None  # the text alternative (alt text) of an image
    inline: bool = False  # an image shown in the message itself, e.g. a chart


@dataclass(frozen=True)
class Upload:
    """A file a member attached to a command (Discord attachment, Slack file, console path)."""

    filename: str
    data: bytes


@dataclass
class Message:
    title: str | None = None
    blocks: list[Block] = field(default_factory=list)
    buttons: list[Button] = field(default_factory=list)
    footer: str | None = None
    ephemeral: bool = False
    image_url: str | None = None
    attachments: list[Attachment] = field(default_factory=list)
    mention: str | None = None  # a user id the platform notifies (rendered by each adapter)

    def text(self, body: str) -> Message:
        self.blocks.append(TextBlock(body))
        return self

    def code(self, code: str, language: str = "python") -> Message:
        self.blocks.append(CodeBlock(code, language))
        return self

    def plain(self) -> str:
        """Everything as one plain string: notifications, logs-free summaries and tests."""
        parts = [f"**{self.title}**"] if self.title else []
        for block in self.blocks:
            if isinstance(block, CodeBlock):
                parts.append(f"```{block.language}\n{block.code.rstrip()}\n```")
            else:
                parts.append(block.text)
        if self.buttons:
            parts.append(" ".join(f"[{b.label}]" for b in self.buttons))
        if self.footer:
            parts.append(f"_{self.footer}_")
        return "\n".join(parts)


def truncate(text: str, limit: int, note: str = "… (truncated)") -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` characters, marking the cut; returns (text, was_cut)."""
    if len(text) <= limit:
        return text, False
    keep = max(0, limit - len(note) - 1)
    return text[:keep].rstrip() + "\n" + note, True
