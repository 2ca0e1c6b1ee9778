"""The console's Publisher: channel posts, reveals, thread replies and `/run` results print
to the terminal. Refs are per-session unique so a post from an earlier session is never
mistaken for one on screen now; attachments are saved as files next to the database.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from bot.adapters.console.render import compact_update
from bot.adapters.console.screen import Screen
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.publisher import ChatPublisher, Delivery

REFS_KEPT = 500


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip("._") or "file"


class ConsolePublisher(ChatPublisher):
    def __init__(self, screen: Screen, files_dir: Path) -> None:
        self.screen = screen
        self.files_dir = files_dir
        self.session = uuid.uuid4().hex[:8]
        self.posted: dict[str, Message] = {}
        self.count = 0  # how many times anything was printed: lets callers avoid repeating it
        self.last_ref = ""
        self._next = 0

    def _new_ref(self) -> str:
        self._next += 1
        return f"console:{self.session}:{self._next}"

    def _remember(self, ref: str, message: Message) -> None:
        self.posted[ref] = message
        while len(self.posted) > REFS_KEPT:
            self.posted.pop(next(iter(self.posted)))

    def save_attachments(self, message: Message, ref: str) -> list[Path]:
        saved = []
        for attachment in message.attachments:
            self.files_dir.mkdir(parents=True, exist_ok=True)
            path = self.files_dir / f"{ref.rsplit(':', 1)[-1]}-{self.session}-{safe_name(attachment.filename)}"
            path.write_bytes(attachment.content)
            saved.append(path)
        return saved

    def context_of(self, thread_of: str) -> str:
        starter = self.posted.get(thread_of)
        title = starter.title if starter and starter.title else "an earlier message"
        return f"↳ thread of: {title}"

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        ref = self._new_ref()
        context = self.context_of(thread_of) if thread_of else None
        self.screen.show(message, public=True, context=context)
        for path in self.save_attachments(message, ref):
            self.screen.say(f"  saved {path}", "dim")
        self._remember(ref, message)
        self.count += 1
        self.last_ref = ref
        return ref

    async def update(self, where: Where, ref: str, message: Message) -> None:
        before = self.posted.get(ref)
        line = compact_update(before, message) if before is not None else None
        if line is not None:
            self.screen.print(line)
        else:
            self.screen.show(message, public=True, context="✎ updated")
        self._remember(ref, message)
        self.count += 1

    async def tell(self, who: Who, message: Message) -> bool:
        """A direct message: the playground has one member, so it is shown as such."""
        self.screen.show(message, public=False, context=f"✉ direct message to {who.display_name or who.user_id}")
        self.count += 1
        return True

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        """One terminal, one process: nothing can post it twice, so a plain print."""
        return await self.publish(where, message)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        """The screen has no history to search; a lone process never re-sends (no peers)."""
        return None

    async def permalink(self, where: Where, ref: str) -> str | None:
        return None  # a terminal has no links to messages

    async def delete(self, where: Where, ref: str) -> None:
        self.posted.pop(ref, None)
        self.screen.show(Message(title="(a duplicate message was removed)"), public=True, context="✂")
        self.count += 1

    def adopt(self, ref: str, message: Message) -> None:
        """Track a post from the database (shown again) so later updates print compactly."""
        self._remember(ref, message)
