"""Posting with the bot token: daily questions, reveals, round standings and `/run` results.

Late results never use an interaction token (it expires after 15 minutes); they go into a
thread started from the question or acknowledgement message, via the bot's own credentials.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import discord

from bot.adapters.discord.render import render_message
from bot.core.identity import Where
from bot.core.messages import Message

THREAD_EXISTS = 160004  # Discord error code: "A thread has already been created for this message"
THREAD_ARCHIVE_MINUTES = 1440
THREAD_NAME_LIMIT = 100
KNOWN_THREADS_CAP = 10_000
_MENTION = re.compile(r"<[@#][!&]?\d+>")


class BadRefError(ValueError):
    pass


def make_ref(channel_id: int, message_id: int) -> str:
    return f"{channel_id}:{message_id}"


def parse_ref(ref: str) -> tuple[int, int]:
    """A ref is ``"<channel id>:<message id>"``, as returned by ``publish``."""
    channel, _, message = ref.partition(":")
    if not (channel.isdigit() and message.isdigit()):
        raise BadRefError(f"not a Discord message ref: {ref!r}")
    return int(channel), int(message)


def thread_name(message: Message) -> str:
    title = _MENTION.sub("", message.title or "").strip(" —-") or "torchdrill"
    return title[:THREAD_NAME_LIMIT]


class DiscordPublisher:
    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self._threads: OrderedDict[int, None] = OrderedDict()  # starter ids known to have a thread

    def _channel(self, channel_id: int, where: Where) -> discord.PartialMessageable:
        guild_id = int(where.workspace) if where.workspace.isdigit() else None
        return self.client.get_partial_messageable(channel_id, guild_id=guild_id)

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        channel_id = int(where.channel_id)
        if thread_of:
            channel_id = await self.thread_for(thread_of, thread_name(message))
        sent = await self._channel(channel_id, where).send(**render_message(message).send_kwargs())
        return make_ref(channel_id, sent.id)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        channel_id, message_id = parse_ref(ref)
        partial = self._channel(channel_id, where).get_partial_message(message_id)
        await partial.edit(**render_message(message).edit_kwargs())

    async def thread_for(self, ref: str, name: str) -> int:
        """Create (or reuse) the thread of message ``ref``; its id equals the starter message id."""
        channel_id, message_id = parse_ref(ref)
        if message_id in self._threads:
            return message_id
        try:
            await self.client.http.start_thread_with_message(
                channel_id, message_id, name=name, auto_archive_duration=THREAD_ARCHIVE_MINUTES
            )
        except discord.HTTPException as exc:
            if exc.code != THREAD_EXISTS:
                raise
        self._threads[message_id] = None
        if len(self._threads) > KNOWN_THREADS_CAP:
            self._threads.popitem(last=False)
        return message_id
