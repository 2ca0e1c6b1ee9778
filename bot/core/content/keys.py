"""Executable answer keys: what a run of a bank snippet must show for the bank to be right.

The rules live here, apart from how snippets are run (bot/snippet_pool.py), so CI and
``torchdrill content check --run`` judge an outcome the same way and name the question.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.content.bank import RUNS_CLEAN, Check, Question, Snippet, choice_line, printed_form


@dataclass(frozen=True)
class Outcome:
    """What happened when one snippet's program ran."""

    returncode: int | None  # None when the run timed out or its process died
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None  # "ValueError: ..." when the program raised
    error_line: int | None = None  # line of the deepest frame in the program (setup included)
    note: str | None = None  # why there is no returncode (timeout, crash)

    @property
    def last_line(self) -> str | None:
        lines = [line.strip() for line in self.stdout.splitlines() if line.strip()]
        return lines[-1] if lines else None

    def happened(self, snippet: Snippet) -> str:
        """One line for a failure message: what the run actually did."""
        if self.returncode is None:
            return self.note or "the run did not finish"
        if self.error:
            shown = self.shown_line(snippet)
            where = f"line {shown}" if shown else "the hidden setup" if self.error_line else "?"
            return f"raised {self.error} at {where}"
        last = self.last_line
        return f"exited {self.returncode} and printed last {last!r}" if last else (
            f"exited {self.returncode} and printed nothing")

    def shown_line(self, snippet: Snippet) -> int | None:
        """The error's line counted in the shown code (None if in the setup or unknown)."""
        if self.error_line is None:
            return None
        line = self.error_line - snippet.setup_lines
        return line if line >= 1 else None


def missing_expectations(stdout: str, expect: list[str]) -> list[str]:
    """The expected strings not found in stdout in the given order (empty when all match)."""
    position = 0
    for index, wanted in enumerate(expect):
        found = stdout.find(wanted, position)
        if found < 0:
            return expect[index:]
        position = found + len(wanted)
    return []


def key_failures(question: Question, outcome: Outcome) -> list[str]:
    """Why the run contradicts the question's executable key (empty when the key is right)."""
    snippet = question.shown_snippet
    if question.check is None or snippet is None:
        return []
    if outcome.returncode is None:
        return [f"{question.id}: check {question.check.value}: {outcome.happened(snippet)}"]
    if question.check is Check.STDOUT:
        return _stdout_failures(question, snippet, outcome)
    return _raises_at_failures(question, snippet, outcome)


def _stdout_failures(question: Question, snippet: Snippet, outcome: Outcome) -> list[str]:
    prefix = f"{question.id}: check stdout:"
    if outcome.returncode != 0:
        return [f"{prefix} the snippet {outcome.happened(snippet)}"]
    last = outcome.last_line
    if last is None:
        return [f"{prefix} the snippet printed nothing"]
    failures = []
    if printed_form(question.answer) != last:
        failures.append(f"{prefix} keyed choice {question.answer!r} but the snippet printed {last!r}")
    for choice in question.choices:
        if choice != question.answer and printed_form(choice) == last:
            failures.append(f"{prefix} distractor {choice!r} is what the snippet printed")
    return failures


def _raises_at_failures(question: Question, snippet: Snippet, outcome: Outcome) -> list[str]:
    prefix = f"{question.id}: check raises_at:"
    if outcome.error is None:
        if outcome.returncode != 0:
            return [f"{prefix} the snippet {outcome.happened(snippet)}"]
        if question.answer != RUNS_CLEAN:
            return [f"{prefix} keyed {question.answer!r} but the snippet ran without an error"]
        return []
    line = outcome.shown_line(snippet)
    if line is None:
        return [f"{prefix} the snippet {outcome.happened(snippet)}, not in the shown code"]
    actual = f"Line {line}"
    failures = []
    if choice_line(question.answer) != line:
        failures.append(f"{prefix} keyed {question.answer!r} but the snippet raised "
                        f"{outcome.error} at line {line}")
    for choice in question.choices:
        if choice != question.answer and choice_line(choice) == line:
            failures.append(f"{prefix} distractor {choice!r} is where it raised ({actual})")
    return failures


def snippet_failures(question: Question, index: int, outcome: Outcome) -> list[str]:
    """Why snippet ``index`` (0-based) of the question is wrong: its key, its exit, its expect."""
    snippet = question.code[index]
    name = f"{question.id}#{index + 1}"
    if snippet is question.shown_snippet:
        failures = key_failures(question, outcome)
    elif outcome.returncode is None:
        failures = [f"{name}: {outcome.happened(snippet)}"]
    elif outcome.returncode != 0:
        failures = [f"{name}: the snippet {outcome.happened(snippet)}"]
    else:
        failures = []
    missing = missing_expectations(outcome.stdout, snippet.expect)
    if missing and outcome.returncode is not None:
        failures.append(f"{name}: expected output not found in order: {missing}")
    return failures
