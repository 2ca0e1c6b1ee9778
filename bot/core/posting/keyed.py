"""Posts that must reach a channel exactly once: a key per post, and a look before re-sending.

A sender that dies (or times out) after the platform accepted a post cannot know whether it
landed. So a post that must not repeat is sent tagged with an idempotency key derived from its
claim (Discord: ``nonce`` with ``enforce_nonce``; Slack: message ``metadata``), and before any
re-send the channel is searched for that key. An adapter offers this by implementing
``publish_once`` and ``find_sent`` (``OncePublisher`` in bot.core.publisher, where
each capability is a Protocol); ``LookupUnavailableError`` means it cannot tell (e.g. a
missing Slack history scope), and then the caller must not send again.

A claim's owner passes ``fence``: awaited right before the platform call, it raises when the
claim was taken over meanwhile, so a fenced-out owner does not send at all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.core.domain.identity import Where
from bot.core.domain.messages import Message
from bot.core.publisher import (
    KEY_PREFIX,
    WEEKLY_PREFIX,
    DeletePublisher,
    Delivery,
    KeyedPublisher,
    LookupUnavailableError,
    OncePublisher,
    Publisher,
    SentFinder,
)

log = logging.getLogger(__name__)

__all__ = ["KEY_PREFIX", "WEEKLY_PREFIX", "Delivery", "LookupUnavailableError", "OncePublisher",
           "find_sent", "publish_once", "remove", "send_or_find"]


async def publish_once(publisher: Publisher, where: Where, message: Message, delivery: Delivery) -> str:
    """Keyed send where the publisher supports it; a plain publish otherwise (tests)."""
    if isinstance(publisher, KeyedPublisher):
        return await publisher.publish_once(where, message, delivery)
    return await publisher.publish(where, message, thread_of=delivery.thread_of)


async def send_or_find(
    publisher: Publisher, where: Where, message: Message, delivery: Delivery, *, retry: bool,
    fence: Callable[[], Awaitable[None]] | None = None,
) -> tuple[str, bool]:
    """(ref, found): a retry first looks in the channel and returns the post it finds there;
    otherwise the keyed send, after ``fence`` (which raises when the sender no longer holds the
    post's claim). Raises ``LookupUnavailableError`` when a retry cannot look, and then the
    caller must not send again."""
    if retry:
        found = await find_sent(publisher, where, delivery)
        if found is not None:
            return found, True
    if fence is not None:
        await fence()
    return await publish_once(publisher, where, message, delivery), False


async def remove(publisher: object, where: Where, ref: str) -> bool:
    """Delete our message ``ref`` (a second copy a fenced-out sender left); False when the
    publisher cannot delete or the platform refused."""
    if not isinstance(publisher, DeletePublisher):
        return False
    try:
        await publisher.delete(where, ref)
    except Exception:
        log.warning("could not delete message %s in channel %s", ref, where.channel_id, exc_info=True)
        return False
    return True


async def find_sent(publisher: object, where: Where, delivery: Delivery) -> str | None:
    """None when nothing is found, or when the publisher cannot look (one process, no peers)."""
    return await publisher.find_sent(where, delivery) if isinstance(publisher, SentFinder) else None
