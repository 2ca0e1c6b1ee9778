"""The one posting mechanism: claim, send once under a fenced lease, recover, take over.

Policies (the daily question, the weekly challenge, the weekly digest, the weekly closing
summary) say what to post for a claim and how to name it in the log; ``Poster`` does the rest,
the same way for all of them:

- ``claim`` wins the claim row; ``take_over`` takes an unsent claim whose lease expired, with a
  new fencing token.
- ``send`` asks the policy to prepare the post (under the claim's fence: a post an earlier
  attempt prepared is reused, and then the send is a retry), then publishes it while renewing the
  lease, bounded by a deadline. A retry first looks in the channel for the post's idempotency
  key (an earlier attempt may have got through), and nothing is sent when it cannot look. Right
  before the platform call the fence is checked again, so an owner that stalled past its lease
  does not send at all. The send is recorded only under our token.
- Two copies can still land: an owner that passed its fence check, stalled inside the platform
  call past its lease, while a new owner looked (nothing yet), sent, recorded. Discord drops the
  second copy by its nonce; Slack has no idempotency key, so the copies are cleaned up by whoever
  learns of both: the fenced owner, when the claim's record names another message, deletes its
  own; the new owner, after recording a fresh send of a retry, looks once more for another
  message carrying the key and deletes it. The channel shows one.
- A send that fails expires its own lease at once, so the next sweep (``stale``) retries it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from bot.core.domain.identity import Where
from bot.core.domain.messages import Message
from bot.core.posting.claims import (
    CLAIM_LEASE,
    PUBLISH_DEADLINE_S,
    RENEW_EVERY_S,
    ClaimLostError,
    ClaimStore,
    Outcome,
    Sent,
    expired,
    next_token,
    token_for,
)
from bot.core.posting.keyed import find_sent, remove, send_or_find
from bot.core.publisher import Delivery, LookupUnavailableError, Publisher

K = TypeVar("K")
K_co = TypeVar("K_co", covariant=True)
N = TypeVar("N")
T = TypeVar("T")


class Holding(Protocol[K_co]):
    """A claim we hold: its key and our token."""

    @property
    def key(self) -> K_co: ...

    @property
    def token(self) -> str: ...


@dataclass(frozen=True)
class Prepared:
    """What to send for a claim, as its policy prepared it under the claim's fence."""

    id: int  # what the policy names the post by (the log's and ``Sent``'s id)
    where: Where
    message: Message
    delivery: Delivery
    retry: bool  # an earlier attempt prepared it: it may be in the channel already


@dataclass(frozen=True)
class Lost:
    """The claim is not ours (taken over, or sent already)."""

    id: int | None = None


@dataclass(frozen=True)
class Words:
    """How a policy names its posts in the log (``{id}``, ``{key}``, ``{channel}``, ``{why}``)."""

    log: logging.Logger
    lost_while_sending: str
    taken_after_send: str
    cannot_check: str
    found: str


class PosterSetting(Generic[T]):
    """A service's timing that lives on its ``poster`` (tests shorten leases and deadlines)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, service: Any, owner: type | None = None) -> T:
        if service is None:
            raise AttributeError(f"{self.name} is a setting of each instance's poster")
        value: T = getattr(service.poster, self.name)
        return value

    def __set__(self, service: Any, value: T) -> None:
        setattr(service.poster, self.name, value)


class Poster(Generic[N, K]):
    """Claims and keyed sends over one ``ClaimStore``; timings are per instance (tests)."""

    def __init__(self, store: ClaimStore[N, K], now: Callable[[], datetime], words: Words) -> None:
        self.store = store
        self.now = now
        self.words = words
        self.lease: timedelta = CLAIM_LEASE
        self.renew_every_s = RENEW_EVERY_S
        self.publish_deadline_s = PUBLISH_DEADLINE_S

    # ---- claims --------------------------------------------------------------------------
    async def claim(self, natural: N) -> tuple[K, str] | None:
        """Win the claim on ``natural``: (key, our token), or None when it exists already."""
        token = token_for(1)
        key = await self.store.insert(natural, token, self.now())
        return None if key is None else (key, token)

    async def take_over(self, key: K) -> str | None:
        """Take an unsent claim whose lease expired; the new token fences the old owner out."""
        now = self.now()
        state = await self.store.get(key)
        if state is None or state.sent_at is not None or not expired(state.claimed_at, now, self.lease):
            return None
        token = next_token(state.holder)
        return token if await self.store.take_over(key, state.holder, token, now) else None

    async def stale(self) -> list[K]:
        """Every unsent claim whose lease expired (its owner died, or its send failed)."""
        return await self.store.stale(self.now() - self.lease)

    async def holds(self, key: K, token: str) -> bool:
        """The claim is unsent and still ours."""
        state = await self.store.get(key)
        return state is not None and state.holder == token and state.sent_at is None

    # ---- the send ------------------------------------------------------------------------
    async def send(self, held: Holding[K], prepared: Prepared | Lost, publisher: Publisher) -> Sent:
        """Publish ``prepared`` once under ``held``'s fence and record it (see the module)."""
        if isinstance(prepared, Lost):
            return Sent(Outcome.LOST, prepared.id)
        try:
            delivered = await self._holding(held, self._deliver(held, prepared, publisher))
        except ClaimLostError:
            self._say(logging.WARNING, self.words.lost_while_sending, prepared)
            return Sent(Outcome.LOST, prepared.id)
        except Exception:
            await self.store.release(held.key, held.token, self.now() - self.lease)
            raise
        if delivered is None:
            return Sent(Outcome.UNCHECKABLE, prepared.id)
        ref, outcome = delivered
        if not await self.store.record_sent(held.key, held.token, self.now(), ref):
            self._say(logging.WARNING, self.words.taken_after_send, prepared)
            await self._drop_our_copy(held, prepared, ref, publisher)
            return Sent(Outcome.LOST, prepared.id)
        if outcome is Outcome.POSTED and prepared.retry:
            await self._drop_stray_copy(prepared, ref, publisher)
        return Sent(outcome, prepared.id)

    async def _deliver(self, held: Holding[K], prepared: Prepared,
                       publisher: Publisher) -> tuple[str, Outcome] | None:
        """(ref, POSTED or FOUND); None when a retry cannot check the channel (never re-sent)."""

        async def fence() -> None:
            if not await self.holds(held.key, held.token):
                raise ClaimLostError(held.key)

        try:
            ref, found = await send_or_find(publisher, prepared.where, prepared.message,
                                            prepared.delivery, retry=prepared.retry, fence=fence)
        except LookupUnavailableError as exc:
            self._say(logging.ERROR, self.words.cannot_check, prepared, why=str(exc))
            return None
        if found:
            self._say(logging.INFO, self.words.found, prepared)
            return ref, Outcome.FOUND
        return ref, Outcome.POSTED

    async def _holding(self, held: Holding[K], work: Awaitable[T]) -> T:
        """Await ``work`` while renewing the lease; give up if the claim is lost or the deadline
        passes (the publish is then cancelled: whoever retries looks in the channel first)."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(work)
        deadline = loop.time() + self.publish_deadline_s
        try:
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError(f"no answer from the platform within {self.publish_deadline_s:.0f} s")
                done, _ = await asyncio.wait({task}, timeout=min(self.renew_every_s, left))
                if done:
                    return task.result()
                if not await self.store.renew(held.key, held.token, self.now()):
                    raise ClaimLostError(held.key)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _drop_our_copy(self, held: Holding[K], prepared: Prepared, ours: str,
                             publisher: Publisher) -> None:
        """We sent after a takeover: when the new owner recorded another message, ours is a
        second copy (Slack has no nonce to drop it), so we delete it."""
        state = await self.store.get(held.key)
        if state is None or state.sent_at is None or state.ref is None or state.ref == ours:
            return  # not recorded yet (its owner deletes a stray copy after recording) or ours
        if await remove(publisher, prepared.where, ours):
            self.words.log.warning("deleted our second copy %s of %s in channel %s (the new owner "
                                   "posted %s)", ours, prepared.delivery.key,
                                   prepared.where.channel_id, state.ref)

    async def _drop_stray_copy(self, prepared: Prepared, recorded: str, publisher: Publisher) -> None:
        """After a retry's fresh send is recorded: a fenced-out owner's send may have landed
        after our look. Look once more, skipping ours, and delete what carries the same key."""
        try:
            stray = await find_sent(publisher, prepared.where, replace(prepared.delivery, besides=recorded))
        except Exception as exc:  # the post is out and recorded; a failed look costs nothing more
            self.words.log.info("could not look for a second copy of %s: %s", prepared.delivery.key, exc)
            return
        if stray is not None and stray != recorded and await remove(publisher, prepared.where, stray):
            self.words.log.warning("deleted a second copy %s of %s in channel %s (a fenced-out "
                                   "sender's)", stray, prepared.delivery.key, prepared.where.channel_id)

    def _say(self, level: int, template: str, prepared: Prepared, why: str = "") -> None:
        self.words.log.log(level, template.format(id=prepared.id, key=prepared.delivery.key,
                                                  channel=prepared.where.channel_id, why=why))
