"""Fenced claims: who may post a thing that must appear once, and for how long.

A post first wins a claim row unique on its natural key (a channel's local day, a channel's
week and kind). The owner is named by a fencing token ``"<attempt>@<process>"``; it renews its
lease while publishing and records the send only while its token still holds. A process that
takes over an unsent claim whose lease expired increments the attempt, which fences the old
owner out. The rows live behind ``ClaimStore`` (implemented in bot.storage.claims): this module
is the vocabulary and the rules, with no storage of its own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol, TypeVar

# An unsent claim not renewed for this long is taken over. Longer than any retry schedule:
# the owner renews every RENEW_EVERY_S and gives a publish at most PUBLISH_DEADLINE_S.
CLAIM_LEASE = timedelta(minutes=5)
RENEW_EVERY_S = 30.0
PUBLISH_DEADLINE_S = 180.0
LOOKBACK_MARGIN = timedelta(minutes=2)  # clock skew between us and the platform
INSTANCE_ID = f"{uuid.uuid4().hex[:12]}"

N = TypeVar("N", contravariant=True)  # the natural key a claim is won on
K = TypeVar("K")  # the key a won claim is found by afterwards


def token_for(attempt: int) -> str:
    return f"{attempt}@{INSTANCE_ID}"


def attempt_of(token: str) -> int:
    head = token.partition("@")[0]
    return int(head) if head.isdigit() else 1


def next_token(holder: str) -> str:
    """The token that takes a claim over from ``holder``: one attempt later, this process."""
    return token_for(attempt_of(holder) + 1)


def expired(claimed_at: datetime, now: datetime, lease: timedelta) -> bool:
    """A lease exactly one lease old is expired (taken over), a second earlier it is not."""
    return claimed_at <= now - lease


@dataclass(frozen=True)
class ClaimState:
    """A claim row as the algorithm reads it."""

    holder: str
    claimed_at: datetime  # UTC-aware
    sent_at: datetime | None
    ref: str | None  # the message the send recorded


class ClaimLostError(RuntimeError):
    """The claim was taken over while we were sending."""


class Outcome(StrEnum):
    POSTED = "posted"
    FOUND = "found"  # an earlier attempt's message was in the channel: recorded, not re-sent
    UNCHECKABLE = "uncheckable"  # a retry that could not look in the channel: not re-sent
    LOST = "lost"  # another process holds the claim now


@dataclass(frozen=True)
class Sent:
    outcome: Outcome
    post_id: int | None  # what the policy names the post by (a post id, a weekly claim id)


class ClaimStore(Protocol[N, K]):
    """The claim rows of one kind of post (daily claims, weekly claims)."""

    async def insert(self, natural: N, token: str, now: datetime) -> K | None:
        """Win the claim on ``natural`` (its key), or None when a claim exists already."""
        ...

    async def get(self, key: K) -> ClaimState | None: ...

    async def take_over(self, key: K, holder: str, token: str, now: datetime) -> bool:
        """Replace ``holder`` by ``token`` with a fresh lease, if the claim is still unsent and
        held by ``holder``."""
        ...

    async def renew(self, key: K, token: str, now: datetime) -> bool: ...

    async def release(self, key: K, token: str, claimed_at: datetime) -> None:
        """Move our lease back (to expire it at once), if we still hold it."""
        ...

    async def record_sent(self, key: K, token: str, now: datetime, ref: str) -> bool:
        """Mark the claim sent as ``ref`` if still held (unsent) under ``token``."""
        ...

    async def stale(self, before: datetime) -> list[K]:
        """Unsent claims whose lease was last renewed at or before ``before``."""
        ...
