"""The fixture bank the snippet verifier reads, and the line of a question in it."""

from __future__ import annotations

from pathlib import Path

BANK = Path(__file__).parents[1] / "fixtures" / "verify" / "one_wrong_key.yaml"


def line_of(question_id: str) -> int:
    """The line of the question's `code:` field in the fixture."""
    lines = BANK.read_text().splitlines()
    start = lines.index(f"  - id: {question_id}")
    return next(n for n in range(start, len(lines)) if lines[n].strip() == "code:") + 2
