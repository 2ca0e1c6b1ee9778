"""Posting with the bot token: daily questions, reveals, round standings and `/run` results.

A ref is ``"<channel>:<ts>"``, or ``"<channel>:<ts>:<thread root ts>"`` for a message posted
inside a thread, because Slack threads are one level deep: replying "in the thread of" a reply
means replying to its root.

Posts that must appear once carry message ``metadata`` naming the post; Slack has no
idempotent send, so a failed or timed-out send is retried only after ``conversations.history``
shows no such message (a missing history scope stops the retry: never a second post). A keyed
post into a thread (a weekly closing summary) is looked for with ``conversations.replies``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import render
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.publisher import ChatPublisher, Delivery, LookupUnavailableError

log = logging.getLogger(__name__)

_TS_CHARS = set("0123456789.")
METADATA_EVENT = "torchdrill_post"
ONCE_BACKOFF_S = (0.5, 1.0, 2.0)  # waits before re-checking and re-sending a keyed post
HISTORY_PAGES = 5
HISTORY_PAGE = 200
SCOPE_ERRORS = {"missing_scope", "not_allowed_token_type", "no_permission"}


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


def slack_ts(when: datetime) -> str:
    return f"{when.timestamp():.6f}"


def _transient(exc: Exception) -> bool:
    """Worth a retry: Slack's 5xx, timeouts and dropped connections."""
    if isinstance(exc, SlackApiError):
        return exc.response.status_code >= 500
    return isinstance(exc, (TimeoutError, aiohttp.ClientError))


class SlackPublisher(ChatPublisher):
    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        # keyed posts must not be re-sent blindly: only 429s (never accepted) retry by themselves
        self.once_client = AsyncWebClient(
            token=client.token, base_url=client.base_url, timeout=client.timeout,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
        )

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

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        metadata = {"event_type": METADATA_EVENT,
                    "event_payload": {"post_id": delivery.post_id, "key": delivery.key}}
        root = parse_ref(delivery.thread_of) if delivery.thread_of else None
        channel = root.channel if root else where.channel_id
        for attempt, wait in enumerate((*ONCE_BACKOFF_S, None)):
            try:
                sent = await self.once_client.chat_postMessage(
                    channel=channel, thread_ts=root.root if root else None, unfurl_links=False,
                    metadata=metadata, **render(message)
                )
                break
            except Exception as exc:
                if wait is None or not _transient(exc):
                    raise
                log.warning("posting %s failed (%s), try %d; checking the channel before retrying",
                            delivery.key, _describe(exc), attempt + 1)
                await asyncio.sleep(wait)
                found = await self.find_sent(where, delivery)  # no history scope: raises, no resend
                if found is not None:
                    return found
        ref = Ref(str(sent["channel"]), str(sent["ts"]), root.root if root else None)
        if message.attachments:
            await self.upload(ref, message)
        return str(ref)

    async def permalink(self, where: Where, ref: str) -> str | None:
        parsed = parse_ref(ref)
        found = await self.client.chat_getPermalink(channel=parsed.channel, message_ts=parsed.ts)
        return str(found["permalink"]) if found.get("permalink") else None

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        """In the channel's history, or the thread's replies for a post into a thread;
        ``delivery.besides`` is skipped."""
        root = parse_ref(delivery.thread_of) if delivery.thread_of else None
        channel = root.channel if root else where.channel_id
        cursor: str | None = None
        for _ in range(HISTORY_PAGES):
            try:
                if root is not None:
                    page = await self.client.conversations_replies(
                        channel=channel, ts=root.root, oldest=slack_ts(delivery.since),
                        limit=HISTORY_PAGE, include_all_metadata=True, cursor=cursor,
                    )
                else:
                    page = await self.client.conversations_history(
                        channel=channel, oldest=slack_ts(delivery.since), limit=HISTORY_PAGE,
                        include_all_metadata=True, cursor=cursor,
                    )
            except SlackApiError as exc:
                error = exc.response.get("error")
                if error in SCOPE_ERRORS:
                    needed = exc.response.get("needed") or "channels:history / groups:history"
                    raise LookupUnavailableError(
                        f"Slack refused conversations.history ({error}); add the {needed} scope"
                    ) from exc
                raise
            for found in page.get("messages") or []:
                ref = str(Ref(channel, str(found["ts"]), root.root if root else None))
                if ref != delivery.besides and _names(found.get("metadata"), delivery):
                    return ref
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return None
        return None

    async def tell(self, who: Who, message: Message) -> bool:
        """A direct message: posting to a user id lands in their DM with the app."""
        await self.client.chat_postMessage(channel=who.user_id, unfurl_links=False, **render(message))
        return True

    async def update(self, where: Where, ref: str, message: Message) -> None:
        """chat.update replaces text and blocks, so a message without buttons loses them."""
        parsed = parse_ref(ref)
        await self.client.chat_update(channel=parsed.channel, ts=parsed.ts, **render(message))

    async def delete(self, where: Where, ref: str) -> None:
        parsed = parse_ref(ref)
        await self.client.chat_delete(channel=parsed.channel, ts=parsed.ts)

    async def upload(self, ref: Ref, message: Message) -> None:
        """Full outputs go next to the message (same thread) as files."""
        await self.upload_to(ref.channel, message, thread_ts=ref.root if ref.thread_ts else None)

    async def upload_to(self, channel: str, message: Message, *, thread_ts: str | None = None) -> None:
        """The message's attachments as files in ``channel`` (a thread when ``thread_ts``)."""
        await self.client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file_uploads=[{"content": a.content, "filename": a.filename, "title": a.filename,
                           **({"alt_txt": a.description} if a.description else {})}
                          for a in message.attachments],
        )


def _names(metadata: Any, delivery: Delivery) -> bool:
    if not isinstance(metadata, dict) or metadata.get("event_type") != METADATA_EVENT:
        return False
    payload = metadata.get("event_payload") or {}
    if payload.get("key") is not None:
        return str(payload["key"]) == delivery.key
    return delivery.is_question and str(payload.get("post_id")) == str(delivery.post_id)


def _describe(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return f"HTTP {exc.response.status_code} {exc.response.get('error')}"
    return type(exc).__name__
