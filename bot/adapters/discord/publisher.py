"""Posting with the bot token: daily questions, reveals, round standings and `/run` results.

Late results never use an interaction token (it expires after 15 minutes); they go into a
thread started from the question or acknowledgement message, via the bot's own credentials.
Posts that must appear once carry a ``nonce`` with ``enforce_nonce`` (Discord drops a repeat
within minutes), and a retry first looks for the post's buttons in the channel's history (a post
without buttons, like a closing summary in a thread, by its title: history shows no nonces).
Nothing we send pings anyone but the member a message names.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from typing import Literal

import discord

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.discord.render import TITLE_LIMIT, render_message
from bot.core.domain.actions import BadActionError, decode
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, truncate
from bot.core.progress import rewards
from bot.core.publisher import (
    ChatPublisher,
    Delivery,
    LookupUnavailableError,
    RoleRefusedError,
)
from bot.core.quizzes.personal import is_personal

THREAD_EXISTS = 160004  # Discord error code: "A thread has already been created for this message"
THREAD_ARCHIVE_MINUTES: Literal[1440] = 1440
THREAD_NAME_LIMIT = 100
KNOWN_THREADS_CAP = 10_000
HISTORY_LOOKUP_LIMIT = 500  # messages read after the post's creation when looking for it
_MENTION = re.compile(r"<[@#][!&]?\d+>")

log = logging.getLogger(__name__)


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
    """Our post: the nonce we sent, buttons whose custom_ids name the post, or its marker as
    the embed's title (a post without buttons)."""
    if found.nonce is not None and str(found.nonce) == delivery.key:
        return True
    if delivery.marker and any(embed.title == truncate(delivery.marker, TITLE_LIMIT, "…")[0]
                               for embed in found.embeds):
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


class DiscordPublisher(ChatPublisher):
    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self._threads: OrderedDict[int, None] = OrderedDict()  # starter ids known to have a thread

    def _channel(self, channel_id: int, where: Where) -> discord.PartialMessageable:
        guild_id = int(where.workspace) if where.workspace.isdigit() else None
        return self.client.get_partial_messageable(channel_id, guild_id=guild_id)

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        channel_id = int(where.channel_id)
        if thread_of and is_personal(where.workspace):  # a DM has no threads: it follows the ack
            channel_id = parse_ref(thread_of)[0]
        elif thread_of:
            channel_id = await self.thread_for(thread_of, thread_name(message))
        sent = await self._channel(channel_id, where).send(
            **render_message(message).send_kwargs(), allowed_mentions=mentions_of(message)
        )
        return make_ref(channel_id, sent.id)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        channel_id = int(where.channel_id)
        if delivery.thread_of:
            channel_id = await self.thread_for(delivery.thread_of, thread_name(message))
        sent = await self._channel(channel_id, where).send(
            **render_message(message).send_kwargs(), nonce=delivery.key,
            allowed_mentions=mentions_of(message),
        )
        return make_ref(channel_id, sent.id)

    async def permalink(self, where: Where, ref: str) -> str | None:
        channel, message = parse_ref(ref)
        return f"https://discord.com/channels/{where.workspace}/{channel}/{message}"

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        """In the channel, or in the thread of ``delivery.thread_of`` (its id is the starter
        message's); ``delivery.besides`` is skipped."""
        channel_id = parse_ref(delivery.thread_of)[1] if delivery.thread_of else int(where.channel_id)
        me = self.client.user.id if self.client.user else None
        history = self._channel(channel_id, where).history(
            after=delivery.since, limit=HISTORY_LOOKUP_LIMIT, oldest_first=True
        )
        try:
            async for found in history:
                ref = make_ref(channel_id, found.id)
                if (me is None or found.author.id == me) and ref != delivery.besides and carries(found, delivery):
                    return ref
        except discord.NotFound:
            if delivery.thread_of:
                return None  # no thread yet: nothing was posted in it
            raise
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

    async def set_role(self, where: Where, user_id: str, role_id: str, *, held: bool) -> None:
        """PUT/DELETE the member's role (idempotent on Discord's side)."""
        call = self.client.http.add_role if held else self.client.http.remove_role
        try:
            await call(int(where.workspace), int(user_id), int(role_id), reason="torchdrill streak reward")
        except discord.Forbidden as exc:
            raise RoleRefusedError("permissions") from exc
        except discord.NotFound as exc:  # 10011 Unknown Role; else the member left (10007)
            raise RoleRefusedError("unknown_role" if exc.code == 10011 else "unknown_member") from exc

    def has_roles(self, where: Where) -> bool:
        return where.workspace.isdigit()  # a guild; not a user-installed DM

    async def role_problem(self, where: Where, role_id: str) -> str | None:
        """Read the guild's roles and the bot's own member, then let the core say whether the
        bot may manage ``role_id`` (before any grant, so admins learn why, not Discord's 403)."""
        me = self.client.user
        if me is None:
            return None  # not connected yet: the grant itself reports a refusal
        guild = int(where.workspace)
        try:
            roles = await self.client.http.get_roles(guild)
            member = await self.client.http.get_member(guild, me.id)
        except discord.HTTPException:
            log.warning("could not read the guild's roles", extra={"guild": where.workspace})
            return None
        return rewards.problem_of(
            {str(r["id"]): (int(r["position"]), int(r["permissions"])) for r in roles},
            [str(r) for r in member.get("roles", [])], where.workspace, role_id)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        channel_id, message_id = parse_ref(ref)
        partial = self._channel(channel_id, where).get_partial_message(message_id)
        await partial.edit(**render_message(message).edit_kwargs(), allowed_mentions=mentions_of(message))

    async def delete(self, where: Where, ref: str) -> None:
        channel_id, message_id = parse_ref(ref)
        await self._channel(channel_id, where).get_partial_message(message_id).delete()

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


def adapter_publisher(client: discord.Client) -> CoalescingPublisher:
    """What the Discord adapter registers with the app: answer-count refreshes folded."""
    return CoalescingPublisher(DiscordPublisher(client))
