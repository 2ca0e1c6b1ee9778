"""Reply texts that are not about a question: refusals, errors and acknowledgements.

Platform words ("server" or "workspace", how admins are recognised, the help command's name)
come from the adapter as ``Words``, so the core never names a platform.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.domain.messages import Message, truncate
from bot.core.render import notices

SORRY = "Something went wrong on my side; please try again in a moment."
UNKNOWN_BUTTON = "That button is not one of mine anymore."
NO_RUNNER = "The code runner is not available on this deployment."
RUNNER_STARTING = "The code runner is starting; try again in a few seconds."
NOT_IN_CHANNEL = "I cannot post in that channel. {invite}"
RUN_PREVIEW_CHARS = 1000
MODAL_TOO_LONG = "Your code is {size} characters; this box takes at most {limit}. Shorten it or post it in a ```python block and use “Run code” on the message."


@dataclass(frozen=True)
class Words:
    """How a platform names things; supplied by its adapter."""

    workspace: str = "workspace"  # "server" on Discord
    admins: str = "workspace admins"  # who may use admin commands, as members know them
    prefix: str = "/"  # "" in the console
    renames: dict[str, str] = field(default_factory=dict)  # e.g. help -> drill-help on Slack
    invite: str = "Invite me first, then try again."  # how a channel lets the bot in

    def command(self, name: str) -> str:
        """`bank export` -> `/bank export`; a renamed command keeps its subcommand words."""
        head, space, rest = name.partition(" ")
        return f"{self.prefix}{self.renames.get(head, head)}{space}{rest}"


def notice(text: str) -> Message:
    return notices.notice(text)


def admin_only(words: Words, command: str) -> Message:
    return notice(f"Only {words.admins} can use {words.command(command)}.")


def in_channel_only(words: Words, command: str) -> Message:
    return notice(f"{words.command(command)} works in a channel, not in a direct message.")


def unknown_command(words: Words, name: str) -> Message:
    return notice(f"I don't know {words.prefix}{name} — try {words.command('help')}.")


def round_started(count: int, seconds: int) -> Message:
    return notice(
        f"Round started: {notices.counted(count, 'question')}, {seconds} s each. "
        "Answer each one before its time runs out. Good luck!"
    )


def run_acknowledgement(requester: str, code: str, words: Words) -> Message:
    """The public message whose thread receives the result; it shows what will run."""
    ack = Message(title=f"{words.command('run')} by {requester}")
    ack.code(truncate(code, RUN_PREVIEW_CHARS, "# … (cut here)")[0] or " ")
    return ack


RUN_WITHDRAWN = "(This run was not started.)"
RUN_CANCELLED = "Your job `{job_id}` is cancelled; its thread will say so."
NOTHING_TO_CANCEL = "You have no job queued or running, so there is nothing to cancel."
RUNNER_WARMING = "Starting the code runner (the first time takes a few seconds)…"
NOTHING_TO_RUN = "Nothing to run."
NO_DAILY_YET = "There is no daily question yet today. Type `today` first."
PASTE_SOME_CODE = "Paste some code to run."
PASTE_CODE = ("Paste your code (blank lines are fine); end with a line holding just '.' "
              "or Ctrl-D. Ctrl-C cancels the paste.")
PASTE_CANCELLED = "Paste cancelled; nothing was sent."


def no_such_key(typed: str, keys: list[str]) -> Message:
    if keys:
        return notice(f"There is no `{typed}` on the message on screen; its keys are: {', '.join(keys)}.")
    return notice(f"There is no `{typed}` on the message on screen. Type `today` or `quiz` to get a question.")
