"""Charts as PNG: matplotlib's object API on the Agg canvas (no pyplot, no global state),
so each figure can render in a worker thread while the event loop keeps serving.

One light card style: the picture carries its own background, so it reads the same in
dark and light chat themes.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

from bot.core.model.messages import Attachment
from bot.core.model.topics import TOPICS
from bot.core.progress.chart_data import BoardChart, GroupChart, StatsChart

BACKGROUND = "#fafafa"
INK = "#1f2328"
ACCENT = "#ee4c2c"  # PyTorch orange
SECOND = "#3b82f6"
MUTED = "#c9ccd1"
DPI = 100
CALENDAR_CMAP = LinearSegmentedColormap.from_list("activity", ["#ebedf0", ACCENT])


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(fig)
    return fig


def _style(ax: object) -> None:
    ax.set_facecolor(BACKGROUND)  # type: ignore[attr-defined]
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)  # type: ignore[attr-defined]
    ax.tick_params(colors=INK, labelsize=9)  # type: ignore[attr-defined]


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
    top.set_yticks(list(rows), names)
    top.invert_yaxis()
    top.set_xlim(0, 100)
    top.set_xlabel("%", color=INK)
    top.legend(loc="lower right", fontsize=8, frameon=False)
    top.set_title(f"{chart.name} · streak {chart.streak} (best {chart.best_streak})", color=INK,
                  fontsize=12, loc="left")
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
    for index, line in enumerate(chart.lines):
        ax.plot(line.days, line.cumulative, marker="o", markersize=3, linewidth=2,
                color=[ACCENT, SECOND, INK, "#16a34a", "#a855f7"][index % 5], label=line.name)
    if chart.lines:
        ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.set_ylabel("points", color=INK)
    ax.set_title(chart.title, color=INK, fontsize=11, loc="left")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def group_figure(chart: GroupChart) -> Figure:
    fig = _figure(8, 6)
    top, bottom = fig.subplots(2, 1, height_ratios=[max(len(chart.topics), 1), max(len(chart.weekly), 1)])
    _style(top)
    rows = list(range(len(chart.topics)))
    top.barh([r - 0.2 for r in rows], [100 * (g or 0) for _, g, _ in chart.topics], height=0.4,
             color=ACCENT, label=f"group {chart.group}")
    top.barh([r + 0.2 for r in rows], [100 * (c or 0) for _, _, c in chart.topics], height=0.4,
             color=MUTED, label="this channel")
    top.set_yticks(rows, [TOPICS[t] for t, _, _ in chart.topics])
    top.invert_yaxis()
    top.set_xlim(0, 100)
    top.legend(fontsize=8, frameon=False, loc="lower right")
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
