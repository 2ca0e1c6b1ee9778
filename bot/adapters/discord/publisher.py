"""Posting with the bot token: daily questions, reveals, round standings and `/run` results.

Late results never use an interaction token (it expires after 15 minutes); they go into a
thread started from the question or acknowledgement message, via the bot's own credentials.
Posts that must appear once carry a ``nonce`` with ``enforce_nonce`` (Discord drops a repeat
within minutes), and a retry first looks for the post's buttons in the channel's history.
Nothing we send pings anyone but the member a message names.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import discord

from bot.adapters.discord.render import render_message
from bot.core.model.actions import BadActionError, decode
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message
from bot.core.play.delivery import Delivery, LookupUnavailableError

THREAD_EXISTS = 160004  # Discord error code: "A thread has already been created for this message"
THREAD_ARCHIVE_MINUTES = 1440
THREAD_NAME_LIMIT = 100
KNOWN_THREADS_CAP = 10_000
HISTORY_LOOKUP_LIMIT = 500  # messages read after the post's creation when looking for it
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


def mentions_of(message: Message) -> discord.AllowedMentions:
    """No @everyone, roles or replies; only the member the message names, if any."""
    users = [discord.Object(int(message.mention))] if message.mention and message.mention.isdigit() else False
    return discord.AllowedMentions(everyone=False, roles=False, users=users, replied_user=False)


def carries(found: discord.Message, delivery: Delivery) -> bool:
    """Our post: the nonce we sent, or buttons whose custom_ids name the post."""
    if found.nonce is not None and str(found.nonce) == delivery.key:
        return True
    for row in found.components:
        for item in getattr(row, "children", []):
            try:
                if delivery.named_by(decode(getattr(item, "custom_id", None) or "")):
                    return True
            except BadActionError:
                continue
    return False


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
        sent = await self._channel(channel_id, where).send(
            **render_message(message).send_kwargs(), allowed_mentions=mentions_of(message)
        )
        return make_ref(channel_id, sent.id)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        channel_id = int(where.channel_id)
        sent = await self._channel(channel_id, where).send(
            **render_message(message).send_kwargs(), nonce=delivery.key,
            allowed_mentions=mentions_of(message),
        )
        return make_ref(channel_id, sent.id)

    async def permalink(self, where: Where, ref: str) -> str | None:
        channel, message = parse_ref(ref)
        return f"https://discord.com/channels/{where.workspace}/{channel}/{message}"

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        channel_id = int(where.channel_id)
        me = self.client.user.id if self.client.user else None
        history = self._channel(channel_id, where).history(
            after=delivery.since, limit=HISTORY_LOOKUP_LIMIT, oldest_first=True
        )
        try:
            async for found in history:
                if (me is None or found.author.id == me) and carries(found, delivery):
                    return make_ref(channel_id, found.id)
        except discord.Forbidden as exc:
            raise LookupUnavailableError(
                f"Discord refused to read the channel history ({exc.text or exc.status}); "
                "grant the bot Read Message History"
            ) from exc
        return None

    async def tell(self, who: Who, message: Message) -> bool:
        """A direct message from the bot (members may close their DMs: then it raises)."""
        channel = await self.client.create_dm(discord.Object(int(who.user_id)))
        await channel.send(**render_message(message).send_kwargs(), allowed_mentions=mentions_of(message))
        return True

    async def update(self, where: Where, ref: str, message: Message) -> None:
        channel_id, message_id = parse_ref(ref)
        partial = self._channel(channel_id, where).get_partial_message(message_id)
        await partial.edit(**render_message(message).edit_kwargs(), allowed_mentions=mentions_of(message))

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
