"""The App Home tab: the core's ``Dashboard`` as a Block Kit home view, published per member.

Published on ``app_home_opened`` and again after each answer of a member who opened it since
this process started (a restart loses that list; their next visit publishes anew). Each
workspace's own token publishes its members' views (OAuth installs included). What the
dashboard holds and its limits are the core's (bot.core.progress.home); here each section is a
header, one section block per item (its button as the accessory) and an actions row, and
member text is escaped whole: no mention, link or channel reference can come from it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from bot.adapters.slack.blocks import (
    HEADER_LIMIT,
    SECTION_LIMIT,
    action_blocks,
    button_element,
    mrkdwn,
)
from bot.core.domain.messages import truncate
from bot.core.progress.home import Dashboard, HomeItem

log = logging.getLogger(__name__)

MAX_BLOCKS = 100  # Slack's limit for a home view
VIEWERS_CAP = 10_000  # members remembered as having opened their Home tab
CUT_NOTE = "_… (shortened to fit Slack)_"


def inert(text: str) -> str:
    """Member text as plain characters in mrkdwn: every &, <, > escaped, mentions included."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text",
                                        "text": truncate(text, HEADER_LIMIT, "…")[0]}}


def _item(entry: HomeItem) -> dict[str, Any]:
    text = (mrkdwn(entry.text) + inert(entry.member_text)).strip() or " "
    block: dict[str, Any] = {"type": "section",
                             "text": {"type": "mrkdwn", "text": truncate(text, SECTION_LIMIT, "…")[0]}}
    if entry.button is not None:
        block["accessory"] = button_element(entry.button)
    return block


def home_view(dashboard: Dashboard) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [_header(dashboard.title)]
    for n, part in enumerate(dashboard.sections):
        blocks.append({"type": "divider"})
        blocks.append(_header(part.title))
        blocks.extend(_item(entry) for entry in part.items)
        for row in action_blocks(list(part.buttons)):
            row["block_id"] = f"td-home-{n}-{row['block_id']}"  # block ids are unique per view
            blocks.append(row)
    if len(blocks) > MAX_BLOCKS:
        log.warning("home view has %d blocks; Slack allows %d", len(blocks), MAX_BLOCKS)
        blocks = [*blocks[: MAX_BLOCKS - 1],
                  {"type": "context", "elements": [{"type": "mrkdwn", "text": CUT_NOTE}]}]
    return {"type": "home", "blocks": blocks}


class Viewers:
    """Who opened their Home tab (team, user), most recent last, bounded."""

    def __init__(self, cap: int = VIEWERS_CAP) -> None:
        self.cap = cap
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def add(self, team: str, user: str) -> None:
        self._seen[(team, user)] = None
        self._seen.move_to_end((team, user))
        if len(self._seen) > self.cap:
            self._seen.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._seen
