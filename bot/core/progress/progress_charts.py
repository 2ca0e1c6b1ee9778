"""Progress charts: the data of /stats, board and group charts read from the database, then
drawn off the event loop. The numbers come from ``chart_data``, the pictures from ``charts``."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from statistics import mean

from fsrs import Card
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Library
from bot.core.model.clock import as_utc
from bot.core.model.messages import Attachment
from bot.core.progress import chart_data, srs
from bot.core.progress.stats import MemberStats
from bot.core.render import charts
from bot.storage import progress_queries as q


async def retrievability_by_topic(
    session: AsyncSession, library: Library, member_id: int, now: datetime
) -> dict[str, float]:
    """Mean FSRS recall probability of the member's cards per topic, at ``now``."""
    per_topic: dict[str, list[float]] = defaultdict(list)
    for question_id, state in await q.cards_of(session, member_id):
        if question_id in library:
            card = Card.from_json(state)
            per_topic[library[question_id].topic].append(
                srs.SCHEDULER.get_card_retrievability(card, as_utc(now))
            )
    return {topic: mean(values) for topic, values in per_topic.items()}


async def stats_chart(
    session: AsyncSession, library: Library, member_id: int, name: str, st: MemberStats,
    now: datetime, tz: str,
) -> chart_data.StatsChart:
    recall = await retrievability_by_topic(session, library, member_id, now)
    since = now - timedelta(weeks=chart_data.CALENDAR_WEEKS, days=7)
    times = [t for _, t in await q.answer_times(session, [member_id], since)]
    bars = tuple(
        chart_data.TopicBar(t.topic, t.answered, t.accuracy, recall.get(t.topic)) for t in st.topics
    )
    return chart_data.StatsChart(
        name, bars, chart_data.calendar_of(times, now, tz), st.current_streak, st.best_streak
    )


async def stats_attachment(chart: chart_data.StatsChart) -> Attachment:
    return await charts.render(lambda: charts.stats_png(chart), "stats.png", chart.alt_text())


async def board_attachment(chart: chart_data.BoardChart) -> Attachment:
    return await charts.render(lambda: charts.board_png(chart), "leaderboard.png", chart.alt_text())


async def group_attachment(chart: chart_data.GroupChart) -> Attachment:
    return await charts.render(lambda: charts.group_png(chart), "group.png", chart.alt_text())
