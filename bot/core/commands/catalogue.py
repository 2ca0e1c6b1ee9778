"""Every command, option, default, range, permission and description, declared once.

The Discord command tree, the Slack manifest, the text grammar of Slack and the console and
``/help`` are all generated from ``CATALOGUE``; changing a limit here changes it everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from bot.core.domain import report_reasons


class OptionType(StrEnum):
    INT = "int"
    FLOAT = "float"
    WORD = "word"  # one word, e.g. a time or a timezone
    TOPIC = "topic"  # a topic slug or display name; offered with autocomplete
    TRACK = "track"  # a /mock track's slug: built-in or the community's; offered with autocomplete
    CHOICE = "choice"  # one of ``choices``
    TEXT = "text"  # free text that may contain spaces (a group name); takes the rest
    BOOL = "bool"  # by name only: chart:true
    FILE = "file"  # an attached file: Discord attachment, Slack file (in a form), console path


@dataclass(frozen=True)
class Choice:
    value: str
    label: str  # may hold ``{workspace}``: each platform says "server" or "workspace"
    aliases: tuple[str, ...] = ()
    admin_only: bool = False  # this value needs an admin, in a channel (``mock schedule``)


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
    # (option, values): meaningful only alongside one of those values (or that option left out)
    only_with: tuple[str, tuple[str, ...]] | None = None
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

    @property
    def public_reply(self) -> bool:
        """Whether the command layer's reply is for the channel (a code_input command's public
        part is its acknowledgement; its words, ``run cancel``, are answered privately)."""
        return not self.private and not self.code_input

    def takes_words(self, text: str) -> bool:
        """A code_input command typed with one of its words (``run cancel``) instead of code:
        the words go to the command layer, anything else opens the code box."""
        words = text.split()
        if not self.code_input or len(words) != 1:
            return False
        name, _, value = words[0].lower().rpartition(":")
        return any(
            value in (c.value, *c.aliases)
            for o in self.options if o.type is OptionType.CHOICE and name in ("", o.name, *o.aliases)
            for c in o.choices
        )

    def may_need_admin(self, text: str = "") -> bool:
        """Whether the caller's admin fact matters for this command typed with ``text`` (an
        admin-only command, or a word naming an admin-only choice: ``mock schedule``), so a
        front end that must ask its platform who is an admin asks only then."""
        if self.admin_only or any(s.admin_only for s in self.subcommands):
            return True
        words = {w.lower().rpartition(":")[2].rpartition("=")[2] for w in text.split()}
        return any(c.admin_only and ({c.value, *c.aliases} & words) for o in self.options for c in o.choices)

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
    Choice("reports", "show the next 🚩 question report"),
    Choice("retire", "retire the community question of report id"),
    Choice("dismiss", "close report id, keeping the question"),
)
REPORT_REASONS = tuple(Choice(r.value, r.description, r.aliases) for r in report_reasons.REPORT_REASONS)

MOCK_ACTIONS = (
    Choice("start", "start a mock interview"),
    Choice("answer", "your answer to the explain-it question on screen"),
    Choice("status", "the item on screen and the time left"),
    Choice("end", "end your mock now and read the report"),
    Choice("date", "set your interview date (YYYY-MM-DD, or clear)"),
    Choice("schedule", "admins: a group mock in this channel at a time (no time: the list)",
           admin_only=True),
    Choice("cancel", "admins: cancel group mock id before it starts", admin_only=True),
)
STARTS = ("start", "schedule")  # the actions a track and a length go with

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
        options=(Option("count", OptionType.INT, "how many cards", default=10, minimum=1, maximum=50),
                 Option("action", OptionType.CHOICE, "export: your misses and due cards as an Anki deck",
                        choices=(Choice("export", "your misses and due cards as an Anki deck (.apkg)"),))),
        help="spaced repetition, due cards first; `export` sends your misses and due cards for Anki",
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
                   only_with=("scope", ("group",))),
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
            Command(
                "rewards", "Roles for streaks, solves or readiness (Discord): list, add or remove",
                options=(
                    Option("action", OptionType.CHOICE, "list, add or remove", default="list",
                           choices=tuple(Choice(a, a) for a in ("list", "add", "remove"))),
                    Option("streak", OptionType.INT, "the streak (days, or weeks: /daily streak) that earns it",
                           minimum=1, maximum=365),
                    Option("role", OptionType.WORD, "the role: role:@Name, or its id", max_length=40),
                    Option("solved", OptionType.INT, "or: the challenges solved that earn it",
                           minimum=1, maximum=500),
                    Option("readiness", OptionType.INT, "or: the readiness % in topic that earns it",
                           minimum=1, maximum=100),
                    Option("topic", OptionType.TOPIC, "the topic, with readiness"),
                ),
            ),
            Command(
                "streak", "Count streaks in days (default) or in weeks of N answers",
                options=(
                    Option("mode", OptionType.CHOICE, "daily, or weekly (omit: show the mode)",
                           choices=(Choice("daily", "daily: consecutive right answers"),
                                    Choice("weekly", "weekly: N of the week's questions answered"))),
                    Option("per_week", OptionType.INT, "weekly: answers a week that keep the streak",
                           minimum=1, maximum=7, only_with=("mode", ("weekly",)), aliases=("n",)),
                ),
            ),
        ),
        help="the channel's daily question (admins)",
    ),
    Command(
        "run", "Run a PyTorch snippet in a sandbox; output in a thread",
        options=(Option("action", OptionType.CHOICE, "cancel: stop your queued or running job",
                        choices=(Choice("cancel", "cancel your queued or running job"),)),),
        code_input=True, private=False,
        help="run a PyTorch snippet in a sandbox; the output lands in a thread; "
             "`cancel` stops your queued or running job",
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
            Command("upload", "Add or replace a bank: attach a YAML file (same format as ours) or a CSV",
                    options=(Option("file", OptionType.FILE, "the bank, a .yaml file or a .csv sheet",
                                    required=True),),
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
            Command("quality", "Which questions look broken, judged from members' answers",
                    options=(Option("bank", OptionType.WORD, "a bank id (see /bank list), or builtin "
                                    "for ours (default)", max_length=96), TOPIC),
                    admin_only=True),
            Command(
                "review", "Suggested questions and 🚩 reports: the next one, approve, reject, retire",
                options=(
                    Option("action", OptionType.CHOICE, "next, approve, reject; reports, retire, dismiss", default="next",
                           choices=REVIEW_ACTIONS),
                    Option("id", OptionType.INT, "the suggestion's or report's number", minimum=1),
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
    Command(
        "mock", "A timed mock interview: MCQs, explain-it questions and a coding challenge, then a report",
        options=(
            Option("action", OptionType.CHOICE, "start (default), answer, status, end or date",
                   choices=MOCK_ACTIONS),
            Option("track", OptionType.TRACK, "the role you prepare for (built-in or this {workspace}'s)",
                   max_length=32, only_with=("action", STARTS)),
            Option("minutes", OptionType.INT, "how long the mock lasts", default=30, minimum=10, maximum=90,
                   only_with=("action", STARTS)),
            Option("text", OptionType.TEXT, "your answer (with action answer)", max_length=1500,
                   only_with=("action", ("answer",)), aliases=("answer",)),
            Option("day", OptionType.WORD, "YYYY-MM-DD: your interview date (or clear), or a group mock's day",
                   max_length=20, only_with=("action", ("date", "schedule"))),
            Option("at", OptionType.WORD, "HH:MM: when the group mock starts (with action schedule)",
                   max_length=20, only_with=("action", ("schedule",)), aliases=("time",)),
            Option("timezone", OptionType.WORD, "IANA name for the group mock's time (default: the "
                   "channel's)", max_length=64, only_with=("action", ("schedule",)), aliases=("tz",)),
            Option("id", OptionType.INT, "the group mock's number (with action cancel)", minimum=1,
                   only_with=("action", ("cancel",))),
        ),
        help="a timed mock interview (private): `mock [track] [minutes]`, then `mock answer TEXT` "
             "for explain-it questions; a report at the end; `mock date YYYY-MM-DD` counts down "
             "to your interview; admins: `mock schedule [YYYY-MM-DD] HH:MM [track] [minutes]` "
             "posts a group mock here (`mock cancel ID`)",
    ),
    Command(
        "report", "🚩 Report a question you think is broken; admins review it",
        options=(
            Option("post", OptionType.INT, "the question's number (the 🚩 button shows it)", required=True,
                   minimum=1),
            Option("reason", OptionType.CHOICE, "what is wrong with it", required=True,
                   choices=REPORT_REASONS),
            Option("note", OptionType.TEXT, "a short note for the admins", max_length=report_reasons.NOTE_MAX),
        ),
        help="🚩 report a broken question (wrong key, ambiguous, outdated, typo) with a note",
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


# Commands a member may also use where torchdrill is their own app (a Discord user install:
# direct messages, and servers that have not added the bot). Practice only: everything else
# posts in channels or reads a server's boards, and stays with servers that added the bot.
USER_INSTALLABLE: frozenset[str] = frozenset({"quiz", "review", "stats", "challenge", "submit", "run", "mock"})


def user_installable(name: str) -> bool:
    return name in USER_INSTALLABLE
