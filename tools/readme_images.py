"""Draw the README's pictures of what members see, with the bot's own code.

    python -m tools.readme_images            # writes docs/img/*.png and docs/img/*.svg

- the three charts (PNG) by ``bot.core.render.charts`` from example figures;
- a daily post, its reveal and a ``/run`` result (SVG) as the console playground prints them:
  a real app on a temporary SQLite file, the real console adapter and renderer, and the real
  runner (the /run picture is skipped, with a line saying why, where the runner cannot start).
"""

from __future__ import annotations

import asyncio
import io
import sys
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from rich.console import Console

from bot.adapters.console.play import ConsoleAdapter, _ConsoleAck
from bot.adapters.console.screen import Screen
from bot.app import build_app
from bot.config import Settings
from bot.core.progress import chart_data
from bot.core.render import charts
from bot.storage.db import migrate

OUT = Path(__file__).resolve().parents[1] / "docs" / "img"
NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # a Wednesday
RUN_SNIPPET = "import torch\n\nx = torch.randn(4, 3)\nw = torch.randn(4, 2)\nprint(x @ w)"
RESULT_WAIT_S = 120.0


def draw_charts() -> None:
    bars = (chart_data.TopicBar("autograd", 12, 0.75, 0.82), chart_data.TopicBar("tensors", 9, 0.89, 0.91),
            chart_data.TopicBar("optimization", 6, 0.5, 0.64), chart_data.TopicBar("gpu-memory", 4, 0.25, None))
    days = [NOW - timedelta(days=d) for d in (0, 1, 1, 2, 5, 8, 9, 15, 16, 22, 30, 31, 44)]
    stats = chart_data.StatsChart("ana", bars, chart_data.calendar_of(days, NOW, "UTC"), 3, 7)
    monday = date(2026, 3, 2)
    events = [("ana", NOW - timedelta(days=2), 20), ("bo", NOW - timedelta(days=2), 10),
              ("ana", NOW - timedelta(days=1), 30), ("cy", NOW - timedelta(days=1), 20), ("bo", NOW, 30)]
    lines = chart_data.cumulative_lines(events, monday, NOW.date(), "UTC", ["ana", "bo", "cy"])
    board = chart_data.BoardChart("Leaderboard · this channel · week 10, 2026", lines)
    group = chart_data.GroupChart(
        "Night Owls", (("autograd", 0.8, 0.7), ("tensors", 1.0, None), ("gpu-memory", 0.5, 0.4)),
        (("ana", (3, 5, 2, 4)), ("bo", (0, 2, 6, 1))))
    for name, png in (("stats.png", charts.stats_png(stats)), ("leaderboard.png", charts.board_png(board)),
                      ("group.png", charts.group_png(group))):
        (OUT / name).write_bytes(png)


async def draw_playground(workdir: Path) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'readme.db'}"
    app = await build_app(Settings(_env_file=None, database_url=url), with_runner=False)  # type: ignore[call-arg]
    terminal = Console(record=True, width=88, color_system="truecolor", force_terminal=True,
                       file=io.StringIO())  # recorded for the SVG, not printed
    console = ConsoleAdapter(app, name="ana", screen=Screen(terminal), files_dir=workdir / "files")
    app.publisher.register(console.platform, console.publisher)
    try:
        await console.handle("today")
        _svg(terminal, "daily-post.svg", "torchdrill: the daily question")
        await console.handle("b")
        await console.handle("reveal")
        _svg(terminal, "reveal.svg", "torchdrill: the reveal")
        app.runner_overrides["journal_path"] = workdir / "journal.sqlite3"
        problem = await app.start_runner()
        if problem is not None:
            print(f"run-result.svg skipped: {problem}", file=sys.stderr)
            return
        printed = console.publisher.count
        await app.commands.run_code(console.caller, RUN_SNIPPET, _ConsoleAck(console))
        async with asyncio.timeout(RESULT_WAIT_S):
            while console.publisher.count < printed + 2:  # the acknowledgement, then the result
                await asyncio.sleep(0.1)
        _svg(terminal, "run-result.svg", "torchdrill: /run")
    finally:
        await app.close()


def _svg(terminal: Console, name: str, title: str) -> None:
    (OUT / name).write_text(terminal.export_svg(title=title, clear=True), encoding="utf-8")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    draw_charts()
    with tempfile.TemporaryDirectory() as workdir:
        migrate(f"sqlite+aiosqlite:///{Path(workdir) / 'readme.db'}")
        asyncio.run(draw_playground(Path(workdir)))
    print(f"pictures written to {OUT}")


if __name__ == "__main__":
    main()
