"""The README's example mock report is what the core renders (tools/readme_mock_report.py),
so the README cannot drift from the report members read."""

from __future__ import annotations

from tools.readme_mock_report import README, block, readme_block


def test_the_readme_shows_the_report_the_code_renders() -> None:
    current = readme_block(README.read_text(encoding="utf-8"))
    assert current is not None, "README.md lost its mock-report markers"
    assert current == block(), "regenerate with: python -m tools.readme_mock_report"
    assert "📋 Mock interview report · ML engineer · 30 min" in current
    assert "📅 Interview in 12 days (Fri 15 Jan 2027)." in current
