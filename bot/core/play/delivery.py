"""Posts that must reach a channel exactly once: a key per post, and a look before re-sending.

A sender that dies (or times out) after the platform accepted a post cannot know whether it
landed. So a post that must not repeat is sent tagged with an idempotency key derived from its
claim (Discord: ``nonce`` with ``enforce_nonce``; Slack: message ``metadata``), and before any
re-send the channel is searched for that key. An adapter offers this by implementing
``publish_once`` and ``find_sent``; ``LookupUnavailableError`` means it cannot tell (e.g. a
missing Slack history scope), and then the caller must not send again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.core.model.actions import Action, Verb
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message

log = logging.getLogger(__name__)

KEY_PREFIX = "tdpost"  # Discord nonces are at most 25 characters
WEEKLY_PREFIX = "tdweek"  # weekly posts: ``post_id`` is then the weekly claim's id


@dataclass(frozen=True)
class Delivery:
    """One post that must appear once; ``since`` bounds the search (the post's creation)."""

    post_id: int
    since: datetime
    prefix: str = KEY_PREFIX

    @property
    def key(self) -> str:
        return f"{self.prefix}{self.post_id}"

    @property
    def is_question(self) -> bool:
        """A question post (a weekly post's id is a weekly claim's, not a post's)."""
        return self.prefix == KEY_PREFIX

    def named_by(self, action: Action) -> bool:
        """A button of the message names this delivery (history shows no nonces)."""
        weekly_button = action.verb in (Verb.TAKE, Verb.PROGRESS)
        return action.post_id == self.post_id and weekly_button != self.is_question


class LookupUnavailableError(RuntimeError):
    """The platform cannot tell us whether the post is already in the channel."""


class OncePublisher(Protocol):
    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        """Post tagged with ``delivery.key`` (the platform drops a duplicate where it can)."""
        ...

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        """The ref of our message carrying ``delivery`` posted since ``delivery.since``."""
        ...


async def publish_once(publisher: object, where: Where, message: Message, delivery: Delivery) -> str:
    """Keyed send where the publisher supports it; a plain publish otherwise (console, tests)."""
    method = getattr(publisher, "publish_once", None)
    if method is None:
        return await publisher.publish(where, message)  # type: ignore[attr-defined,no-any-return]
    return await method(where, message, delivery)  # type: ignore[no-any-return]


async def send_or_find(
    publisher: object, where: Where, message: Message, delivery: Delivery, *, retry: bool
) -> tuple[str, bool]:
    """(ref, found): a retry first looks in the channel and returns the post it finds there;
    otherwise the keyed send. Raises ``LookupUnavailableError`` when a retry cannot look, and
    then the caller must not send again."""
    if retry:
        found = await find_sent(publisher, where, delivery)
        if found is not None:
            return found, True
    return await publish_once(publisher, where, message, delivery), False


async def permalink(publisher: object, where: Where, ref: str) -> str | None:
    """A link members can open to message ``ref``, where the platform makes one (else None)."""
    method = getattr(publisher, "permalink", None)
    if method is None:
        return None
    try:
        return await method(where, ref)  # type: ignore[no-any-return]
    except Exception:  # a missing link never costs the message that wanted it
        return None


async def find_sent(publisher: object, where: Where, delivery: Delivery) -> str | None:
    """None when nothing is found, or when the publisher cannot look (one process, no peers)."""
    method = getattr(publisher, "find_sent", None)
    return None if method is None else await method(where, delivery)  # type: ignore[no-any-return]


async def tell_privately(publisher: object, who: Who, message: Message) -> bool:
    """A direct message to a member (e.g. the fate of their suggestion), where the platform
    can send one; False when it cannot or the member does not accept direct messages."""
    method = getattr(publisher, "tell", None)
    if method is None:
        return False
    try:
        return bool(await method(who, message))
    except Exception:  # the decision is recorded either way; the note is a courtesy
        log.warning("could not tell %s privately", who.user_id, exc_info=True)
        return False
