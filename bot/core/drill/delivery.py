"""What the core does with a publisher's optional capabilities: a link to a message, a private
note to a member; and, from bot.core.posting.keyed, the keyed send (kept importable from here
for the modules and tests that import it from its old place)."""

from __future__ import annotations

import logging

from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.posting.keyed import (
    KEY_PREFIX,
    WEEKLY_PREFIX,
    Delivery,
    LookupUnavailableError,
    OncePublisher,
    find_sent,
    publish_once,
    remove,
    send_or_find,
)
from bot.core.publisher import LinkPublisher, PrivatePublisher

log = logging.getLogger(__name__)

__all__ = ["KEY_PREFIX", "WEEKLY_PREFIX", "Delivery", "LookupUnavailableError", "OncePublisher",
           "find_sent", "permalink", "publish_once", "remove", "send_or_find", "tell_privately"]


async def permalink(publisher: object, where: Where, ref: str) -> str | None:
    """A link members can open to message ``ref``, where the platform makes one (else None)."""
    if not isinstance(publisher, LinkPublisher):
        return None
    try:
        return await publisher.permalink(where, ref)
    except Exception:  # a missing link never costs the message that wanted it
        return None


async def tell_privately(publisher: object, who: Who, message: Message) -> bool:
    """A direct message to a member (e.g. the fate of their suggestion), where the platform
    can send one; False when it cannot or the member does not accept direct messages."""
    if not isinstance(publisher, PrivatePublisher):
        return False
    try:
        return bool(await publisher.tell(who, message))
    except Exception:  # the decision is recorded either way; the note is a courtesy
        log.warning("could not tell %s privately", who.user_id, exc_info=True)
        return False
