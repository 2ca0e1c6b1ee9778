"""/bank quality for admins through the console adapter (the app built by ``build_app``), word
for word. Flagged questions: tests/learning/test_learning_report.py; Discord: test_learning_quality_discord."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.console.play import ConsoleAdapter
from bot.app import App
from tests.support.community_banks import GOOD
from tests.support.console_fixtures import Term, say

pytestmark = pytest.mark.platform("console")

NOTE = "flags need 30 answers to a question"


def _mcqs(built: App) -> int:
    return sum(1 for q in built.drill.library.questions if q.kind.value == "mcq")


async def test_console_bank_quality(console: ConsoleAdapter, term: Term, tmp_path: Path) -> None:
    out = await say(console, term, "bank quality")
    assert out.splitlines()[:5] == [
        "Question quality: built-in banks",
        f"{_mcqs(console.app)} multiple-choice questions · 0 answers · 0 flagged ({NOTE})",
        "No question is flagged.",
        "Every question's share right, discrimination, pick rates and calibrated difficulty: "
        "quality-builtin.md",
        "attached: quality-builtin.md",
    ]
    path = tmp_path / "our-loop.yaml"
    path.write_bytes(GOOD)
    await say(console, term, f"bank upload {path}")
    out = await say(console, term, "bank quality our-loop autograd")
    assert out.splitlines()[:3] == [
        "Question quality: our-loop · Autograd",
        f"2 multiple-choice questions · 0 answers · 0 flagged ({NOTE})",
        "No question is flagged.",
    ]
    [saved] = [Path(line.split("saved ", 1)[1].strip()) for line in out.splitlines() if "saved " in line]
    table = saved.read_text()
    assert "## Our loop (`our-loop`)" in table and "| question | topic | answers |" in table
    assert (await say(console, term, "bank quality nosuch")).strip() == (
        "There is no community bank 'nosuch' here; /bank list shows them, and builtin means the built-in banks.")
