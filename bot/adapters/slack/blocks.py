"""Neutral ``Message`` → Slack Block Kit (``text`` fallback + ``blocks``).

Slack's mrkdwn differs from the core's markup only in bold (``*x*`` instead of ``**x**``) and
needs ``&``, ``<``, ``>`` escaped. Code sections hold members' program output: there every
``&``, ``<``, ``>`` is escaped (``<!channel>`` shows as text), backtick runs are broken so the
output cannot close the fence, and terminal escapes are shown as visible symbols. Block Kit limits are enforced here, so no core message can
be rejected by Slack for its size: long text is split into several sections, and a message
that would exceed 50 blocks is cut with a visible note.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from bot.core.domain.messages import Button, ButtonStyle, CodeBlock, Message, truncate

log = logging.getLogger(__name__)

SECTION_LIMIT = 3000
HEADER_LIMIT = 150
BUTTON_LABEL_LIMIT = 75
CONTEXT_LIMIT = 2000
FALLBACK_LIMIT = 3000
MAX_BLOCKS = 50
BUTTONS_PER_ACTIONS = 5
CUT_NOTE = "_… (message shortened to fit Slack)_"

_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
# Slack control sequences (mentions, channel links, special mentions, links) stay unescaped.
_CONTROL = re.compile(r"(<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^>]*)?|![a-z]+|https?://[^>\s]+)>)")
STYLES = {ButtonStyle.PRIMARY: "primary", ButtonStyle.SUCCESS: "primary",
          ButtonStyle.DANGER: "danger"}


def escape(text: str) -> str:
    """Escape &, <, > as Slack requires, keeping mentions and links working."""
    parts = _CONTROL.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join(parts)


ZERO_WIDTH_SPACE = "\u200b"
_CONTROL_BYTES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def escape_code(code: str) -> str:
    """Program output as inert text inside a ``` section: no mention, link, fence or ANSI."""
    text = _CONTROL_BYTES.sub(
        lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), code)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("`", "`" + ZERO_WIDTH_SPACE).removesuffix(ZERO_WIDTH_SPACE)
    return text + ZERO_WIDTH_SPACE if text.endswith("`") else text


def mrkdwn(text: str) -> str:
    """Core markup → Slack mrkdwn; code spans are left exactly as written (only escaped)."""
    parts = _CODE_SPAN.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _BOLD.sub(r"*\1*", parts[i])
    return escape("".join(parts))


def _split(text: str, limit: int) -> list[str]:
    """Split on line boundaries into chunks of at most ``limit`` characters."""
    chunks: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:  # a single overlong line is cut hard
            if current:
                chunks.append(current)
                current = ""
            chunks.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            current = line
        else:
            current = candidate
    if current:
        chunks.append(current)
    return chunks


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def text_sections(text: str) -> list[dict[str, Any]]:
    return [section(chunk) for chunk in _split(mrkdwn(text), SECTION_LIMIT) if chunk.strip()]


def code_sections(code: str) -> list[dict[str, Any]]:
    """No language tag after the fence: Slack would show it as the first line of code."""
    room = SECTION_LIMIT - len("```\n\n```")
    return [section(f"```\n{chunk}\n```")
            for chunk in _split(escape_code(code.rstrip()), room)]


def button_element(button: Button) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "action_id": button.action_id,
        "value": button.action_id,
        "text": {"type": "plain_text", "text": truncate(button.label, BUTTON_LABEL_LIMIT, "…")[0]},
    }
    style = STYLES.get(button.style)
    if style:
        element["style"] = style
    return element


def action_blocks(buttons: list[Button]) -> list[dict[str, Any]]:
    """Slack has no disabled buttons: a disabled one is simply not shown."""
    live = [b for b in buttons if not b.disabled]
    rows = [live[i : i + BUTTONS_PER_ACTIONS] for i in range(0, len(live), BUTTONS_PER_ACTIONS)]
    return [
        {"type": "actions", "block_id": f"td-actions-{n}", "elements": [button_element(b) for b in row]}
        for n, row in enumerate(rows)
    ]


def fallback_text(message: Message) -> str:
    """The notification/accessibility text Slack shows where blocks cannot be rendered."""
    first = message.title or next(
        (b.text for b in message.blocks if not isinstance(b, CodeBlock)), "torchdrill"
    )
    return truncate(mrkdwn(first), FALLBACK_LIMIT, "…")[0]


def render_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.title and _CONTROL.search(message.title):  # a header cannot show mentions
        blocks.extend(text_sections(f"**{message.title}**"))
    elif message.title:
        title = truncate(message.title, HEADER_LIMIT, "…")[0].replace("\n", " ")
        blocks.append({"type": "header", "text": {"type": "plain_text", "text": title}})
    if message.mention:
        blocks.append(section(f"<@{message.mention}>"))
    for block in message.blocks:
        if isinstance(block, CodeBlock):
            blocks.extend(code_sections(block.code))
        else:
            blocks.extend(text_sections(block.text))
    if message.image_url:
        blocks.append({"type": "image", "image_url": message.image_url, "alt_text": "image"})
    tail: list[dict[str, Any]] = []
    if message.footer:
        footer = truncate(mrkdwn(message.footer), CONTEXT_LIMIT, "…")[0]
        tail.append({"type": "context", "elements": [{"type": "mrkdwn", "text": footer}]})
    tail.extend(action_blocks(message.buttons))
    room = MAX_BLOCKS - len(tail)
    if len(blocks) > room:
        log.warning("message has %d blocks; Slack allows %d", len(blocks) + len(tail), MAX_BLOCKS)
        blocks = [*blocks[: room - 1], section(CUT_NOTE)]
    return blocks + tail


def render(message: Message) -> dict[str, Any]:
    """Keyword arguments for chat.postMessage / chat.update / chat.postEphemeral / respond."""
    return {"text": fallback_text(message), "blocks": render_blocks(message)}
