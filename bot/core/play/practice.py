"""Personal practice: private quizzes, spaced-repetition reviews and a member's own stats.

None of it earns leaderboard points, so practice cannot be farmed.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.model.identity import Where, Who, channel_row, member_row
from bot.core.model.messages import Message
from bot.core.play import quizzes
from bot.core.progress import groups, progress_charts
from bot.core.progress.stats import member_stats
from bot.core.render import progress as progress_views

DEFAULT_TZ = "UTC"

if TYPE_CHECKING:
    from bot.core.play.drill import Drill


class Practice:
    def __init__(self, drill: Drill) -> None:
        self.drill = drill

    async def quiz(self, who: Who, *, topic: str | None, count: int, difficulty: int | None,
                   rng: random.Random | None = None, source: str | None = None) -> Message:
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            return await quizzes.start_quiz(
                session, d.library, d.clock, who,
                topic=topic, count=count, difficulty=difficulty, rng=rng or d.rng,
                source=source or DEFAULT_BANK_SOURCE,
            )

    async def review(self, who: Who, *, count: int) -> Message:
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            return await quizzes.start_review(session, d.library, d.clock, who, count=count)

    async def stats(self, who: Who, where: Where | None = None) -> Message:
        d = self.drill
        async with d.db.write() as session:
            member = await member_row(session, who, d.clock)
            channel = await channel_row(session, where) if where else None
            st = await member_stats(session, d.library, member.id, channel.id if channel else None)
            member_groups = await groups.groups_of(session, member.id)
            chart = None
            if st.answered or st.pending:
                tz = channel.timezone if channel else DEFAULT_TZ
                chart = await progress_charts.stats_chart(
                    session, d.library, member.id, member.display_name, st, d.clock.now(), tz
                )
        message = progress_views.stats_message(member.display_name, st, member_groups)
        if chart is not None:
            message.text(chart.alt_text())
            message.attachments.append(await progress_charts.stats_attachment(chart))
        return message
