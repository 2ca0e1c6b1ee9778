"""Typed command lines → the arguments the core expects. No rules here, only word splitting:
the core validates topics, counts and periods and explains its refusals itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.help import help_message
from bot.core.messages import Message
from bot.core.periods import Period, parse_enum

# (usage, what it does) of commands that exist only in the console; the shared ones come
# from bot.core.help so their descriptions live in one place.
CONSOLE_COMMANDS = (
    ("today", "today's question of the playground channel"),
    ("a / b / c / d  (or 1-4)", "answer the question on screen; the keys of every message are shown under it"),
    ("reveal", "reveal today's question now: class results and the explanation"),
    ("show, again / hard / good / easy", "flashcards: show the answer, then grade yourself"),
    ("next, stop", "move on in a quiz or review, or end it"),
    ("topics", "the topics you can quiz on"),
    ("run", "run a snippet: paste lines, end with a line holding just '.'"),
    ("help, quit", "this list; leave (Ctrl-D works too)"),
)
COMMAND_NAMES = (
    "today", "reveal", "quiz", "review", "stats", "leaderboard", "round", "group", "daily",
    "topics", "run", "help", "quit",
)
ALIASES = {"exit": "quit", "q": "quit", "?": "help", "lb": "leaderboard", "top": "leaderboard"}


@dataclass
class Parsed:
    name: str
    args: list[str] = field(default_factory=list)
    rest: str = ""  # the raw text after the command word (for `run print(1)`)


def parse(line: str) -> Parsed | None:
    text = line.strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    name = word.lower()
    return Parsed(ALIASES.get(name, name), rest.split(), rest.strip())


@dataclass
class QuizArgs:
    topic: str | None = None
    count: int | None = None
    difficulty: int | None = None


def split_numbers(args: list[str]) -> tuple[list[int], list[str]]:
    numbers, words = [], []
    for arg in args:
        if arg.lstrip("-").isdigit():
            numbers.append(int(arg))
        else:
            words.append(arg)
    return numbers, words


def quiz_args(args: list[str]) -> QuizArgs | str:
    """``quiz [topic] [count] [difficulty]`` in any order: words are the topic, numbers count
    then difficulty. Returns a message for the member when the line cannot be read."""
    numbers, words = split_numbers(args)
    if len(numbers) > 2:
        return "quiz takes at most two numbers: the count and the difficulty, e.g. quiz autograd 5 2"
    return QuizArgs(
        topic=" ".join(words) or None,
        count=numbers[0] if numbers else None,
        difficulty=numbers[1] if len(numbers) > 1 else None,
    )


def is_period(word: str) -> bool:
    """Whether the core would read ``word`` as a leaderboard period (a group name may not)."""
    try:
        parse_enum(Period, word, Period.WEEK)
    except ValueError:
        return False
    return True


def round_args(args: list[str]) -> tuple[int | None, int | None, str | None] | str:
    numbers, words = split_numbers(args)
    if len(numbers) > 2:
        return "round takes at most two numbers: the count and the seconds, e.g. round 3 20 autograd"
    return (
        numbers[0] if numbers else None,
        numbers[1] if len(numbers) > 1 else None,
        " ".join(words) or None,
    )


def console_help() -> Message:
    shared = help_message(prefix="", help_name="help")
    msg = Message(title="torchdrill playground")
    msg.text("\n".join(f"`{usage}` — {what}" for usage, what in CONSOLE_COMMANDS))
    msg.text("**Also, as in Discord and Slack:**")
    msg.blocks.extend(shared.blocks)
    msg.footer = (
        "Start with `today`, answer with a letter, then `reveal`. "
        "`daily schedule 09:00 Europe/Berlin mon-fri` posts one automatically while this runs."
    )
    return msg


def unknown_command(word: str) -> Message:
    msg = Message(ephemeral=True)
    msg.text(f"Unknown command `{word}`. Commands: " + ", ".join(f"`{n}`" for n in COMMAND_NAMES))
    msg.text("Type `help` for what each one does.")
    return msg
