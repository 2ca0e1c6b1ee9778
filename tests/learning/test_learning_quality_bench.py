"""`python -m bench.quality` runs and prints its line (a small database; the figures in
docs/learning.md come from the full run)."""

from __future__ import annotations

import re

from bench.quality import run


async def test_the_quality_bench_times_the_report(capsys) -> None:
    await run("sqlite", 600, 30, "")
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(r"sqlite +600 answers on \d+ questions \(30 members; seeding took [\d.]+ s\): aggregate "
                        r"[\d.]+ s, estimates [\d.]+ s, whole reply [\d.]+ s \([\d,]+ bytes of table\)", line), line
