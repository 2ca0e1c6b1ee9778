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
    FILE = "file"  # an attached file: Discord attachment, Slack file (in a form), console path


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
    multiline: bool = False  # TEXT that keeps its line breaks (a form's paragraph box)

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
    form_input: bool = False  # the platform asks for the options in a form (a modal)
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

BANK_SOURCES = (
    Choice("both", "built-in and community banks", aliases=("all",)),
    Choice("builtin", "built-in banks only", aliases=("built-in", "ours")),
    Choice("community", "this {workspace}'s banks only", aliases=("own", "custom")),
)
BANKS = Option("banks", OptionType.CHOICE, "built-in, this {workspace}'s community banks, or both",
               choices=BANK_SOURCES, aliases=("source",))
BANK_ID = Option("bank", OptionType.WORD, "the bank's id (see /bank list)", required=True, max_length=96)
IMPORT_FORMATS = tuple(Choice(f, f) for f in ("mcq", "numbered", "qa", "longform"))
REVIEW_ACTIONS = (
    Choice("next", "show the next suggestion"),
    Choice("approve", "approve suggestion id into a bank"),
    Choice("reject", "reject suggestion id, telling the author why"),
)

CATALOGUE: tuple[Command, ...] = (
    Command(
        "quiz", "A private quiz",
        options=(
            TOPIC,
            Option("count", OptionType.INT, "how many questions", default=5, minimum=1, maximum=20),
            Option("difficulty", OptionType.INT, "1 easy, 2 medium, 3 hard", minimum=1, maximum=3),
            BANKS,
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
                    BANKS,
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
    Command(
        "bank", "This {workspace}'s own question banks",
        in_channel_only=True,
        subcommands=(
            Command("upload", "Add or replace a bank: attach a YAML file (same format as ours)",
                    options=(Option("file", OptionType.FILE, "the bank, a .yaml file", required=True),),
                    admin_only=True),
            Command("list", "The community banks of this {workspace}"),
            Command("show", "A bank's questions", options=(BANK_ID,)),
            Command("disable", "Stop serving a bank (posts already out keep working)", options=(BANK_ID,),
                    admin_only=True),
            Command("enable", "Serve a disabled bank again", options=(BANK_ID,), admin_only=True),
            Command("check", "Run a community question's snippet in the /run sandbox (output in a thread)",
                    options=(Option("question", OptionType.WORD, "the question's id (see /bank show)",
                                    required=True, max_length=96),),
                    admin_only=True),
            Command("export", "A bank's YAML file, to edit and upload again", options=(BANK_ID,),
                    admin_only=True),
            Command(
                "review", "Suggested questions: the next one, approve or reject",
                options=(
                    Option("action", OptionType.CHOICE, "next, approve or reject", default="next",
                           choices=REVIEW_ACTIONS),
                    Option("id", OptionType.INT, "the suggestion's number", minimum=1),
                    Option("bank", OptionType.WORD, "bank to approve into (default: suggestions)",
                           max_length=96),
                    Option("reason", OptionType.TEXT, "why it is rejected (the author is told)",
                           max_length=300),
                ),
                admin_only=True,
            ),
            Command(
                "import", "A raw document (mcq, numbered, qa, longform) → a draft bank to fix and upload",
                options=(
                    Option("format", OptionType.CHOICE, "how the document is laid out", required=True,
                           choices=IMPORT_FORMATS),
                    Option("file", OptionType.FILE, "the document, a text file", required=True),
                ),
                admin_only=True,
            ),
        ),
        help="this {workspace}'s own question banks: list, show; admins upload, review, export",
    ),
    Command(
        "suggest", "Suggest a question for this {workspace}'s banks; admins review it",
        options=(
            Option("prompt", OptionType.TEXT, "the question", required=True, max_length=150),
            Option("choices", OptionType.TEXT,
                   "one per line (or split by ;), * before the right one, | why-not after the others",
                   required=True, max_length=1500, multiline=True),
            Option("explanation", OptionType.TEXT, "why the right answer is right", required=True,
                   max_length=1500, multiline=True),
            Option("topic", OptionType.TOPIC, "its topic", required=True),
            Option("difficulty", OptionType.INT, "1 easy, 2 medium, 3 hard", default=2, minimum=1, maximum=3),
        ),
        in_channel_only=True, form_input=True,
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

    def along(self, path: tuple[str, ...]) -> list[Command]:
        """The commands a path names, root first (``daily schedule``: daily, schedule)."""
        root = self.find(path[0])
        if root is None:
            return []
        found = [root]
        for name in path[1:]:
            found.append(found[-1].sub(name))
        return found

    def admin_only(self, path: tuple[str, ...]) -> bool:
        return any(c.admin_only for c in self.along(path))


COMMANDS = Catalogue()
