"""The README's bank figures are counted from the banks, so the front door never overstates them;
the figures moved to docs/ are checked where they now live (docs/challenges.md:
tests/challenges/test_challenges_bank.py, docs/commands.md: tests/commands/test_command_catalogue.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.core.content.bank import Kind, load_library

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def figure(pattern: str) -> int:
    found = re.search(pattern.replace(" ", r"\s+"), README)  # a figure may wrap across lines
    assert found, f"README lost the figure {pattern!r}"
    return int(found.group(1).replace(",", ""))


def test_the_readme_stays_a_front_door() -> None:
    """At most 15 KB (issue 31): dated runs and long notes live in docs/."""
    assert len(README.encode()) <= 15_000


def test_bank_counts_in_the_readme_are_the_banks() -> None:
    library = load_library()
    mcqs = [q for q in library.questions if q.kind is Kind.MCQ]
    executable = [q for q in mcqs if q.check is not None]
    runnable = [(q, s) for q in library.questions for s in q.code if s.runnable]
    on_cpu = [s for q, s in runnable if q.device is None]
    assert figure(r"hold ([\d,]+) questions") == len(library)
    assert figure(r"questions in ([\d,]+) banks") == len(library.banks)
    assert figure(r"([\d,]+) of them multiple choice") == len(mcqs)
    assert figure(r"([\d,]+) MCQs have executable answer keys") == len(executable)
    assert figure(r"CI executes all ([\d,]+) runnable code snippets") == len(on_cpu)
    assert figure(r"the ([\d,]+) snippets marked") == len(runnable) - len(on_cpu)


def test_challenge_counts_in_the_readme_are_the_bank() -> None:
    from bot.core.content.challenges import load_challenges

    bank = load_challenges()
    assert figure(r"([\d,]+) problems, [\d,]+ of difficulty 3") == len(bank.challenges)
    assert figure(r"[\d,]+ problems, ([\d,]+) of difficulty 3") == sum(
        1 for c in bank.challenges if c.difficulty == 3)
