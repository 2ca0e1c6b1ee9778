"""Survivors of the sampled mutation run of 2026-12-04 in ``bot.core.content`` (bank, community,
lint, keys, challenges): the exact ``path:line: message`` problems admins read on ``content check``
and bank uploads, and what a loaded bank keeps."""

from __future__ import annotations

from pathlib import Path

from bot.core.content.bank import Library, fenced_code, load_bank, parse_bank

P = Path("up.yaml")


def _bank(questions: str) -> str:
    return "bank: b1\ntitle: Bank one\ndescription: Shapes and such\nquestions:\n" + questions


MCQ = (
    "  - id: q-one\n"            # line 5
    "    kind: mcq\n"
    "    topic: tensors\n"
    "    difficulty: 1\n"
    "    prompt: Which?\n"
    "    choices:\n"              # line 10
    "      - Line 1 raises\n"     # line 11
    "      - Line 1 fails\n"      # line 12
    "    answer: Line 1 raises\n"
    "    explanation: Because.\n"
)


def _problems(text: str) -> list[str]:
    bank, problems = parse_bank(text, P)
    assert bank is None or problems
    return [str(p) for p in problems]


def test_unreadable_file_is_named_with_line_one(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"bank: \xff\n")
    bank, problems = load_bank(path)
    assert bank is None
    assert [str(p) for p in problems] == [
        f"{path}:1: cannot read file: 'utf-8' codec can't decode byte 0xff in position 6: "
        "invalid start byte"
    ]


def test_a_bank_that_is_not_a_mapping() -> None:
    assert _problems("- just\n- a list\n") == [
        "up.yaml:1: a bank file must be a mapping with 'bank', 'title' and 'questions'"
    ]


def test_header_problem_names_the_file_and_line() -> None:
    assert _problems("bank: b1\ntitle: T\nquestions: []\ncolour: red\n") == [
        "up.yaml:4: colour: Extra inputs are not permitted"
    ]


def test_a_question_that_is_not_a_mapping() -> None:
    assert _problems(_bank("  - just text\n")) == ["up.yaml:1: questions[0] must be a mapping"]


def test_description_is_kept() -> None:
    bank, problems = parse_bank(_bank("  - id: c1\n    kind: flashcard\n    topic: tensors\n"
                                      "    difficulty: 1\n    prompt: P\n    answer: A\n"
                                      "    explanation: E\n"), P)
    assert problems == []
    assert bank is not None and bank.description == "Shapes and such"


def test_check_on_a_flashcard_is_refused_at_the_check_line() -> None:
    text = _bank("  - id: c1\n    kind: flashcard\n    topic: tensors\n    difficulty: 1\n"
                 "    prompt: P\n    answer: A\n    explanation: E\n    check: stdout\n")
    assert _problems(text) == ["up.yaml:12: check: only an mcq can have an executable key"]


def test_two_raises_at_choices_naming_one_line() -> None:
    text = _bank(MCQ + "    check: raises_at\n    code:\n      - code: x = 1\n")
    assert _problems(text) == ["up.yaml:10: choices.1: two choices name line 1"]


def test_line_of_defaults_and_the_end_of_a_list() -> None:
    text = _bank(MCQ.replace("Line 1 fails", "Line 2"))
    bank, problems = parse_bank(text, P)
    assert problems == [] and bank is not None
    assert bank.line_of("nope") == 1
    assert bank.line_of("q-one", "choices", 1) == 10
    assert bank.line_of("q-one", "choices", 2) == 10


def test_a_builtin_only_community_gets_no_own_questions() -> None:
    bank, _ = parse_bank(_bank("  - id: c1\n    kind: flashcard\n    topic: tensors\n"
                               "    difficulty: 1\n    prompt: P\n    answer: A\n"
                               "    explanation: E\n"), P)
    assert bank is not None
    library = Library(banks=[bank])
    own_bank, _ = parse_bank(_bank("  - id: c2\n    kind: flashcard\n    topic: tensors\n"
                                   "    difficulty: 1\n    prompt: P\n    answer: A\n"
                                   "    explanation: E\n"), P)
    assert own_bank is not None
    library.set_community({}, {("slack", "T1"): own_bank.questions})
    assert [q.id for q in library.offered_to(("slack", "T1"), "builtin")] == ["c1"]
    assert [q.id for q in library.offered_to(("slack", "T1"))] == ["c1", "c2"]


def test_two_backticks_are_no_code() -> None:
    assert fenced_code("``") is None
    assert fenced_code("`x`") == "x"
