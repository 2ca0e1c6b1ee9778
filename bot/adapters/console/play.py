"""The console playground: the bot in a terminal, no token needed.

A platform like the others: platform "console", workspace "local", one channel
"playground", and the member is the OS user (or ``--name``). Buttons become typed keys; every
decision (scores, who may answer, what is closed) is the core's.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from sqlalchemy.engine import make_url

from bot.adapters.console import commands
from bot.adapters.console.publisher import ConsolePublisher
from bot.adapters.console.screen import Screen
from bot.core.commands import replies
from bot.core.commands.dispatch import Caller
from bot.core.commands.grammar import OptionError
from bot.core.commands.help import playground_help, playground_unknown, topics_message
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big
from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, Upload

if TYPE_CHECKING:
    from bot.adapters.base import PlaygroundServices as App

log = logging.getLogger(__name__)

PLATFORM = "console"
WORKSPACE = "local"
CHANNEL = "playground"
WORDS = replies.Words(admins="the playground's player", prefix="")
RUN_END = "."
STOP = "stop"  # typed on a quiz question not answered yet: ends the quiz


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
        self.daily_post_id: int | None = None
        # the playground's own commands; every other command comes from the core's catalogue
        self.handlers: dict[str, Callable[[commands.Parsed], Awaitable[None]]] = {
            "today": self.today, "reveal": self.reveal, "topics": self.topics, "run": self.run,
            "submit": self.submit, "help": self.help,
        }

    @property
    def caller(self) -> Caller:
        """The local player owns the playground, so they are its admin."""
        return Caller(self.who, self.where, True, WORDS)

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
        """Rounds and the runner's start belong to the app, which closes them."""

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
            elif self.app.commands.command(parsed.name) is not None:
                pending = await self.app.commands.prepare_text(self.caller, parsed.name, parsed.rest,
                                                               open_file=read_upload)
                self.reply(await pending.finish())
            elif self.screen.key(parsed.name) is not None and not parsed.args:
                await self.press(parsed.name)
            elif parsed.name == STOP and not parsed.args and self.screen.keys_private and self.screen.keys:
                await self.stop_quiz()
            elif _looks_like_key(parsed.name) and not parsed.args:
                keys = [k.word or str(k.number) for k in self.screen.keys]
                self.reply(replies.no_such_key(parsed.name, keys))
            else:
                self.reply(playground_unknown(parsed.name))
        except Exception as exc:
            log.exception("console command %r failed", parsed.name)
            self.screen.say(f"{replies.SORRY} ({type(exc).__name__})", "red")
        return True

    def reply(self, message: Message) -> None:
        self.screen.show(message, public=not message.ephemeral)
        for path in self.publisher.save_attachments(message, self.publisher.last_ref or "reply:0"):
            self.screen.say(f"  saved {path}", "dim")

    # ---- buttons -------------------------------------------------------------------------
    async def press(self, typed: str) -> None:
        key = self.screen.key(typed)
        assert key is not None
        outcome = await self.app.commands.press(self.who, key.button.action_id)
        self.reply(outcome.reply)
        if outcome.public is not None and outcome.platform_ref:
            await self.publisher.update(self.where, outcome.platform_ref, outcome.public)

    async def stop_quiz(self) -> None:
        """``stop`` on a quiz question not answered yet: the Stop button of that quiz."""
        post_id = decode(self.screen.keys[0].button.action_id).post_id
        outcome = await self.app.commands.press(self.who, Action(Verb.STOP, post_id).encode())
        self.screen.keys = []
        self.reply(outcome.reply)

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
        await self.show_question(found.post_id, found.platform_ref, found.closed)
        for post_id, ref, closed in reversed(await self.app.drill.extras_after(self.where, found.post_id)):
            await self.show_question(post_id, ref, closed)  # `daily now` extras, newest last

    async def show_question(self, post_id: int, ref: str | None, closed: bool) -> None:
        if closed:
            await self.show_reveal(post_id)
            return
        view = await self.app.drill.refresh_view(post_id)
        if ref:
            self.publisher.adopt(ref, view)
        self.screen.show(view, public=True)

    async def show_reveal(self, post_id: int) -> None:
        printed = self.publisher.count
        message = await self.app.drill.reveal_post(post_id, self.where, self.publisher)
        if self.publisher.count == printed:  # revealed earlier: the core published nothing new
            self.screen.show(message, public=True)

    async def reveal(self, parsed: commands.Parsed) -> None:
        """Reveal the newest open question: a `daily now` extra, else today's daily."""
        post_id = self.daily_post_id
        if post_id is None:
            found = await self.app.daily.todays_post(self.where)
            post_id = found.post_id if found else None
        if post_id is None:
            self.reply(replies.notice(replies.NO_DAILY_YET))
            return
        extras = await self.app.drill.extras_after(self.where, post_id)
        post_id = next((extra for extra, _ref, closed in extras if not closed), post_id)
        await self.show_reveal(post_id)

    async def help(self, parsed: commands.Parsed) -> None:
        self.reply(playground_help(WORDS))

    async def topics(self, parsed: commands.Parsed) -> None:
        self.reply(topics_message(self.app.commands.topic_choices("")))

    # ---- /run ----------------------------------------------------------------------------
    async def read_code(self, first: str) -> str | None:
        """Inline code runs at once; otherwise every pasted line, blank ones included, until a
        line holding just '.' or Ctrl-D. Ctrl-C cancels the paste (``PasteCancelledError``),
        not the playground."""
        if first.strip():
            return first
        self.screen.say(replies.PASTE_CODE, "dim")
        paste = asyncio.ensure_future(self._read_paste())
        with _sigint_cancels(paste):
            try:
                lines = await paste
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the playground itself is closing
                raise PasteCancelledError from None
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines) if lines else None

    async def _read_paste(self) -> list[str]:
        lines: list[str] = []
        while True:
            line = await self.screen.read("... ")
            if line is None or line.strip() == RUN_END:
                return lines
            if line.strip() or lines:  # blank lines before the code are not part of it
                lines.append(line)

    async def runner_ready(self) -> None:
        """The playground waits for a runner that is still starting instead of refusing."""
        starting = self.app.runner_task
        if starting is not None and not starting.done():
            self.screen.say(replies.RUNNER_WARMING, "dim")
            await asyncio.gather(starting, return_exceptions=True)

    async def run(self, parsed: commands.Parsed) -> None:
        await self.runner_ready()
        run = self.app.commands.command("run")
        if run is not None and run.takes_words(parsed.rest):  # `run cancel`
            self.reply(await (await self.app.commands.prepare_text(self.caller, "run", parsed.rest)).finish())
            return
        if self.app.commands.services.runner.desk() is None:
            self.reply(replies.notice(self.app.commands.services.runner.unavailable()))
            return
        try:
            code = await self.read_code(parsed.rest)
        except PasteCancelledError:
            self.reply(replies.notice(replies.PASTE_CANCELLED))
            return
        if code is None:
            self.reply(replies.notice(replies.NOTHING_TO_RUN))
            return
        private = await self.app.commands.run_code(self.caller, code, _ConsoleAck(self))
        if private is not None:
            self.reply(private)


    async def submit(self, parsed: commands.Parsed) -> None:
        """Your solution to the open /challenge, pasted like /run code; judged in the sandbox."""
        await self.runner_ready()
        try:
            code = await self.read_code(parsed.rest)
        except PasteCancelledError:
            self.reply(replies.notice(replies.PASTE_CANCELLED))
            return
        if code is None:
            self.reply(replies.notice(replies.NOTHING_TO_RUN))
            return
        private = await self.app.commands.submit_challenge(self.caller, code, _ConsoleAck(self))
        if private is not None:
            self.reply(private)


class PasteCancelledError(Exception):
    """Ctrl-C while pasting code: the paste is dropped, the playground goes on."""


@contextlib.contextmanager
def _sigint_cancels(task: asyncio.Future[list[str]]) -> Iterator[None]:
    """While pasting, Ctrl-C cancels ``task`` instead of ending the playground; the handler
    that was there before (asyncio.run's) is put back afterwards."""
    loop = asyncio.get_running_loop()
    before = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, before)


class _ConsoleAck:
    def __init__(self, console: ConsoleAdapter) -> None:
        self.console = console

    async def post(self, ack: Message) -> str | None:
        return await self.console.publisher.publish(self.console.where, ack)

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        self.console.screen.show(status, public=False)

    async def retract(self, ref: str) -> None:
        """What was printed stays on the terminal; the private refusal follows it."""


def _looks_like_key(word: str) -> bool:
    return (len(word) == 1 and word.isalnum()) or word in (
        "show", "next", "stop", "again", "hard", "good", "easy",
    )


def read_upload(typed: str) -> Upload:
    """A file option in the playground is a path on this machine (``bank upload my.yaml``)."""
    path = Path(typed).expanduser()
    try:
        size = path.stat().st_size
        if size > MAX_UPLOAD_BYTES:
            raise OptionError(too_big(size))
        return Upload(path.name, path.read_bytes())
    except OSError as exc:
        raise OptionError(f"cannot read {typed}: {exc.strerror or exc}") from None
