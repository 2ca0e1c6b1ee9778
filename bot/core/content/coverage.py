"""Which questions of each raw source document a curated bank accounts for.

Every curated question lists the source questions it covers in ``sources`` (e.g. ``002#17``);
merged duplicates list all of theirs. Stats and tests use this to prove nothing was lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.content.bank import Library

# Number of source questions in each seed document (see content/README.md for how they were counted).
SOURCE_TOTALS: dict[str, int] = {"000": 25, "002": 48, "003": 29, "004": 27}


@dataclass
class Coverage:
    source: str
    total: int
    covered: int
    missing: list[int]


def source_refs(library: Library) -> dict[str, set[int]]:
    refs: dict[str, set[int]] = {}
    for q in library.questions:
        for ref in q.sources:
            doc, _, number = ref.partition("#")
            if number.isdigit():
                refs.setdefault(doc, set()).add(int(number))
    return refs


def source_coverage(library: Library, totals: dict[str, int] | None = None) -> list[Coverage]:
    refs = source_refs(library)
    totals = {**SOURCE_TOTALS, **(totals or {})}
    for doc, numbers in refs.items():
        totals.setdefault(doc, max(numbers))
    rows = []
    for doc in sorted(totals):
        got = refs.get(doc, set())
        missing = [n for n in range(1, totals[doc] + 1) if n not in got]
        rows.append(Coverage(doc, totals[doc], totals[doc] - len(missing), missing))
    return rows
