"""Callers, a runner-less desk and the notices members read: the core dispatch tests."""

from __future__ import annotations

from bot.core.commands.dispatch import Caller
from bot.core.commands.replies import Words
from bot.core.content.challenges import load_challenges
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message

ADA = Who("discord", "g1", "u-ada", "Ada")  # the workspace of board_helpers' players
BO = Who("discord", "g1", "u-bo", "Bo")
HERE = Where("discord", "g1", "c-1", "general")


# How a platform names things, with every name different from the default, so a reply built
# with the default words (or a mistyped command name) shows.
WORDS = Words(
    workspace="server", admins="members with Manage Server",
    renames={"help": "drill-help", "challenge": "drill-challenge", "submit": "drill-submit",
             "group": "drill-group", "bank": "drill-bank", "run": "drill-run"},
    invite="Add me with the Apps button first.",
)


SORRY = "Something went wrong on my side; please try again in a moment."
BANK = load_challenges()


class NoRunner:
    """RunnerAccess without a desk (the runner is still starting)."""

    def desk(self) -> None:
        return None

    def unavailable(self) -> str:
        return "The code runner is starting; try again in a few seconds."


def member(who: Who = ADA, where: Where | None = HERE) -> Caller:
    return Caller(who, where, words=WORDS)


def admin(who: Who = ADA, where: Where | None = HERE) -> Caller:
    return Caller(who, where, is_admin=True, words=WORDS)


def notice_of(message: Message) -> str:
    """A private notice's one line (and that it is private, without title or buttons)."""
    assert (message.ephemeral, message.title, message.buttons) == (True, None, []), message.plain()
    return message.plain()
