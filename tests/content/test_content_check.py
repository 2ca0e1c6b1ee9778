"""`torchdrill content check` on malformed banks: every problem names the file and the right line.

Each fixture in tests/fixtures/banks/ breaks exactly one rule; the expected line is found by
searching the fixture for the offending text, so the tests stay honest if a fixture is edited.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.core.content.bank import load_library
from bot.core.domain.topics import TOPICS
from tests.support.content_check import BANKS, line_of

PROBLEM_RE = re.compile(r"^(?P<path>.+?\.yaml):(?P<line>\d+): (?P<message>.+)$")


def check(*files: Path) -> tuple[int, list[tuple[str, int, str]], str]:
    result = CliRunner().invoke(app, ["content", "check", *map(str, files)])
    problems = []
    for line in result.output.splitlines():
        match = PROBLEM_RE.match(line)
        if match:
            problems.append((match["path"], int(match["line"]), match["message"]))
    return result.exit_code, problems, result.output


CASES = [
    # (fixture, text on the line the problem must point at, occurrence, words in the message)
    ("duplicate_id.yaml", "- id: dup-same", 2, "duplicate id 'dup-same' (first at line 4)"),
    ("unknown_topic.yaml", "topic: quantum-tensors", 1, "unknown topic 'quantum-tensors'"),
    ("mcq_answer_not_choice.yaml", "answer: raw logits", 1, "answer is not among its choices"),
    ("missing_explanation.yaml", "- id: expl-missing", 1, "explanation: Field required"),
    ("invalid_yaml.yaml", "prompt: Answer this:", 1, "invalid YAML"),
    ("invalid_yaml_unclosed.yaml", "- id: yaml-two", 1, "started at line 10"),
    ("snippet_without_reason.yaml", "- code: |", 1, "runnable: false needs a reason"),
    ("related_missing.yaml", "related: [related-target-gone]", 1,
     "related id 'related-target-gone' does not exist"),
]


@pytest.mark.parametrize(("fixture", "marker", "occurrence", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_check_reports_path_and_right_line(
    fixture: str, marker: str, occurrence: int, message: str
) -> None:
    path = BANKS / fixture
    code, problems, output = check(path)
    assert code == 1, output
    assert len(problems) == 1, output
    reported_path, line, text = problems[0]
    assert reported_path == str(path)
    assert line == line_of(path, marker, occurrence), output
    assert message in text, output


def test_check_passes_a_good_bank() -> None:
    code, problems, output = check(BANKS / "good.yaml")
    assert code == 0, output
    assert problems == []
    assert "ok: 1 bank(s), 2 questions" in output


def test_check_reports_every_broken_file_in_one_run() -> None:
    files = [BANKS / name for name, *_ in CASES]
    code, problems, output = check(BANKS / "good.yaml", *files)
    assert code == 1
    assert sorted(Path(p).name for p, _, _ in problems) == sorted(f.name for f in files), output


def test_same_id_in_two_banks_points_at_the_second_question(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    shutil.copy(BANKS / "good.yaml", first)
    second = tmp_path / "b.yaml"
    second.write_text(
        (BANKS / "good.yaml").read_text().replace("bank: fixture-good", "bank: fixture-copy")
    )
    code, problems, output = check(first, second)
    assert code == 1
    assert (str(second), line_of(second, "- id: good-one"),
            "id 'good-one' is already used in a.yaml") in problems, output


def test_library_skips_the_broken_bank_and_serves_the_good_one(tmp_path: Path) -> None:
    shutil.copy(BANKS / "good.yaml", tmp_path / "good.yaml")
    shutil.copy(BANKS / "unknown_topic.yaml", tmp_path / "broken.yaml")
    library = load_library(tmp_path)
    assert [bank.id for bank in library.banks] == ["fixture-good"]
    assert {q.id for q in library.questions} == {"good-one", "good-two"}
    assert "topic-fine" not in library  # a bank with any problem is skipped whole
    assert library.skipped == [tmp_path / "broken.yaml"]
    assert [str(p) for p in library.problems] == [
        f"{tmp_path / 'broken.yaml'}:{line_of(tmp_path / 'broken.yaml', 'topic: quantum')}: "
        f"topic: unknown topic 'quantum-tensors' (known: {', '.join(TOPICS)})"
    ]


def test_check_without_arguments_uses_the_content_dir(tmp_path: Path) -> None:
    shutil.copy(BANKS / "good.yaml", tmp_path / "good.yaml")
    shutil.copy(BANKS / "duplicate_id.yaml", tmp_path / "dup.yaml")
    result = CliRunner().invoke(app, ["content", "check", "--content-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert f"{tmp_path / 'dup.yaml'}:{line_of(tmp_path / 'dup.yaml', '- id: dup-same', 2)}:" in (
        result.output
    )
    assert "1 problem(s), 0 warning(s); 1 bank(s) skipped" in result.output
