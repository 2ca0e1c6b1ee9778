"""The outbound ports: how the core posts into a chat, one Protocol per capability.

Every adapter's publisher, and every wrapper around one (routing by platform, coalescing
refreshes, one Slack workspace per team), declares ``ChatPublisher``: a wrapper that forgets to
forward a capability fails the type check instead of losing it silently at run time. Smaller
publishers (the console, tests) offer what they can; ``bot.core.drill.delivery`` says what the
core does without a capability.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message

KEY_PREFIX = "tdpost"  # Discord nonces are at most 25 characters
WEEKLY_PREFIX = "tdweek"  # weekly posts: ``post_id`` is then the weekly claim's id
GROUP_MOCK_PREFIX = "tdgm"  # a group mock's post: ``post_id`` is the group mock's id
GROUP_BOARD_PREFIX = "tdgb"  # a group mock's board (no buttons: found by its title)


@dataclass(frozen=True)
class Delivery:
    """One post that must appear once; ``since`` bounds the search (the post's creation).

    ``thread_of``: the post goes into the thread of that message (the weekly closing summary),
    and is looked for there. ``marker``: text that names the post in a history that shows
    neither nonces nor buttons (Discord's, for a post without buttons). ``besides``: a ref the
    search skips (the copy we recorded, when looking for a stray second one)."""

    post_id: int
    since: datetime
    prefix: str = KEY_PREFIX
    thread_of: str | None = None
    marker: str | None = None
    besides: str | None = None

    @property
    def key(self) -> str:
        return f"{self.prefix}{self.post_id}"

    @property
    def is_question(self) -> bool:
        """A question post (a weekly post's id is a weekly claim's, not a post's)."""
        return self.prefix == KEY_PREFIX

    def named_by(self, action: Action) -> bool:
        """A button of the message names this delivery (history shows no nonces)."""
        if self.prefix == GROUP_MOCK_PREFIX:
            return action.post_id == self.post_id and action.verb is Verb.JOIN
        weekly_button = action.verb in (Verb.TAKE, Verb.PROGRESS)
        return (action.post_id == self.post_id and weekly_button != self.is_question
                and action.verb is not Verb.JOIN)


class LookupUnavailableError(RuntimeError):
    """The platform cannot tell us whether the post is already in the channel."""


class Publisher(Protocol):
    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        """Post ``message`` in the channel (or in the thread of message ``thread_of``); return its ref."""
        ...

    async def update(self, where: Where, ref: str, message: Message) -> None:
        """Replace the content of a message posted earlier."""
        ...


@runtime_checkable
class KeyedPublisher(Protocol):
    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        """Post tagged with ``delivery.key`` (the platform drops a duplicate where it can)."""
        ...


@runtime_checkable
class SentFinder(Protocol):
    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        """The ref of our message carrying ``delivery`` posted since ``delivery.since``; raises
        ``LookupUnavailableError`` when the platform cannot tell."""
        ...


class OncePublisher(KeyedPublisher, SentFinder, Protocol):
    """Publish once and find sent: what exactly-once posting needs from a platform."""


@runtime_checkable
class LinkPublisher(Protocol):
    async def permalink(self, where: Where, ref: str) -> str | None:
        """A link members can open to message ``ref``, where the platform makes one."""
        ...


@runtime_checkable
class PrivatePublisher(Protocol):
    async def tell(self, who: Who, message: Message) -> bool:
        """A direct message to a member; raises or returns False when it cannot be sent."""
        ...


@runtime_checkable
class DeletePublisher(Protocol):
    async def delete(self, where: Where, ref: str) -> None:
        """Remove message ``ref`` that we posted (a duplicate a fenced-out sender left)."""
        ...


class RoleRefusedError(Exception):
    """The platform would not give or take a role: ``reason`` is ``permissions`` (missing
    Manage Roles, or the role is above the bot's), ``unknown_role``, ``unknown_member`` (they
    left) or ``no_roles`` (Slack, the console)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class RolePublisher(Protocol):
    async def set_role(self, where: Where, user_id: str, role_id: str, *, held: bool) -> None:
        """Give (``held``) or take a member's role; raises ``RoleRefusedError``."""
        ...

    def has_roles(self, where: Where) -> bool:
        """Whether members of ``where``'s community can be given roles at all."""
        ...

    async def role_problem(self, where: Where, role_id: str) -> str | None:
        """Why the bot could not give ``role_id`` now (``manage_roles``, ``position``,
        ``unknown_role``; see ``progress.rewards.problem_of``), or None: asked before any grant."""
        ...


# Forwarding for wrappers (routing, coalescing) around a publisher that may have no roles.
async def set_role_via(inner: object, where: Where, user_id: str, role_id: str, *, held: bool) -> None:
    if not isinstance(inner, RolePublisher):
        raise RoleRefusedError("no_roles")
    await inner.set_role(where, user_id, role_id, held=held)


def has_roles_via(inner: object, where: Where) -> bool:
    return isinstance(inner, RolePublisher) and inner.has_roles(where)


async def role_problem_via(inner: object, where: Where, role_id: str) -> str | None:
    return await inner.role_problem(where, role_id) if isinstance(inner, RolePublisher) else None


class ChatPublisher(Publisher, OncePublisher, LinkPublisher, PrivatePublisher, DeletePublisher,
                    Protocol):
    """Everything a chat platform's publisher offers the core."""
