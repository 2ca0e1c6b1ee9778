"""Posting with the bot token: daily questions, reveals, round standings and `/run` results.

A ref is ``"<channel>:<ts>"``, or ``"<channel>:<ts>:<thread root ts>"`` for a message posted
inside a thread, because Slack threads are one level deep: replying "in the thread of" a reply
means replying to its root.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import render
from bot.core.identity import Where
from bot.core.messages import Message

_TS_CHARS = set("0123456789.")


class BadRefError(ValueError):
    pass


@dataclass(frozen=True)
class Ref:
    channel: str
    ts: str
    thread_ts: str | None = None

    @property
    def root(self) -> str:
        """The ts a reply "in this message's thread" must name."""
        return self.thread_ts or self.ts

    def __str__(self) -> str:
        return ":".join(p for p in (self.channel, self.ts, self.thread_ts) if p)


def parse_ref(ref: str) -> Ref:
    parts = ref.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not all(
        p and set(p) <= _TS_CHARS for p in parts[1:]
    ):
        raise BadRefError(f"not a Slack message ref: {ref!r}")
    return Ref(parts[0], parts[1], parts[2] if len(parts) == 3 else None)


class SlackPublisher:
    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        thread_ts = parse_ref(thread_of).root if thread_of else None
        channel = parse_ref(thread_of).channel if thread_of else where.channel_id
        sent = await self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, unfurl_links=False, **render(message)
        )
        ref = Ref(str(sent["channel"]), str(sent["ts"]), thread_ts)
        if message.attachments:
            await self.upload(ref, message)
        return str(ref)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        """chat.update replaces text and blocks, so a message without buttons loses them."""
        parsed = parse_ref(ref)
        await self.client.chat_update(channel=parsed.channel, ts=parsed.ts, **render(message))

    async def upload(self, ref: Ref, message: Message) -> None:
        """Full outputs go next to the message (same thread) as files."""
        await self.client.files_upload_v2(
            channel=ref.channel,
            thread_ts=ref.root if ref.thread_ts else None,
            file_uploads=[{"content": a.content, "filename": a.filename, "title": a.filename,
                           **({"alt_txt": a.description} if a.description else {})}
                          for a in message.attachments],
        )
