"""Live rounds in a channel: questions one by one with a timer, standings after each reveal.

A round's task belongs to the core (``bot.core.model.tasks``), not to the adapter that started it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from bot.core import render
from bot.core.content.bank import Kind
from bot.core.model.identity import Where, Who, channel_row, member_row
from bot.core.model.kinds import PostKind
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.play.selection import pool
from bot.core.play.user_errors import USER_ERRORS
from bot.core.render import progress as progress_views
from bot.storage import rounds as queries
from bot.storage.models import Round

if TYPE_CHECKING:
    from bot.core.play.drill import Drill

STANDINGS_SHOWN = 10


class Rounds:
    def __init__(self, drill: Drill) -> None:
        self.drill = drill

    async def start(self, where: Where, who: Who, *, count: int, seconds: int, topic: str | None) -> int | Message:
        """Register a round (options validated by the catalogue); its id, or why not."""
        d = self.drill
        try:
            async with d.db.read() as session:
                await d.shelf.refresh(session)
            pool(d.library, topic=topic, kinds=[Kind.MCQ], community=where.community)
        except USER_ERRORS as exc:
            return render.notice(str(exc))
        async with d.db.write() as session:
            channel = await channel_row(session, where)
            member = await member_row(session, who, d.clock)
            if await queries.running_round(session, channel.id) is not None:
                return render.notice("A round is already running in this channel; wait for it to finish.")
            rnd = Round(
                channel_id=channel.id, started_by=member.id, n_questions=count,
                seconds_per_question=seconds, topic=topic, started_at=d.clock.now(),
            )
            session.add(rnd)
            await session.flush()
            return rnd.id

    async def play(self, round_id: int, where: Where, publisher: Publisher) -> Message:
        """Post each question, wait, reveal with standings; finally post the final standings."""
        d = self.drill
        async with d.db.read() as session:
            rnd = await session.get(Round, round_id)
            assert rnd is not None
            count, seconds, topic = rnd.n_questions, rnd.seconds_per_question, rnd.topic
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
            async with d.db.write() as session:
                await queries.finish(session, round_id, d.clock.now())

    async def standings(self, round_id: int, label: str) -> Message:
        async with self.drill.db.read() as session:
            rows = await queries.standings(session, round_id, STANDINGS_SHOWN)
        return progress_views.standings_message(label, rows)

    async def close_leftovers(self) -> None:
        async with self.drill.db.write() as session:
            await queries.finish_all_open(session, self.drill.clock.now())
