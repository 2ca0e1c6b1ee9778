"""The terminal: prints messages, reads lines, and knows which buttons are on screen.

Reading happens in a daemon thread (``input`` keeps readline editing and works on pipes),
so the event loop keeps publishing reveals and `/run` results while the prompt waits, and
quitting never waits for a blocked read.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading

from rich.console import Console, RenderableType
from rich.text import Text

from bot.adapters.console.render import Key, keys_for, render_message
from bot.core.domain.messages import Message

PROMPT = "play> "


class _Wanted:
    """The reader waiting for the line the input thread is reading now. A reader that gave
    up (a paste cancelled with Ctrl-C) hands it to the next one: the line typed next is
    never lost to a reader that is gone."""

    def __init__(self, future: asyncio.Future[str | None]) -> None:
        self.future = future


class LineReader:
    """``await read(prompt)`` returns the next line, or None at end of input (Ctrl-D)."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[str, asyncio.AbstractEventLoop, _Wanted]]
        self._requests = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._serving: _Wanted | None = None  # the request the input thread has not answered yet
        self.waiting_prompt: str | None = None

    def _serve(self) -> None:
        while True:
            prompt, loop, wanted = self._requests.get()
            try:
                line: str | None = input(prompt)
            except EOFError:
                line = None
            except Exception as exc:  # e.g. stdin closed under us: report, never hang
                loop.call_soon_threadsafe(self._answer, wanted, None, exc)
                continue
            loop.call_soon_threadsafe(self._answer, wanted, line, None)

    def _answer(self, wanted: _Wanted, line: str | None, error: Exception | None) -> None:
        if self._serving is wanted:
            self._serving = None
        if error is not None:
            _settle_error(wanted.future, error)
        else:
            _settle(wanted.future, line)

    async def read(self, prompt: str) -> str | None:
        if self._thread is None:
            enable_line_editing()
            self._thread = threading.Thread(target=self._serve, name="console-input", daemon=True)
            self._thread.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        orphan = self._serving
        if orphan is not None and orphan.future.done():  # its reader gave up: take its line
            orphan.future = future
            sys.stdout.write(prompt)  # input() showed the old reader's prompt
            sys.stdout.flush()
        else:
            self._serving = _Wanted(future)
            self._requests.put((prompt, loop, self._serving))
        self.waiting_prompt = prompt
        try:
            return await future
        finally:
            self.waiting_prompt = None


def enable_line_editing() -> None:
    """Arrow keys and history for ``input`` in a real terminal (not needed for pipes)."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (importing it is what enables it)


def _settle(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)


def _settle_error(future: asyncio.Future[str | None], exc: Exception) -> None:
    if not future.done():
        future.set_exception(exc)


class Screen:
    def __init__(self, console: Console | None = None, reader: LineReader | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.reader = reader or LineReader()
        self.keys: list[Key] = []  # the buttons of the latest message that had any
        self.keys_private = False  # ... and whether that message was the member's own (a quiz)

    def show(self, message: Message, *, public: bool, context: str | None = None) -> None:
        if any(not b.disabled for b in message.buttons):
            self.keys = keys_for(message.buttons)
            self.keys_private = not public
        self.print(render_message(message, public=public, context=context))

    def print(self, renderable: RenderableType) -> None:
        """Print; output that arrives while the prompt waits goes below it, then re-prompts."""
        waiting = self.reader.waiting_prompt
        if waiting is not None:
            self.console.file.write("\n")
        self.console.print(renderable)
        if waiting is not None:
            self.console.file.write(waiting)
            self.console.file.flush()

    def say(self, text: str, style: str = "") -> None:
        self.print(Text(text, style=style))

    def key(self, typed: str) -> Key | None:
        word = typed.strip().lower()
        for key in self.keys:
            if (key.word and key.word == word) or str(key.number) == word:
                return key
        return None

    async def read(self, prompt: str = PROMPT) -> str | None:
        return await self.reader.read(prompt)
