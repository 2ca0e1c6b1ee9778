"""The weekly challenge bank and a platform that records the weekly posts."""

from __future__ import annotations

from bot.core.content.challenges import load_challenges
from bot.core.drill.delivery import Delivery

BANK = load_challenges()


class Platform:
    """A channel that keeps what it accepted, keyed like Discord's nonce / Slack's metadata.

    ``die_after_accept`` makes the next keyed send land and then fail (the sender died);
    ``fail_before_accept`` makes it fail before anything lands."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, object, str | None, str | None]] = []  # ref, msg, key, thread
        self.die_after_accept = False
        self.fail_before_accept = False

    async def publish(self, where, message, *, thread_of=None) -> str:
        ref = f"m{len(self.messages) + 1}"
        self.messages.append((ref, message, None, thread_of))
        return ref

    async def publish_once(self, where, message, delivery: Delivery) -> str:
        if self.fail_before_accept:
            self.fail_before_accept = False
            raise ConnectionError("platform unreachable")
        if any(key == delivery.key for _, _, key, _ in self.messages):
            return next(ref for ref, _, key, _ in self.messages if key == delivery.key)  # nonce dedup
        ref = f"m{len(self.messages) + 1}"
        self.messages.append((ref, message, delivery.key, delivery.thread_of))
        if self.die_after_accept:
            self.die_after_accept = False
            raise TimeoutError("no answer from the platform")
        return ref

    async def find_sent(self, where, delivery: Delivery) -> str | None:
        return next((ref for ref, _, key, _ in self.messages if key == delivery.key), None)

    async def update(self, where, ref, message) -> None:
        pass

    def posts(self) -> list[str]:
        """The weekly posts in the channel (keyed; a closing summary is keyed too, in a thread)."""
        return [m.plain() for _, m, key, thread in self.messages if key and not thread]  # type: ignore[attr-defined]
