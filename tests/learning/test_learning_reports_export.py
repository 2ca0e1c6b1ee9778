"""Built-in questions members flagged with 🚩 show in `torchdrill content quality --export`, with
their reasons counted and their notes as inert one-line text; dismissed reports do not."""

from __future__ import annotations

import random
from pathlib import Path

from bot.app import build_drill
from bot.core.content.bank import load_library
from bot.core.learning.report_desk import ReportDesk
from bot.storage.models import Post
from tests.support.learning_reports import WHERE, _export, who


async def test_the_export_lists_open_member_reports_of_built_in_questions(db, clock, publisher, tmp_path: Path):
    drill = build_drill(db, load_library(), clock, rng=random.Random(5))
    desk = ReportDesk(drill.report_store, drill.library, clock, drill.refresh_shelf)
    posted = await drill.ask(WHERE, publisher, kind="daily")
    other = await drill.ask(WHERE, publisher, kind="daily")
    async with db.read() as s:
        question = (await s.get(Post, posted.post_id)).question_id
    await desk.report(who(1), posted.post_id, "wrong-key", "B is right | see\nthe docs")
    await desk.report(who(2), posted.post_id, "wrong-key", None)
    await desk.report(who(3), posted.post_id, "typo", None)
    await desk.report(who(4), other.post_id, "typo", None)
    assert (await desk.dismiss(who(9), 4)).plain() == "Report #4 dismissed; the question stays as it is."

    report = tmp_path / "quality.md"
    result = _export(db.engine.url.render_as_string(hide_password=False), report)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.strip().endswith(", 0 answers, 0 flagged, 1 reported by members")
    lines = report.read_text().splitlines()
    assert lines[2].endswith(" multiple-choice questions, 0 answers, 0 flagged, 1 reported by members.")
    assert lines[4:9] == [
        "## Reported by members (🚩)",
        "",
        "| question | reports | notes |",
        "|---|---|---|",
        f"| `{question}` | typo ×1, wrong key ×2 | B is right \\| see the docs |",
    ]
