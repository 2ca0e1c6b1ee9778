"""Progress charts: the data of /stats, board and group charts read from the database, then
drawn off the event loop. The numbers come from ``chart_data``, the pictures from ``charts``;
the rows through ``ProgressReads`` (bot.core.progress.ports), in the caller's transaction."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from statistics import mean
from typing import TYPE_CHECKING

from fsrs import Card

from bot.core.content.bank import Library
from bot.core.domain.clock import as_utc
from bot.core.domain.messages import Attachment
from bot.core.progress import chart_data, srs
from bot.core.progress.stats import MemberStats
from bot.core.render import charts

if TYPE_CHECKING:
    from bot.core.progress.ports import ProgressReads
    from bot.core.stores import Tx


async def retrievability_by_topic(
    reads: ProgressReads, session: Tx, library: Library, member_id: int, now: datetime
) -> dict[str, float]:
    """Mean FSRS recall probability of the member's cards per topic, at ``now``."""
    per_topic: dict[str, list[float]] = defaultdict(list)
    for question_id, state in await reads.cards_of(session, member_id):
        if question_id in library:
            card = Card.from_json(state)
            per_topic[library[question_id].topic].append(
                srs.SCHEDULER.get_card_retrievability(card, as_utc(now))
            )
    return {topic: mean(values) for topic, values in per_topic.items()}


async def stats_chart(
    reads: ProgressReads, session: Tx, library: Library, member_id: int, name: str,
    st: MemberStats, now: datetime, tz: str,
) -> chart_data.StatsChart:
    recall = await retrievability_by_topic(reads, session, library, member_id, now)
    since = now - timedelta(weeks=chart_data.CALENDAR_WEEKS, days=7)
    times = [t for _, t in await reads.answer_times(session, [member_id], since)]
    bars = tuple(
        chart_data.TopicBar(t.topic, t.answered, t.accuracy, recall.get(t.topic), st.readiness.get(t.topic))
        for t in st.topics
    )
    weekly = st.weekly if st.weekly is not None and not st.daily else None
    return chart_data.StatsChart(
        name, bars, chart_data.calendar_of(times, now, tz),
        weekly.current if weekly else st.current_streak, weekly.best if weekly else st.best_streak,
        st.overall if st.topics else None, weekly is not None,
    )


async def stats_attachment(chart: chart_data.StatsChart) -> Attachment:
    return await charts.render(lambda: charts.stats_png(chart), "stats.png", chart.alt_text())


async def board_attachment(chart: chart_data.BoardChart) -> Attachment:
    return await charts.render(lambda: charts.board_png(chart), "leaderboard.png", chart.alt_text())


async def group_attachment(chart: chart_data.GroupChart) -> Attachment:
    return await charts.render(lambda: charts.group_png(chart), "group.png", chart.alt_text())
