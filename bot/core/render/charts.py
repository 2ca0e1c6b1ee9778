"""Charts as PNG: matplotlib's object API on the Agg canvas (no pyplot, no global state),
so each figure can render in a worker thread while the event loop keeps serving.

One light card style: the picture carries its own background, so it reads the same in
dark and light chat themes.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from datetime import date

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.dates import date2num
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bot.core.domain.messages import Attachment
from bot.core.domain.topics import TOPICS
from bot.core.progress.chart_data import BoardChart, GroupChart, StatsChart

BACKGROUND = "#fafafa"
INK = "#1f2328"
ACCENT = "#ee4c2c"  # PyTorch orange
SECOND = "#3b82f6"
MUTED = "#c9ccd1"
DPI = 100
CALENDAR_CMAP = LinearSegmentedColormap.from_list("activity", ["#ebedf0", ACCENT])
NO_ANSWERS = "No answers yet"  # what an empty chart says instead of an empty frame
NO_ANSWERS_BAR = "no answers"  # a topic one side of a comparison has not answered
MAX_DATE_TICKS = 8


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(fig)
    return fig


def _style(ax: Axes) -> None:
    ax.set_facecolor(BACKGROUND)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(colors=INK, labelsize=9)


def _legend_above(ax: Axes) -> None:
    """Above the plot, right-aligned: a legend inside the axes covers the last bar."""
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=8, frameon=False)


def _say_empty(ax: Axes, text: str = NO_ANSWERS) -> None:
    """A chart with nothing to draw says so, instead of an empty 0–1 frame."""
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color=INK, fontsize=12)


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", facecolor=BACKGROUND)
    return buffer.getvalue()


def stats_figure(chart: StatsChart) -> Figure:
    fig = _figure(8, 6.2)
    top, bottom = fig.subplots(2, 1, height_ratios=[max(len(chart.topics), 1), 2.2])
    _style(top)
    names = [TOPICS[t.topic] for t in chart.topics]
    rows = range(len(chart.topics))
    top.barh(list(rows), [100 * t.accuracy for t in chart.topics], color=ACCENT, height=0.5,
             label="answers correct")
    recall = [(i, 100 * t.retrievability) for i, t in enumerate(chart.topics) if t.retrievability is not None]
    if recall:
        top.scatter([r for _, r in recall], [i for i, _ in recall], color=SECOND, zorder=3,
                    marker="D", s=30, label="recall now (FSRS)")
    ready = [(i, t.readiness) for i, t in enumerate(chart.topics)
             if t.readiness is not None and t.readiness.enough_data]
    if ready:  # the expected share right on an interview-level question, with its 95% band
        centre = [100 * r.expected for _, r in ready]
        top.errorbar(centre, [i + 0.3 for i, _ in ready],
                     xerr=[[c - 100 * r.low for c, (_, r) in zip(centre, ready, strict=True)],
                           [100 * r.high - c for c, (_, r) in zip(centre, ready, strict=True)]],
                     fmt="o", color=INK, ecolor=INK, elinewidth=1, capsize=3, markersize=4, zorder=4,
                     label="interview readiness (band)")
    top.set_yticks(list(rows), names)
    top.invert_yaxis()
    top.set_xlim(0, 100)
    top.set_xlabel("%", color=INK)
    if chart.topics:
        _legend_above(top)
    else:
        _say_empty(top)
    title = f"{chart.name} · {chart.streak_text()}"
    if chart.overall is not None:
        title += f"\n{chart.overall_text()}"
    top.set_title(title, color=INK, fontsize=12 if chart.overall is None else 10, loc="left")
    cal = chart.calendar
    grid = [[cal.counts[7 * w + d] for w in range(cal.weeks)] for d in range(7)]
    bottom.imshow(grid, cmap=CALENDAR_CMAP, aspect="equal", vmin=0, vmax=max(max(cal.counts), 1))
    bottom.set_yticks(range(7), ["Mon", "", "Wed", "", "Fri", "", "Sun"])
    bottom.set_xticks([0, cal.weeks - 1], [f"{cal.first_day:%d %b}", "this week"])
    bottom.set_title(f"Activity, last {cal.weeks} weeks ({cal.active_days} active days)",
                     color=INK, fontsize=10, loc="left")
    for side in ("top", "right", "left", "bottom"):
        bottom.spines[side].set_visible(False)
    bottom.tick_params(colors=INK, labelsize=8, length=0)
    fig.tight_layout()
    return fig


def board_figure(chart: BoardChart) -> Figure:
    fig = _figure(8, 4.5)
    ax = fig.subplots()
    _style(ax)
    ax.set_title(chart.title, color=INK, fontsize=11, loc="left")
    if not chart.lines or not chart.lines[0].days:
        _say_empty(ax)
        fig.tight_layout()
        return fig
    for index, line in enumerate(chart.lines):
        ax.plot([float(date2num(d)) for d in line.days], line.cumulative, marker="o", markersize=4, linewidth=2,
                color=[ACCENT, SECOND, INK, "#16a34a", "#a855f7"][index % 5], label=line.name)
    _legend_above(ax)
    days = chart.lines[0].days
    _day_axis(ax, days)
    top = max(max(line.cumulative) for line in chart.lines)
    ax.set_ylim(0, max(top * 1.15, 1))  # points start at 0; one point is not a range
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("points", color=INK)
    fig.tight_layout()
    return fig


def _day_axis(ax: Axes, days: tuple[date, ...]) -> None:
    """The days of the period, half a day of margin, at most MAX_DATE_TICKS labels:
    a single day spans that day, not years."""
    step = max(1, -(-len(days) // MAX_DATE_TICKS))
    ticks = list(days[::step])
    ax.set_xlim(float(date2num(days[0])) - 0.5, float(date2num(days[-1])) + 0.5)
    ax.set_xticks([float(date2num(d)) for d in ticks], [f"{d:%d %b}" for d in ticks])


def group_figure(chart: GroupChart) -> Figure:
    fig = _figure(8, 6)
    top, bottom = fig.subplots(2, 1, height_ratios=[max(len(chart.topics), 1), max(len(chart.weekly), 1)])
    _style(top)
    rows = list(range(len(chart.topics)))
    for offset, side, color, label in ((-0.2, 1, ACCENT, f"group {chart.group}"),
                                       (0.2, 2, MUTED, "this channel")):
        shares = [group if side == 1 else channel for _, group, channel in chart.topics]
        top.barh([r + offset for r in rows], [100 * (v or 0) for v in shares], height=0.4,
                 color=color, label=label)
        for row, share in zip(rows, shares, strict=True):  # every bar says its number, or why none
            text = NO_ANSWERS_BAR if share is None else f"{round(100 * share)}%"
            top.text(100 * (share or 0) + 1, row + offset, text, va="center", fontsize=7,
                     color=INK if share is not None else "#6b7280")
    top.set_yticks(rows, [TOPICS[t] for t, _, _ in chart.topics])
    top.invert_yaxis()
    top.set_xlim(0, 112)  # room for the label of a 100% bar
    if chart.topics:
        _legend_above(top)
    else:
        _say_empty(top)
    top.set_title(f"Group {chart.group}: accuracy per topic", color=INK, fontsize=11, loc="left")
    grid = [list(weeks) for _, weeks in chart.weekly] or [[0]]
    bottom.imshow(grid, cmap=CALENDAR_CMAP, aspect="auto", vmin=0, vmax=max(max(map(max, grid)), 1))
    bottom.set_yticks(range(len(chart.weekly)), [name for name, _ in chart.weekly])
    bottom.set_xticks([])
    bottom.set_title("Answers per week (oldest → this week)", color=INK, fontsize=10, loc="left")
    fig.tight_layout()
    return fig


def stats_png(chart: StatsChart) -> bytes:
    return _png(stats_figure(chart))


def board_png(chart: BoardChart) -> bytes:
    return _png(board_figure(chart))


def group_png(chart: GroupChart) -> bytes:
    return _png(group_figure(chart))


async def render(draw: Callable[[], bytes], filename: str, alt: str) -> Attachment:
    """Draw in a worker thread: a chart never blocks the event loop."""
    content = await asyncio.to_thread(draw)
    return Attachment(filename, content, description=alt, inline=True)
