"""The executable-key judge on given outcomes (no process runs here): what counts as the key
being right, and what each failure message says."""

from __future__ import annotations

from bot.core.content.bank import Question, choice_line, printed_form
from bot.core.content.keys import Outcome, key_failures, snippet_failures


def question(check: str, answer: str, others: list[str], code: str = "a\nb\nc", setup: str | None = None,
             expect: list[str] | None = None) -> Question:
    snippet: dict = {"code": code, "expect": expect or []}
    if setup:
        snippet["setup"] = setup
    return Question.model_validate({
        "id": "key-q", "kind": "mcq", "topic": "tensors", "difficulty": 1, "prompt": "What happens?",
        "choices": [{"text": answer}, *({"text": o, "why_not": "No."} for o in others)],
        "answer": answer, "explanation": "Because.", "check": check, "code": [snippet]})


def ran(stdout: str = "", returncode: int | None = 0, error: str | None = None,
        line: int | None = None, note: str | None = None) -> Outcome:
    return Outcome(returncode, stdout, "", 0.1, error=error, error_line=line, note=note)


def test_printed_form_and_choice_line() -> None:
    assert printed_form(" `torch.Size([6])` ") == "torch.Size([6])"
    assert printed_form("``x``") == "`x`"  # one pair only
    assert printed_form("6") == "6"
    assert choice_line("Line 12: the call") == 12
    assert choice_line("Line 3") == 3
    assert choice_line("Lines 3") is None and choice_line("It runs without an error") is None


def test_stdout_key_is_the_last_non_empty_line() -> None:
    q = question("stdout", "`6`", ["`7`", "`8`"])
    assert key_failures(q, ran("debug 1\n6  \n\n")) == []
    assert key_failures(q, ran("6\n7\n")) == [
        "key-q: check stdout: keyed choice '`6`' but the snippet printed '7'",
        "key-q: check stdout: distractor '`7`' is what the snippet printed",
    ]
    assert key_failures(q, ran("")) == ["key-q: check stdout: the snippet printed nothing"]
    assert key_failures(q, ran("6\n", returncode=2)) == [
        "key-q: check stdout: the snippet exited 2 and printed last '6'"]
    assert key_failures(q, ran(returncode=None, note="timed out after 120s")) == [
        "key-q: check stdout: timed out after 120s"]


def test_raises_at_counts_lines_in_the_shown_code() -> None:
    q = question("raises_at", "Line 2", ["Line 1", "It runs without an error"], setup="import torch\nx = 1")
    assert key_failures(q, ran(returncode=1, error="RuntimeError: boom", line=4)) == []
    assert key_failures(q, ran(returncode=1, error="RuntimeError: boom", line=3)) == [
        "key-q: check raises_at: keyed 'Line 2' but the snippet raised RuntimeError: boom at line 1",
        "key-q: check raises_at: distractor 'Line 1' is where it raised (Line 1)",
    ]
    assert key_failures(q, ran(returncode=1, error="NameError: y", line=2)) == [
        "key-q: check raises_at: the snippet raised NameError: y at the hidden setup, not in the shown code"]
    assert key_failures(q, ran("ok\n")) == [
        "key-q: check raises_at: keyed 'Line 2' but the snippet ran without an error"]
    assert key_failures(q, ran(returncode=1)) == [
        "key-q: check raises_at: the snippet exited 1 and printed nothing"]


def test_runs_clean_key() -> None:
    q = question("raises_at", "It runs without an error", ["Line 1", "Line 3"])
    assert key_failures(q, ran("done\n")) == []
    assert key_failures(q, ran(returncode=1, error="ValueError: no", line=3)) == [
        "key-q: check raises_at: keyed 'It runs without an error' but the snippet raised ValueError: no at line 3",
        "key-q: check raises_at: distractor 'Line 3' is where it raised (Line 3)",
    ]


def test_expect_is_checked_with_the_key() -> None:
    q = question("stdout", "`6`", ["`7`"], expect=["start", "6"])
    assert snippet_failures(q, 0, ran("start\n6\n")) == []
    assert snippet_failures(q, 0, ran("6\n")) == ["key-q#1: expected output not found in order: ['start', '6']"]
