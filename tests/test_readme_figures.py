"""The README's bank figures are counted from the banks, so the front door never overstates them."""

from __future__ import annotations

import re
from pathlib import Path

from bot.core.content.bank import Kind, load_library

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def figure(pattern: str) -> int:
    found = re.search(pattern, README)
    assert found, f"README lost the figure {pattern!r}"
    return int(found.group(1).replace(",", ""))


def test_bank_counts_in_the_readme_are_the_banks() -> None:
    library = load_library()
    mcqs = [q for q in library.questions if q.kind is Kind.MCQ]
    executable = [q for q in mcqs if q.check is not None]
    snippets = [s for q in library.questions for s in q.code if s.runnable]
    assert figure(r"hold ([\d,]+) questions") == len(library)
    assert figure(r"([\d,]+) of them multiple choice") == len(mcqs)
    assert figure(r"([\d,]+) MCQs have executable answer keys") == len(executable)
    assert figure(r"CI executes all ([\d,]+) runnable code snippets") == len(snippets)
