"""Survivors of the sampled mutation run of 2026-12-04 in ``bot.core.content`` (bank, community,
lint, keys, challenges): the exact ``path:line: message`` problems admins read on ``content check``
and bank uploads, and what a loaded bank keeps."""

from __future__ import annotations

from pathlib import Path

from bot.core.content.bank import Bank, Library, fenced_code, load_bank, parse_bank
from bot.core.content.community import Suggested, check_bank_text, check_suggestion, question_yaml
from bot.core.content.keys import Outcome, key_failures
from bot.core.content.lint import library_targets, prose
from bot.core.domain.topics import TOPICS
from bot.core.render.questions import question_header

P = Path("up.yaml")


def _bank(questions: str) -> str:
    return "bank: b1\ntitle: Bank one\ndescription: Shapes and such\nquestions:\n" + questions


def _clean_bank(questions: str) -> Bank:
    """The bank of these entries, which must parse without a problem."""
    bank, problems = parse_bank(_bank(questions), P)
    assert problems == [] and bank is not None
    return bank


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
    bank = _clean_bank("  - id: c1\n    kind: flashcard\n    topic: tensors\n"
                       "    difficulty: 1\n    prompt: P\n    answer: A\n    explanation: E\n")
    assert bank.description == "Shapes and such"


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


# ---- community uploads ---------------------------------------------------------------------

def _check(text: str | bytes) -> tuple[list[str], list[str]]:
    checked = check_bank_text(text, "up.yaml", Library())
    return checked.errors, checked.warnings


CARD = ("  - id: c1\n    kind: flashcard\n    topic: tensors\n    difficulty: 1\n"   # lines 5-8
        "    prompt: P\n    answer: A\n    explanation: E\n")                        # lines 9-11


def test_upload_not_utf8_names_its_line() -> None:
    assert _check(b"bank: b1\ntitle: T\n\xff\n") == (
        ["line 3: not UTF-8 text; re-save the file as UTF-8"], [])


def test_upload_with_an_alias_inside_itself() -> None:
    assert _check("bank: b1\ntitle: T\nx: &a [*a]\nquestions: []\n") == (
        ["line 3: an alias refers to itself"], [])


def test_upload_without_questions() -> None:
    assert _check("bank: b1\ntitle: T\nquestions: []\n") == (["line 1: the bank has no questions"], [])


def test_upload_with_a_long_title() -> None:
    assert _check(f"bank: b1\ntitle: {'t' * 151}\nquestions:\n" + CARD) == (
        ["line 1: title is over 150 characters"], [])


def test_upload_with_an_overlong_snippet_points_at_its_code_key() -> None:
    text = _bank(CARD + f"    code:\n      - title: T\n        code: {'x' * 4001}\n")
    assert _check(text) == (["line 14: c1: code is 4,001 characters; at most 4,000"], [])


def test_flashcard_answer_and_explanation_are_linted_at_their_lines() -> None:
    text = _bank(CARD.replace("answer: A", "answer: \"+ one\"")
                 .replace("explanation: E", "explanation: calls __init__"))
    assert _check(text) == ([
        "line 10: c1: answer: line starts with '+ ' (renders as a bullet): '+ one'",
        "line 11: c1: explanation: __init__ outside backticks (Discord underlines it)",
    ], [])


def test_prose_drops_code_spans() -> None:
    assert prose("call `x.__init__` now") == "call  now"


def test_suggestion_with_an_empty_choice_names_the_choice() -> None:
    got = check_suggestion(prompt="P?", choices="*A; | because", explanation="E", topic="tensors",
                           difficulty=1, slug="s1", builtin=Library())
    assert got == Suggested(None, ["choice 1.text: String should have at least 1 character"])


def test_question_yaml_moves_why_not_into_the_choices() -> None:
    bank = _clean_bank(
        "  - id: q1\n    kind: mcq\n    topic: tensors\n    difficulty: 2\n    prompt: P\n"
        "    choices:\n      - A\n      - text: B\n        why_not: wrong\n"
        "    answer: A\n    explanation: E\n")
    assert question_yaml(bank.questions) == [{
        "id": "q1", "kind": "mcq", "topic": "tensors", "difficulty": 2, "prompt": "P",
        "choices": [{"text": "A"}, {"text": "B", "why_not": "wrong"}], "answer": "A", "explanation": "E",
    }]


def test_a_run_that_did_not_finish() -> None:
    bank = _clean_bank(
        "  - id: q1\n    kind: mcq\n    topic: tensors\n    difficulty: 2\n    prompt: P\n"
        "    choices:\n      - '1'\n      - text: '2'\n        why_not: wrong\n"
        "    answer: '1'\n    explanation: E\n    check: stdout\n    code:\n      - code: print(1)\n")
    outcome = Outcome(returncode=None, stdout="", stderr="", seconds=1.0)
    assert key_failures(bank.questions[0], outcome) == ["q1: check stdout: the run did not finish"]


def test_library_targets_name_each_figure() -> None:
    bank = _clean_bank(
        CARD + "  - id: q1\n    kind: mcq\n    topic: autograd\n    difficulty: 3\n    prompt: P\n"
        "    choices:\n      - A\n      - text: B\n        why_not: wrong\n"
        "    answer: A\n    explanation: E\n")
    targets = library_targets(Library(banks=[bank]))
    assert [(t.name, t.value) for t in targets[1:4:2]] == [
        ("difficulty 3 >= 30% of MCQs", "1 (100%)"),
        ("flashcards in every topic", "none in: " + ", ".join(t for t in TOPICS if t != "tensors")),
    ]


def test_question_header_of_an_untitled_kind() -> None:
    bank, _ = parse_bank(_bank(CARD), P)
    assert bank is not None
    assert question_header(bank.questions[0], "other") == "Question · Tensors · ★☆☆"
    assert question_header(bank.questions[0], "quiz", "2/5") == "Quiz 2/5 · Tensors · ★☆☆"


def test_too_many_questions_counts_the_broken_ones() -> None:
    """Bug fix: 150 broken entries and 60 good ones were refused as "60 questions" (at most 200)."""
    good = "".join(f"  - {{id: c{i}, kind: flashcard, topic: tensors, difficulty: 1, prompt: P, "
                   "answer: A, explanation: E}\n" for i in range(60))
    assert _check(_bank("  - x\n" * 150 + good)) == (
        ["line 1: 210 questions; a community bank holds at most 200"], [])
