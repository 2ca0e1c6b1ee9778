"""docs/mock.md's example report is what the core renders (tools/mock_report_example.py),
so the documentation cannot drift from the report members read."""

from __future__ import annotations

from tools.mock_report_example import DOC, block, current_block


def test_the_docs_show_the_report_the_code_renders() -> None:
    current = current_block(DOC.read_text(encoding="utf-8"))
    assert current is not None, "docs/mock.md lost its mock-report markers"
    assert current == block(), "regenerate with: python -m tools.mock_report_example"
    assert "📋 Mock interview report · ML engineer · 30 min" in current
    assert "📅 Interview in 12 days (Fri 15 Jan 2027)." in current
