"""Neutral ``Message`` → Discord embed, button rows and files.

The core's markup (``**bold**``, ``_italic_``, `` `code` ``) is already Discord markdown, so
text passes through; only Discord's size limits need handling here. Code blocks hold
members' program output, so their content can never close our fence (Discord only knows
triple-backtick fences, so backtick runs are broken with a zero-width space) and terminal
escapes are shown as visible symbols instead of being passed on.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.adapters.discord.views import ActionButton
from bot.core.domain.messages import Button, ButtonStyle, CodeBlock, Message, truncate

log = logging.getLogger(__name__)

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FOOTER_LIMIT = 2048
BUTTONS_PER_ROW = 5
MAX_ROWS = 5
FULL_TEXT_FILE = "message.md"
EMBED_COLOUR = discord.Colour(0xEE4C2C)  # PyTorch orange

STYLES = {
    ButtonStyle.PRIMARY: discord.ButtonStyle.primary,
    ButtonStyle.SECONDARY: discord.ButtonStyle.secondary,
    ButtonStyle.SUCCESS: discord.ButtonStyle.success,
    ButtonStyle.DANGER: discord.ButtonStyle.danger,
}


@dataclass
class Rendered:
    embeds: list[discord.Embed]
    view: discord.ui.View | None
    files: list[discord.File] = field(default_factory=list)
    content: str | None = None  # a mention: embeds never notify anyone

    def send_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"embeds": self.embeds}
        if self.content:
            kwargs["content"] = self.content
        if self.view is not None:
            kwargs["view"] = self.view
        if self.files:
            kwargs["files"] = self.files
        return kwargs

    def edit_kwargs(self) -> dict[str, Any]:
        """Edits replace everything: no view means the old buttons disappear."""
        kwargs: dict[str, Any] = {"embeds": self.embeds, "view": self.view, "content": self.content}
        if self.files:
            kwargs["attachments"] = self.files
        return kwargs


ZERO_WIDTH_SPACE = "\u200b"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible_controls(text: str) -> str:
    """ESC and other control bytes as Unicode control pictures (␛), never as actions."""
    return _CONTROL.sub(lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())),
                        text)


def fenced_code(code: str, language: str = "") -> str:
    """A code block whose content cannot end it: no two backticks stay adjacent."""
    body = visible_controls(code.rstrip()).replace("`", "`" + ZERO_WIDTH_SPACE)
    body = body.removesuffix(ZERO_WIDTH_SPACE)
    if body.endswith("`"):
        body += ZERO_WIDTH_SPACE  # the closing fence must not join a trailing backtick
    return f"```{language}\n{body}\n```"


def body_text(message: Message) -> str:
    parts = []
    for block in message.blocks:
        if isinstance(block, CodeBlock):
            parts.append(fenced_code(block.code, block.language))
        else:
            parts.append(block.text)
    return "\n\n".join(parts)


def button_view(buttons: list[Button]) -> discord.ui.View | None:
    """Persistent (timeout=None) rows of at most five buttons; clicks route by custom_id."""
    if not buttons:
        return None
    limit = BUTTONS_PER_ROW * MAX_ROWS
    if len(buttons) > limit:
        log.warning("message has %d buttons; Discord shows at most %d", len(buttons), limit)
    view = discord.ui.View(timeout=None)
    for index, button in enumerate(buttons[:limit]):
        view.add_item(
            ActionButton(
                button.action_id,
                button.label,
                STYLES[button.style],
                disabled=button.disabled,
                row=index // BUTTONS_PER_ROW,
            )
        )
    return view


def render_message(message: Message) -> Rendered:
    description = body_text(message)
    files = [discord.File(io.BytesIO(a.content), filename=a.filename, description=a.description)
             for a in message.attachments]
    shown, cut = truncate(description, DESCRIPTION_LIMIT, "… (truncated; full text attached)")
    if cut:
        files.append(discord.File(io.BytesIO(message.plain().encode()), filename=FULL_TEXT_FILE))
    embed = discord.Embed(description=shown or None, colour=EMBED_COLOUR)
    if message.title:
        embed.title = truncate(message.title, TITLE_LIMIT, "…")[0]
    if message.footer:
        embed.set_footer(text=truncate(message.footer, FOOTER_LIMIT, "…")[0])
    inline = next((a for a in message.attachments if a.inline), None)
    if message.image_url:
        embed.set_image(url=message.image_url)
    elif inline is not None:  # a chart: shown in the embed, its alt text on the file
        embed.set_image(url=f"attachment://{inline.filename}")
    content = f"<@{message.mention}>" if message.mention and message.mention.isdigit() else None
    return Rendered([embed], button_view(message.buttons), files, content)
