"""The shipped banks and the line of a text in a bank file (the content check tests)."""

from __future__ import annotations

from pathlib import Path

BANKS = Path(__file__).parents[1] / "fixtures" / "banks"


def line_of(path: Path, text: str, occurrence: int = 1) -> int:
    """1-based line of the n-th line containing ``text``."""
    hits = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(hits) >= occurrence, f"{text!r} not found {occurrence}x in {path.name}"
    return hits[occurrence - 1]
