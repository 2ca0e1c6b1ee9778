"""docs/sandbox-peers.md maps the peers' test ideas to our tests: every test it names must
exist, so a renamed or deleted attack test cannot leave a row claiming cover it lost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.not_for_mutation

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "sandbox-peers.md").read_text()
ATTACKS = "tests/runner/test_sandbox_attacks.py"
NAMED = re.compile(r"`(tests/[^`:]+\.py)?::(test_\w+)`")


def named_tests() -> list[tuple[str, str]]:
    """(file, test) for each `file::test` in the table; `::test` is the row's previous file."""
    found = []
    for row in (line for line in DOC.splitlines() if line.startswith("| ")):
        current = ATTACKS
        for match in NAMED.finditer(row):
            current = match.group(1) or current
            found.append((current, match.group(2)))
    return found


def test_every_test_the_peers_table_names_exists() -> None:
    named = named_tests()
    assert len(named) > 40
    missing = [(f, t) for f, t in named
               if not re.search(rf"^(async )?def {t}\(", (REPO / f).read_text(), re.MULTILINE)]
    assert missing == []


def test_every_row_has_a_status() -> None:
    rows = [line for line in DOC.splitlines() if line.startswith("| ") and "---" not in line][1:]
    statuses = [row.rstrip(" |").rpartition("| ")[2] for row in rows]
    assert all(s.startswith(("tested", "accepted", "open")) for s in statuses), statuses
    assert sum(s.startswith("open") for s in statuses) == 0  # the count the doc states
