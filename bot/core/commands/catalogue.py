"""Every command, option, default, range, permission and description, declared once.

The Discord command tree, the Slack manifest, the text grammar of Slack and the console and
``/help`` are all generated from ``CATALOGUE``; changing a limit here changes it everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class OptionType(StrEnum):
    INT = "int"
    FLOAT = "float"
    WORD = "word"  # one word, e.g. a time or a timezone
    TOPIC = "topic"  # a topic slug or display name; offered with autocomplete
    CHOICE = "choice"  # one of ``choices``
    TEXT = "text"  # free text that may contain spaces (a group name); takes the rest
    BOOL = "bool"  # by name only: chart:true


@dataclass(frozen=True)
class Choice:
    value: str
    label: str  # may hold ``{workspace}``: each platform says "server" or "workspace"
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Option:
    name: str
    type: OptionType
    description: str
    default: object = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Choice, ...] = ()
    required: bool = False
    aliases: tuple[str, ...] = ()  # other names accepted in ``name:value`` form
    max_length: int | None = None
    only_with: tuple[str, str] | None = None  # (option, value): meaningful only alongside it

    @property
    def numeric(self) -> bool:
        return self.type in (OptionType.INT, OptionType.FLOAT)

    def usage(self) -> str:
        inner = "|".join(c.value for c in self.choices) if self.choices else self.name
        return inner if self.required else f"[{inner}]"


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    options: tuple[Option, ...] = ()
    subcommands: tuple[Command, ...] = ()
    admin_only: bool = False
    private: bool = True  # replies only the member sees
    in_channel_only: bool = False  # needs a channel (not a DM)
    code_input: bool = False  # the platform asks for code (a modal) instead of options
    help: str = ""  # the line in /help, when it says more than the description

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name or name in opt.aliases:
                return opt
        raise KeyError(name)

    def sub(self, name: str) -> Command:
        for sub in self.subcommands:
            if sub.name == name:
                return sub
        raise KeyError(name)

    def usage(self) -> str:
        if self.subcommands:
            return f"{self.name} " + "|".join(s.name for s in self.subcommands)
        return " ".join([self.name, *(o.usage() for o in self.options)])


TOPIC = Option("topic", OptionType.TOPIC, "topic (default: all)")
DEFAULT_TIMEZONE = "UTC"

SCOPES = (
    Choice("channel", "this channel"),
    Choice("workspace", "this {workspace}", aliases=("server", "guild", "team")),
    Choice("group", "a study group"),
)
PERIODS = (
    Choice("week", "this week", aliases=("weekly",)),
    Choice("month", "this month", aliases=("monthly",)),
    Choice("all", "all time", aliases=("all-time", "alltime")),
)
GROUP_ACTIONS = tuple(Choice(a, a) for a in ("create", "join", "leave", "list", "stats"))
CHALLENGE_ACTIONS = (
    Choice("new", "a new problem"),
    Choice("hint", "the next hint for your open problem"),
    Choice("board", "the challenges board of this {workspace}"),
    Choice("mine", "your solved problems per topic"),
    Choice("week", "this channel's weekly challenge"),
)

CATALOGUE: tuple[Command, ...] = (
    Command(
        "quiz", "A private quiz",
        options=(
            TOPIC,
            Option("count", OptionType.INT, "how many questions", default=5, minimum=1, maximum=20),
            Option("difficulty", OptionType.INT, "1 easy, 2 medium, 3 hard", minimum=1, maximum=3),
        ),
        help="a private quiz; explanations right after each answer",
    ),
    Command(
        "review", "Spaced repetition: due cards first, then weak topics",
        options=(Option("count", OptionType.INT, "how many cards", default=10, minimum=1, maximum=50),),
    ),
    Command(
        "round", "A live quiz round in this channel",
        options=(
            Option("count", OptionType.INT, "questions", default=5, minimum=1, maximum=20),
            Option("seconds", OptionType.INT, "seconds per question", default=30, minimum=10, maximum=300),
            TOPIC,
        ),
        in_channel_only=True,
        help="a live round: questions one by one with a timer, picks hidden until each reveal",
    ),
    Command("stats", "Your accuracy, mastery per topic and streaks"),
    Command(
        "leaderboard", "Who scored most",
        options=(
            Option("scope", OptionType.CHOICE, "channel, {workspace} or study group", choices=SCOPES),
            Option("period", OptionType.CHOICE, "week, month or all time", choices=PERIODS),
            Option("group", OptionType.TEXT, "study group name (with scope: group)", max_length=64,
                   only_with=("scope", "group")),
            Option("chart", OptionType.BOOL, "add a chart of the top members' points", default=False),
        ),
        private=False, in_channel_only=True,
    ),
    Command(
        "group", "Study groups: create, join, leave, list, or stats with a chart",
        options=(
            Option("action", OptionType.CHOICE, "what to do", default="list", choices=GROUP_ACTIONS),
            Option("name", OptionType.TEXT, "group name", max_length=64),
        ),
        in_channel_only=True,
    ),
    Command(
        "daily", "The channel's daily question",
        admin_only=True, in_channel_only=True,
        subcommands=(
            Command(
                "schedule", "Post a daily question here at a fixed time",
                options=(
                    Option("time", OptionType.WORD, "HH:MM", required=True),
                    Option("timezone", OptionType.WORD, "IANA name, e.g. Europe/Berlin",
                           default=DEFAULT_TIMEZONE, aliases=("tz",)),
                    Option("weekdays", OptionType.WORD, "e.g. mon-fri or mon,wed,fri", aliases=("days",)),
                    TOPIC,
                    Option("reveal_after_hours", OptionType.FLOAT, "hours until the answer is revealed",
                           minimum=0.25, maximum=72, aliases=("reveal",)),
                ),
            ),
            Command("pause", "Pause the daily question in this channel"),
            Command("resume", "Resume the daily question in this channel"),
            Command("now", "Post today's question now"),
            Command("status", "Show this channel's daily schedule"),
            Command(
                "challenge", "Post a coding challenge here every week (or day:off)",
                options=(
                    Option("day", OptionType.WORD, "mon … sun, or off", required=True),
                    Option("time", OptionType.WORD, "HH:MM, in the daily schedule's timezone"),
                ),
            ),
            Command(
                "digest", "Post last week's digest here every week (day:off stops, day:now posts one)",
                options=(
                    Option("day", OptionType.WORD, "mon … sun, off, or now", required=True),
                    Option("time", OptionType.WORD, "HH:MM, in the daily schedule's timezone"),
                ),
            ),
        ),
        help="the channel's daily question (admins)",
    ),
    Command(
        "run", "Run a PyTorch snippet in a sandbox; output in a thread",
        code_input=True, private=False,
        help="run a PyTorch snippet in a sandbox; the output lands in a thread",
    ),
    Command(
        "challenge", "A graded PyTorch coding problem, judged in the sandbox",
        options=(
            Option("action", OptionType.CHOICE, "new, hint, board, mine or week", default="new",
                   choices=CHALLENGE_ACTIONS),
            TOPIC,
            Option("difficulty", OptionType.INT, "1 easy, 2 medium, 3 hard", minimum=1, maximum=3),
        ),
        help="a graded coding problem with its stub (private); then `hint`, `board` or `mine`",
    ),
    Command(
        "submit", "Submit your solution to your open /challenge; the verdict lands in a thread",
        code_input=True, private=False,
        help="submit your solution to your open /challenge (a box prefilled with its stub)",
    ),
    Command("help", "What torchdrill can do"),
)


@dataclass(frozen=True)
class Catalogue:
    commands: tuple[Command, ...] = field(default=CATALOGUE)

    def find(self, name: str) -> Command | None:
        for command in self.commands:
            if command.name == name:
                return command
        return None


COMMANDS = Catalogue()
