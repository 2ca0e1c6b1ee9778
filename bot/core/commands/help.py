"""``/help``, generated from the catalogue so it can never list a command that is not served."""

from __future__ import annotations

from bot.core.commands.catalogue import COMMANDS, Catalogue
from bot.core.commands.replies import Words
from bot.core.domain.messages import Message
from bot.core.domain.topics import TOPICS


def help_lines(words: Words, catalogue: Catalogue = COMMANDS) -> list[str]:
    lines = []
    for command in catalogue.commands:
        usage = command.usage().split(" ", 1)
        args = f" {usage[1]}" if len(usage) > 1 else ""
        lines.append(f"`{words.command(command.name)}{args}` — {command.help or command.description.lower()}")
    return [line.replace("{workspace}", words.workspace) for line in lines]


def help_message(words: Words, catalogue: Catalogue = COMMANDS) -> Message:
    msg = Message(title="torchdrill — daily PyTorch interview drills", ephemeral=True)
    msg.text("\n".join(help_lines(words, catalogue)))
    msg.text("Topics: " + ", ".join(f"`{slug}`" for slug in TOPICS))
    msg.footer = (
        f"Answer the daily question with the buttons. {words.command('help')} shows this again."
    )
    return msg


# The console playground's own commands: its buttons are typed keys, and it has no scheduler
# UI, so "today" and "reveal" stand in for the daily post and its reveal.
PLAYGROUND_COMMANDS = (
    ("today", "today's question of the playground channel"),
    ("a / b / c / d  (or 1-4)", "answer the question on screen; the keys of every message are shown under it"),
    ("reveal", "reveal today's question now: class results and the explanation"),
    ("show, again / hard / good / easy", "flashcards: show the answer, then grade yourself"),
    ("next, stop", "move on in a quiz or review, or end it"),
    ("topics", "the topics you can quiz on"),
    ("run", "run a snippet: paste lines (blank ones too), end with a line holding just '.' or Ctrl-D; "
            "Ctrl-C cancels the paste"),
    ("submit", "your solution to the open `challenge`, pasted like `run`; judged in the sandbox"),
    ("help, quit", "this list; leave (Ctrl-D works too)"),
)
PLAYGROUND_NAMES = ("today", "reveal", "topics", "quit")


def playground_help(words: Words, catalogue: Catalogue = COMMANDS) -> Message:
    msg = Message(title="torchdrill playground")
    msg.text("\n".join(f"`{usage}` — {what}" for usage, what in PLAYGROUND_COMMANDS))
    msg.text("**Also, as in Discord and Slack:**")
    msg.text("\n".join(help_lines(words, catalogue)))
    msg.text("Topics: " + ", ".join(f"`{slug}`" for slug in TOPICS))
    msg.footer = (
        "Start with `today`, answer with a letter, then `reveal`. "
        "`daily schedule 09:00 Europe/Berlin mon-fri` posts one automatically while this runs."
    )
    return msg


def playground_unknown(word: str, catalogue: Catalogue = COMMANDS) -> Message:
    names = [*PLAYGROUND_NAMES[:-1], *(c.name for c in catalogue.commands), "quit"]
    msg = Message(ephemeral=True)
    msg.text(f"Unknown command `{word}`. Commands: " + ", ".join(f"`{n}`" for n in names))
    msg.text("Type `help` for what each one does.")
    return msg


def topics_message(choices: list[tuple[str, str]]) -> Message:
    msg = Message(title="Topics", ephemeral=True).text("\n".join(f"`{s}` — {t}" for s, t in choices))
    msg.footer = "e.g. quiz autograd 3"
    return msg
