"""Live rounds in a channel: questions one by one with a timer, standings after each reveal.

A round's task belongs to the core (``bot.core.domain.tasks``), not to the adapter that started it.
Its rows live behind ``RoundStore`` (bot.core.stores).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from bot.core.content.bank import Kind
from bot.core.domain.identity import Where, Who
from bot.core.domain.kinds import PostKind
from bot.core.domain.messages import Message
from bot.core.drill.selection import pool
from bot.core.drill.user_errors import USER_ERRORS
from bot.core.publisher import Publisher
from bot.core.render.boards import standings_message
from bot.core.render.notices import notice

if TYPE_CHECKING:
    from bot.core.drill.ports import ChannelQuestions
    from bot.core.stores import RoundStore

STANDINGS_SHOWN = 10


class Rounds:
    def __init__(self, drill: ChannelQuestions, store: RoundStore) -> None:
        self.drill = drill
        self.store = store

    async def start(self, where: Where, who: Who, *, count: int, seconds: int, topic: str | None) -> int | Message:
        """Register a round (options validated by the catalogue); its id, or why not."""
        d = self.drill
        try:
            async with d.db.read() as session:
                await d.shelf.refresh(session)
            pool(d.library, topic=topic, kinds=[Kind.MCQ], community=where.community)
        except USER_ERRORS as exc:
            return notice(str(exc))
        round_id = await self.store.start(where, who, count=count, seconds=seconds, topic=topic)
        if round_id is None:
            return notice("A round is already running in this channel; wait for it to finish.")
        return round_id

    async def play(self, round_id: int, where: Where, publisher: Publisher) -> Message:
        """Post each question, wait, reveal with standings; finally post the final standings."""
        d = self.drill
        settings = await self.store.settings(round_id)
        count, seconds, topic = settings.count, settings.seconds, settings.topic
        try:
            for index in range(count):
                posted = await d.ask(
                    where, publisher, kind=PostKind.ROUND, topic=topic,
                    reveal_after=timedelta(seconds=seconds), round_id=round_id,
                )
                await d.clock.sleep(seconds)
                await d.reveal_post(posted.post_id, where, publisher)
                standings = await self.standings(round_id, f"after question {index + 1}/{count}")
                await publisher.publish(where, standings, thread_of=posted.ref)
            final = await self.standings(round_id, "final standings")
            await publisher.publish(where, final)
            return final
        finally:
            await self.store.finish(round_id, d.clock.now())

    async def standings(self, round_id: int, label: str) -> Message:
        return standings_message(label, await self.store.standings(round_id, STANDINGS_SHOWN))

    async def close_leftovers(self) -> None:
        await self.store.finish_all_open(self.drill.clock.now())
