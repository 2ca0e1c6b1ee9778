"""A member's own practice space: where torchdrill is the member's app rather than their
server's (a Discord user install: direct messages, group chats, servers that have not added
the bot).

All those places are one member, ``personal_space(user id)``, so progress made in a DM and in
any server without the bot is the same progress. A server that added the bot keeps its own
member, boards and streaks, as before. There the practice commands of
``catalogue.USER_INSTALLABLE`` work with private replies; channel features say why not.
"""

from __future__ import annotations

from bot.core.commands import replies
from bot.core.commands.catalogue import COMMANDS, USER_INSTALLABLE, Catalogue
from bot.core.domain.messages import Message

PERSONAL_PREFIX = "dm-"


def personal_space(user_id: str) -> str:
    """The workspace id of a member's own space (the same in every DM and foreign server)."""
    return f"{PERSONAL_PREFIX}{user_id}"


def is_personal(workspace: str) -> bool:
    return workspace.startswith(PERSONAL_PREFIX)


def installable_commands(words: replies.Words, catalogue: Catalogue = COMMANDS) -> str:
    """The practice commands, in catalogue order, as the platform spells them."""
    return ", ".join(words.command(c.name) for c in catalogue.commands if c.name in USER_INSTALLABLE)


def channel_feature_refusal(words: replies.Words, command: str) -> Message:
    """A channel feature asked for where torchdrill is the member's own app."""
    return replies.notice(
        f"{words.command(command)} is a channel feature: it works in {words.workspace}s that "
        f"added torchdrill. Here you use torchdrill as your own app: "
        f"{installable_commands(words)} work, with replies only you see."
    )


PERSONAL_CODE_DELIVERY = "Your code runs privately here: the output comes in our direct messages."
