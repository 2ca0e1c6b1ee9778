"""Progress charts: the numbers behind each one checked by hand, the pictures checked against
those numbers (bars, lines, calendar cells), decodable PNGs, and the core commands that attach
them with a text alternative."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta

from fsrs import Card
from PIL import Image

from bot.core.domain.identity import Where
from bot.core.progress import chart_data, srs
from bot.core.render import charts
from bot.storage.models import SrsCard
from tests.support.board_helpers import answer_daily, player

HERE = Where("discord", "g1", "c1", "one")
NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # a Wednesday


who = player


def test_calendar_bins_local_days_into_monday_first_weeks() -> None:
    times = [
        NOW,  # Wed 4 Mar
        NOW - timedelta(hours=10, minutes=30),  # 23:30 UTC on Tue 3 Mar = 00:30 Wed in Berlin
        NOW - timedelta(days=7),  # the week before
        NOW - timedelta(weeks=20),  # outside the 12 weeks
    ]
    cal = chart_data.calendar_of(times, NOW, "Europe/Berlin")
    assert cal.first_day == date(2025, 12, 15) and cal.first_day.weekday() == 0
    assert cal.weeks == 12 and len(cal.counts) == 84
    assert cal.count_on(date(2026, 3, 4)) == 2  # both count on local Wednesday
    assert cal.count_on(date(2026, 3, 3)) == 0
    assert cal.count_on(date(2026, 2, 25)) == 1
    assert sum(cal.counts) == 3 and cal.active_days == 2
    utc = chart_data.calendar_of(times, NOW, "UTC")
    assert utc.count_on(date(2026, 3, 3)) == 1 and utc.count_on(date(2026, 3, 4)) == 1


def test_cumulative_lines_add_points_day_by_day() -> None:
    events = [("ana", NOW - timedelta(days=2), 10), ("bo", NOW - timedelta(days=1), 20),
              ("ana", NOW, 30), ("ana", NOW, 5)]
    lines = chart_data.cumulative_lines(events, date(2026, 3, 1), date(2026, 3, 4), "UTC", ["ana", "bo"])
    assert [line.name for line in lines] == ["ana", "bo"]
    assert lines[0].cumulative == (0, 10, 10, 45)  # 1, 2, 3, 4 March
    assert lines[1].cumulative == (0, 0, 20, 20)
    assert lines[0].days[0] == date(2026, 3, 1) and len(lines[0].days) == 4


def test_weekly_counts_sum_each_week() -> None:
    times = [NOW, NOW - timedelta(days=1), NOW - timedelta(days=8)]
    assert chart_data.weekly_counts(times, NOW, "UTC", 3) == (0, 1, 2)


def stats_chart() -> chart_data.StatsChart:
    bars = (chart_data.TopicBar("autograd", 4, 0.75, 0.9), chart_data.TopicBar("tensors", 2, 0.5, None))
    cal = chart_data.calendar_of([NOW, NOW - timedelta(days=3)], NOW, "UTC")
    return chart_data.StatsChart("ana", bars, cal, 2, 5)


def test_stats_figure_draws_one_bar_per_topic_and_the_calendar() -> None:
    chart = stats_chart()
    fig = charts.stats_figure(chart)
    bars_ax, calendar_ax = fig.axes
    widths = [patch.get_width() for patch in bars_ax.patches]
    assert widths == [75.0, 50.0]
    [recall] = bars_ax.collections  # only topics with FSRS cards get a recall marker
    assert [tuple(p) for p in recall.get_offsets()] == [(90.0, 0.0)]
    [image] = calendar_ax.images
    grid = image.get_array()
    assert grid.shape == (7, 12) and grid.sum() == 2 and grid[2, 11] == 1  # Wednesday, this week
    assert "streak 2 (best 5)" in bars_ax.get_title(loc="left")
    assert chart.alt_text() == (
        "Progress of ana: Autograd 75% correct, recall 90%; Tensors 50% correct. "
        "Active on 2 of the last 84 days. Streak 2 (best 5)."
    )


def test_pngs_decode_at_their_size() -> None:
    lines = chart_data.cumulative_lines([("ana", NOW, 10)], date(2026, 3, 2), date(2026, 3, 4), "UTC", ["ana"])
    group = chart_data.GroupChart("owls", (("autograd", 0.5, 0.7),), (("ana", (1, 0, 2)),))
    for png, size in (
        (charts.stats_png(stats_chart()), (800, 620)),
        (charts.board_png(chart_data.BoardChart("Board", lines)), (800, 450)),
        (charts.group_png(group), (800, 600)),
    ):
        image = Image.open(io.BytesIO(png))
        image.load()
        assert image.format == "PNG" and image.size == size
    fig = charts.board_figure(chart_data.BoardChart("Board", lines))
    [line] = fig.axes[0].get_lines()
    assert list(line.get_ydata()) == [0, 0, 10]


async def answer(drill, publisher, picks: dict[int, bool], *, reveal: bool = True) -> int:
    return (await answer_daily(drill, publisher, picks, HERE, reveal=reveal))[0]


async def test_stats_attach_a_chart_whose_alt_text_carries_the_numbers(drill, publisher) -> None:
    assert not (await drill.practice.stats(who(1), HERE)).attachments  # nothing to draw yet
    await answer(drill, publisher, {1: True})
    await answer(drill, publisher, {1: False})
    msg = await drill.practice.stats(who(1), HERE)
    [png] = msg.attachments
    assert png.filename == "stats.png" and png.inline and png.description
    assert Image.open(io.BytesIO(png.content)).format == "PNG"
    assert "Active on 1 of the last 84 days" in png.description
    assert png.description in msg.plain()  # the same figures in the text
    recall: dict[str, list[float]] = {}
    async with drill.db.read() as s:
        rows = (await s.execute(SrsCard.__table__.select())).all()
    for row in rows:
        topic = drill.library[row.question_id].topic
        recall.setdefault(topic, []).append(
            srs.SCHEDULER.get_card_retrievability(Card.from_json(row.state), drill.clock.now()))
    for topic, values in recall.items():
        share = round(100 * sum(values) / len(values))
        assert f"recall {share}%" in png.description, topic


async def test_board_chart_counts_only_revealed_points(drill, publisher) -> None:
    await answer(drill, publisher, {1: True, 2: True})
    await answer(drill, publisher, {1: True}, reveal=False)  # still open: not on the board
    msg = await drill.boards.leaderboard(who(1), HERE, period="all", chart=True)
    [png] = msg.attachments
    assert png.filename == "leaderboard.png"
    ends = {part.rsplit(" ", 2)[0]: int(part.rsplit(" ", 2)[1]) for part in
            png.description.split(": ", 1)[1].rstrip(".").split(", ")}
    top = {line.split("**")[1]: int(line.split("— ")[1].split(" pts")[0])
           for line in msg.blocks[0].text.splitlines()}
    assert ends == top  # the chart ends where the board stands
    assert not (await drill.boards.leaderboard(who(1), HERE, period="all")).attachments


async def test_group_stats_compare_the_group_with_its_channel(drill, publisher) -> None:
    await drill.boards.group(who(1), "create", "Owls")
    await answer(drill, publisher, {1: True, 2: False})
    await answer(drill, publisher, {1: False, 2: True}, reveal=False)  # open: its picks stay private
    msg = await drill.boards.group_stats(who(1), HERE, "owls")
    [png] = msg.attachments
    assert png.filename == "group.png"
    assert "group 100% vs this channel 50%" in msg.plain()
    assert "Player 1 2 answers" in msg.plain()  # activity shows answering, not what was picked


def _texts(ax: object) -> list[str]:
    return [t.get_text() for t in ax.texts]  # type: ignore[attr-defined]


def test_a_quiet_week_says_no_answers_yet_instead_of_an_empty_frame() -> None:
    fig = charts.board_figure(chart_data.BoardChart("Week of 23 Feb", ()))
    [ax] = fig.axes
    assert _texts(ax) == ["No answers yet"]
    assert ax.get_lines() == [] and list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    stats = chart_data.StatsChart("ana", (), chart_data.calendar_of([], NOW, "UTC"), 0, 0)
    assert _texts(charts.stats_figure(stats).axes[0]) == ["No answers yet"]
    group = chart_data.GroupChart("Owls", (), (("ana", (0, 0)),))
    assert _texts(charts.group_figure(group).axes[0]) == ["No answers yet"]


def test_a_one_point_board_spans_that_day_and_counts_points_from_zero() -> None:
    lines = chart_data.cumulative_lines([("ana", NOW, 30)], NOW.date(), NOW.date(), "UTC", ["ana"])
    fig = charts.board_figure(chart_data.BoardChart("Leaderboard · this channel · all time", lines))
    [ax] = fig.axes
    fig.canvas.draw()
    low, high = ax.get_xlim()
    assert high - low == 1.0  # one day, half a day either side: not 2025–2029
    assert [t.get_text() for t in ax.get_xticklabels()] == ["04 Mar"]
    assert ax.get_ylim() == (0.0, 34.5)
    ticks = [t for t in ax.get_yticks() if 0 <= t <= 34.5]
    assert ticks[0] == 0 and all(float(t).is_integer() for t in ticks)  # not 28.5 … 31.5


def test_group_bars_say_their_number_or_no_answers_and_the_legend_covers_none() -> None:
    chart = chart_data.GroupChart("Owls", (("autograd", 1.0, None), ("tensors", 0.0, 0.5)),
                                  (("ana", (1, 2)),))
    fig = charts.group_figure(chart)
    top = fig.axes[0]
    assert _texts(top) == ["100%", "0%", "no answers", "50%"]  # group bars, then this channel's
    fig.canvas.draw()
    legend = top.get_legend().get_window_extent()
    for bar in top.patches:
        assert not legend.overlaps(bar.get_window_extent())
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["group Owls", "this channel"]
