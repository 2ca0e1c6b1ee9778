"""Chart rendering time, next to its floor measured in the same run.

The figure: p50 / p95 of rendering each chart (/stats, a board, a group) to PNG with a
realistic amount of data. The floor: a bare ``savefig`` of an empty figure of the same size
on the same canvas, i.e. what matplotlib costs before a single bar is drawn. Target
(issue 17): a chart in < 200 ms p50 on the 2-core machine; the ratio says how much of that
is ours.

    python -m bench.charts [--runs 30]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from bot.core.domain.topics import TOPICS
from bot.core.progress import chart_data
from bot.core.render import charts

NOW = datetime(2026, 3, 4, 10, tzinfo=UTC)


def empty_savefig() -> bytes:
    fig = Figure(figsize=(8, 6.2), dpi=charts.DPI)
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def samples() -> dict[str, Callable[[], bytes]]:
    times = [NOW - timedelta(hours=7 * i) for i in range(250)]
    bars = tuple(chart_data.TopicBar(t, 10 + i, (i % 10) / 10, 0.5 + (i % 5) / 10) for i, t in enumerate(TOPICS))
    stats = chart_data.StatsChart("ana", bars, chart_data.calendar_of(times, NOW, "UTC"), 4, 9)
    events = [(f"member {i % 5}", NOW - timedelta(hours=5 * i), 10 * (1 + i % 3)) for i in range(300)]
    lines = chart_data.cumulative_lines(events, date(2026, 1, 5), NOW.date(), "UTC", [f"member {i}" for i in range(5)])
    board = chart_data.BoardChart("Leaderboard · this channel · all time", lines)
    group = chart_data.GroupChart(
        "owls", tuple((t, (i % 7) / 7, (i % 5) / 5) for i, t in enumerate(TOPICS)),
        tuple((f"member {i}", tuple((i * w) % 6 for w in range(8))) for i in range(6)),
    )
    return {
        "stats": lambda: charts.stats_png(stats),
        "board": lambda: charts.board_png(board),
        "group": lambda: charts.group_png(group),
    }


def timed(work: Callable[[], bytes], runs: int) -> list[float]:
    work()  # warm: fonts and caches load once per process
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args()
    floor = statistics.median(timed(empty_savefig, args.runs))
    print(f"floor: empty figure savefig p50 {floor:.1f} ms")
    for name, work in samples().items():
        ms = sorted(timed(work, args.runs))
        p50 = statistics.median(ms)
        p95 = ms[int(0.95 * (len(ms) - 1))]
        verdict = "meets" if p50 < 200 else "MISSES"
        print(f"{name:6s} chart p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  = {p50 / floor:4.1f}× floor  "
              f"({verdict} the 200 ms p50 target)")


if __name__ == "__main__":
    main()
