"""The console playground: the bot in a terminal, no token needed.

A platform like the others: platform "console", workspace "local", one channel
"playground", and the member is the OS user (or ``--name``). Buttons become typed keys; every
decision (scores, who may answer, what is closed) is the core's.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from sqlalchemy.engine import make_url

from bot.adapters.console import commands
from bot.adapters.console.publisher import ConsolePublisher
from bot.adapters.console.screen import Screen
from bot.core import render
from bot.core.identity import Where, Who
from bot.core.messages import Message

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)

PLATFORM = "console"
WORKSPACE = "local"
CHANNEL = "playground"
SORRY = "Something went wrong on my side"
RUN_END = "."


def default_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry, e.g. an arbitrary container uid
        return "player"


def files_dir_for(database_url: str) -> Path:
    """Saved attachments go next to a SQLite file, else into ./data."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(url.database).parent / "playground-files"
    return Path("data") / "playground-files"


class ConsoleAdapter:
    platform = PLATFORM

    def __init__(self, app: App, *, name: str | None = None, screen: Screen | None = None,
                 files_dir: Path | None = None) -> None:
        self.app = app
        self.screen = screen or Screen()
        self.publisher = ConsolePublisher(
            self.screen, files_dir or files_dir_for(app.settings.database_url)
        )
        member = (name or "").strip() or default_name()
        self.who = Who(PLATFORM, WORKSPACE, member, member)
        self.where = Where(PLATFORM, WORKSPACE, CHANNEL, CHANNEL)
        self.runner_starting: asyncio.Task[str | None] | None = None  # set by `play`
        self.runner_problem: str | None = None
        self.daily_post_id: int | None = None
        self.tasks: set[asyncio.Task[object]] = set()
        self.handlers: dict[str, Callable[[commands.Parsed], Awaitable[None]]] = {
            "today": self.today, "reveal": self.reveal, "quiz": self.quiz, "review": self.review,
            "stats": self.stats, "leaderboard": self.leaderboard, "round": self.round,
            "group": self.group, "daily": self.daily, "topics": self.topics, "run": self.run,
            "help": self.help,
        }

    # ---- Adapter protocol ----------------------------------------------------------------
    async def start(self) -> None:
        # The console owns the terminal: only warnings and errors may interrupt the game.
        logging.getLogger().setLevel(logging.WARNING)

    async def run_forever(self) -> None:
        self.welcome()
        while True:
            line = await self.screen.read()
            if line is None:  # Ctrl-D / end of piped input
                self.screen.say("")
                return
            if not await self.handle(line):
                return

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.runner_starting is not None and not self.runner_starting.done():
            self.runner_starting.cancel()
            await asyncio.gather(self.runner_starting, return_exceptions=True)

    # ---- the loop ------------------------------------------------------------------------
    def welcome(self) -> None:
        line = Text("torchdrill playground", style="bold")
        line.append(f" — you are {self.who.display_name} in #{CHANNEL}. ")
        line.append("Type ")
        line.append("today", style="bold green")
        line.append(" for today's question, ")
        line.append("help", style="bold green")
        line.append(" for everything else, ")
        line.append("quit", style="bold green")
        line.append(" to leave.")
        self.screen.print(line)

    async def handle(self, line: str) -> bool:
        """Run one typed line; False means quit."""
        parsed = commands.parse(line)
        if parsed is None:
            return True
        if parsed.name == "quit":
            self.screen.say("Bye!")
            return False
        try:
            handler = self.handlers.get(parsed.name)
            if handler is not None:
                await handler(parsed)
            elif self.screen.key(parsed.name) is not None and not parsed.args:
                await self.press(parsed.name)
            elif _looks_like_key(parsed.name) and not parsed.args:
                self.reply(render.notice(self.no_such_key(parsed.name)))
            else:
                self.reply(commands.unknown_command(parsed.name))
        except Exception as exc:
            log.exception("console command %r failed", parsed.name)
            self.screen.say(f"{SORRY}: {type(exc).__name__}. Please try again.", "red")
        return True

    def no_such_key(self, typed: str) -> str:
        keys = [k.word or str(k.number) for k in self.screen.keys]
        if keys:
            return f"There is no `{typed}` on the message on screen; its keys are: {', '.join(keys)}."
        return f"There is no `{typed}` on the message on screen. Type `today` or `quiz` to get a question."

    def reply(self, message: Message) -> None:
        self.screen.show(message, public=not message.ephemeral)

    # ---- buttons -------------------------------------------------------------------------
    async def press(self, typed: str) -> None:
        key = self.screen.key(typed)
        assert key is not None
        outcome = await self.app.drill.handle_action(self.who, key.button.action_id)
        self.reply(outcome.reply)
        if outcome.public is not None and outcome.platform_ref:
            await self.publisher.update(self.where, outcome.platform_ref, outcome.public)

    # ---- the daily question --------------------------------------------------------------
    async def today(self, parsed: commands.Parsed) -> None:
        found = await self.app.daily.todays_post(self.where)
        if found is None:
            printed = self.publisher.count
            notice = await self.app.daily.post_now(self.where)
            if self.publisher.count == printed:  # nothing was posted: say why
                self.reply(notice)
                return
            posted = await self.app.daily.todays_post(self.where)
            self.daily_post_id = posted.post_id if posted else None
            return
        self.daily_post_id = found.post_id
        if found.closed:
            await self.show_reveal(found.post_id)
            return
        view = await self.app.drill.refresh_view(found.post_id)
        if found.platform_ref:
            self.publisher.adopt(found.platform_ref, view)
        self.screen.show(view, public=True)

    async def show_reveal(self, post_id: int) -> None:
        printed = self.publisher.count
        message = await self.app.drill.reveal_post(post_id, self.where, self.publisher)
        if self.publisher.count == printed:  # revealed earlier: the core published nothing new
            self.screen.show(message, public=True)

    async def reveal(self, parsed: commands.Parsed) -> None:
        post_id = self.daily_post_id
        if post_id is None:
            found = await self.app.daily.todays_post(self.where)
            post_id = found.post_id if found else None
        if post_id is None:
            self.reply(render.notice("There is no daily question yet today. Type `today` first."))
            return
        await self.show_reveal(post_id)

    # ---- personal practice ---------------------------------------------------------------
    async def quiz(self, parsed: commands.Parsed) -> None:
        args = commands.quiz_args(parsed.args)
        if isinstance(args, str):
            self.reply(render.notice(args))
            return
        options: dict[str, int] = {}
        if args.count is not None:
            options["count"] = args.count
        self.reply(await self.app.drill.quiz(
            self.who, topic=args.topic, difficulty=args.difficulty, **options
        ))

    async def review(self, parsed: commands.Parsed) -> None:
        numbers, words = commands.split_numbers(parsed.args)
        if words or len(numbers) > 1:
            self.reply(render.notice("review takes one optional number of cards, e.g. `review 5`"))
            return
        count = numbers[0] if numbers else 10
        if not 1 <= count <= 50:
            self.reply(render.notice(f"review takes 1 to 50 cards (you asked for {count})"))
            return
        self.reply(await self.app.drill.review(self.who, count=count))

    async def stats(self, parsed: commands.Parsed) -> None:
        self.reply(await self.app.drill.stats(self.who, self.where))

    async def leaderboard(self, parsed: commands.Parsed) -> None:
        """``leaderboard [scope] [period]``; a study group: ``leaderboard group NAME [period]``."""
        args = list(parsed.args)
        scope = args.pop(0) if args else None
        group = None
        if scope and scope.lower() == "group":
            period = args.pop() if len(args) > 1 and commands.is_period(args[-1]) else None
            group = " ".join(args) or None
        else:
            period = args.pop(0) if args else None
            if args:
                self.reply(render.notice(
                    "leaderboard takes a scope and a period, e.g. `leaderboard channel week` "
                    "or `leaderboard group NAME month`"
                ))
                return
        self.reply(await self.app.drill.leaderboard(
            self.who, self.where, scope=scope, period=period, group=group
        ))

    async def group(self, parsed: commands.Parsed) -> None:
        action = parsed.args[0] if parsed.args else "list"
        name = " ".join(parsed.args[1:]) or None
        self.reply(await self.app.drill.group(self.who, action, name))

    async def help(self, parsed: commands.Parsed) -> None:
        self.reply(commands.console_help())

    async def topics(self, parsed: commands.Parsed) -> None:
        lines = [f"`{slug}` — {title}" for slug, title in self.app.drill.topic_choices("")]
        msg = Message(title="Topics", ephemeral=True).text("\n".join(lines))
        msg.footer = "e.g. quiz autograd 3"
        self.reply(msg)

    # ---- channel activities --------------------------------------------------------------
    async def round(self, parsed: commands.Parsed) -> None:
        args = commands.round_args(parsed.args)
        if isinstance(args, str):
            self.reply(render.notice(args))
            return
        count, seconds, topic = args
        started = await self.app.drill.start_round(
            self.where, self.who, count=count or 3, seconds=seconds or 30, topic=topic
        )
        if isinstance(started, Message):
            self.reply(started)
            return
        self.background(self.app.drill.play_round(started, self.where, self.publisher), "round")
        self.reply(render.notice(
            f"Round started: {count or 3} question(s), {seconds or 30} s each. "
            "Answer each with its letter before the time runs out."
        ))

    async def daily(self, parsed: commands.Parsed) -> None:
        """The local player owns the playground, so they are its admin."""
        daily = self.app.daily
        action = parsed.args[0].lower() if parsed.args else "status"
        rest = parsed.args[1:]
        if action == "schedule":
            if not rest:
                self.reply(render.notice(
                    "Usage: `daily schedule HH:MM [timezone] [weekdays] [topic]`, "
                    "e.g. `daily schedule 09:00 Europe/Berlin mon-fri`"
                ))
                return
            timezone = rest[1] if len(rest) > 1 else "UTC"
            weekdays = rest[2] if len(rest) > 2 else None
            topic = " ".join(rest[3:]) or None
            self.reply(await daily.set_schedule(
                self.where, at=rest[0], timezone=timezone, weekdays=weekdays, topic=topic
            ))
        elif action in ("pause", "resume") and not rest:
            self.reply(await daily.set_paused(self.where, action == "pause"))
        elif action == "status" and not rest:
            self.reply(await daily.status(self.where))
        elif action == "now" and not rest:
            await self.today(parsed)
        else:
            self.reply(render.notice(
                "Usage: `daily schedule HH:MM [timezone] [weekdays] [topic]`, `daily pause`, "
                "`daily resume`, `daily status` or `daily now`"
            ))

    def background(self, work: Awaitable[object], name: str) -> None:
        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("background %s failed", name)
                self.screen.say(f"{SORRY} ({name} stopped).", "red")

        task = asyncio.create_task(guarded(), name=f"console {name}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # ---- /run ----------------------------------------------------------------------------
    async def read_code(self, first: str) -> str | None:
        """Inline code runs at once; otherwise lines until '.', or a blank after one line."""
        if first.strip():
            return first
        self.screen.say("Paste your code; end with a line holding just '.'", "dim")
        lines: list[str] = []
        while True:
            line = await self.screen.read("... ")
            if line is None or line.strip() == RUN_END:
                break
            if not line.strip() and len(lines) == 1:
                break
            if not line.strip() and not lines:
                continue
            lines.append(line)
        return "\n".join(lines) if lines else None

    async def runner_ready(self) -> bool:
        if self.runner_starting is not None and not self.runner_starting.done():
            self.screen.say("Starting the code runner (the first time takes a few seconds)…", "dim")
        if self.runner_starting is not None:
            self.runner_problem = await self.runner_starting
        if self.app.runs is None:
            why = self.runner_problem or "the runner is not part of this installation"
            self.reply(render.notice(f"`run` is not available: {why}."))
            return False
        return True

    async def run(self, parsed: commands.Parsed) -> None:
        if not await self.runner_ready():
            return
        code = await self.read_code(parsed.rest)
        if code is None:
            self.reply(render.notice("Nothing to run."))
            return
        runs = self.app.runs
        assert runs is not None
        ack = Message(title=f"run by {self.who.display_name}").code(code)
        ref = await self.publisher.publish(self.where, ack)
        status = await runs.submit(self.who, self.where, code, thread_of=ref)
        self.screen.show(status, public=False)


def _looks_like_key(word: str) -> bool:
    return (len(word) == 1 and word.isalnum()) or word in (
        "show", "next", "stop", "again", "hard", "good", "easy",
    )
