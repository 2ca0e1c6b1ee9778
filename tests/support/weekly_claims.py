"""Weekly claims: channels that record posts, a schedule and turning the weekly off."""

from __future__ import annotations

from sqlalchemy import update

from bot.app import build_daily, weekly_posting
from bot.core.domain.identity import Where
from bot.core.domain.topics import TOPICS
from bot.core.drill.delivery import Delivery
from bot.core.render.questions import stars
from bot.core.weekly.service import WeeklyKind
from bot.storage.identity import channel_row
from bot.storage.models import Schedule
from tests.support.weekly_platform import BANK

HERE = Where("discord", "g1", "c1", "general")
EASIEST = sorted(BANK.challenges, key=lambda c: (c.difficulty, c.id))


class Channels:
    """Keeps every accepted message with its channel, key, thread and time. No nonce dedup
    (Slack has none): only the look before a re-send keeps a post single."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.messages: list[dict] = []
        self.fail_in: set[str] = set()  # channel ids whose keyed sends fail before landing
        self.die_after_accept = False
        self.lookups = 0
        self.during_send = None  # an async callable awaited inside a keyed send

    async def publish(self, where, message, *, thread_of=None) -> str:
        return self._keep(where, message, None, thread_of)

    async def publish_once(self, where, message, delivery: Delivery) -> str:
        if where.channel_id in self.fail_in:
            raise ConnectionError("channel unreachable")
        ref = self._keep(where, message, delivery.key, delivery.thread_of)
        if self.during_send is not None:
            await self.during_send()
        if self.die_after_accept:
            self.die_after_accept = False
            raise TimeoutError("no answer from the platform")
        return ref

    async def find_sent(self, where, delivery: Delivery) -> str | None:
        self.lookups += 1
        return next((m["ref"] for m in self.messages if m["key"] == delivery.key
                     and m["channel"] == where.channel_id and m["at"] >= delivery.since), None)

    async def update(self, where, ref, message) -> None:
        pass

    def _keep(self, where, message, key, thread) -> str:
        ref = f"m{len(self.messages) + 1}"
        self.messages.append({"ref": ref, "channel": where.channel_id, "message": message,
                              "key": key, "thread": thread, "at": self.clock.now()})
        return ref

    def posts(self, channel: str | None = None) -> list[str]:
        """Titles of the weekly posts (keyed, in the channel: not a closing summary), in order."""
        return [m["message"].title for m in self.messages
                if m["key"] and not m["thread"] and (channel is None or m["channel"] == channel)]

    def closings(self) -> list[tuple[str, str, str]]:
        return [(m["channel"], m["thread"], m["message"].plain()) for m in self.messages if m["thread"]]


def title(challenge) -> str:
    return f"🧩 Weekly challenge: {challenge.title} · {stars(challenge.difficulty)} · {TOPICS[challenge.topic]}"


async def schedule(drill, channels, where: Where, spec: str = "wed 10:00") -> int:
    await build_daily(drill, channels).set_schedule(where, at="09:00", timezone="Europe/Berlin")
    await weekly_posting(drill.db, drill.clock, channels, bank=BANK).set_weekly(
        where, WeeklyKind.CHALLENGE, *spec.split())
    async with drill.db.write() as session:
        return (await channel_row(session, where)).id


async def weekly_off(drill, channel_pk: int) -> None:
    """The admin turns the weekly challenge off (the post already out stays open)."""
    async with drill.db.write() as session:
        await session.execute(update(Schedule).where(Schedule.channel_id == channel_pk)
                              .values(challenge_at=None))
