"""Question banks: the schema, a YAML loader that remembers line numbers, and validation.

A bank is one YAML file in ``content/``. Loading never raises for a bad bank: problems are
collected as ``path:line: message`` so ``content check`` can list them and the running bot can
skip the broken bank while serving the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from bot.core.topics import TOPICS

SLUG_RE = r"^[a-z0-9][a-z0-9-]{1,80}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_RE)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

DEFAULT_CONTENT_DIR = Path(__file__).resolve().parents[2] / "content"
NOT_BANK_FILES = {"errors.yaml"}


class Kind(StrEnum):
    MCQ = "mcq"
    FLASHCARD = "flashcard"
    DEEP_DIVE = "deep_dive"


class FieldError(ValueError):
    """A cross-field rule broken by one field, so the loader can point at that field's line."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field_name = field_name
        super().__init__(message)


class Snippet(BaseModel):
    """A code block. Runnable ones are executed on CPU torch in CI; others say why not."""

    model_config = ConfigDict(extra="forbid")

    code: Text
    title: str | None = None
    setup: str | None = Field(
        default=None, description="hidden preamble prepended when the snippet is executed"
    )
    runnable: bool = True
    reason: str | None = Field(default=None, description="why the snippet is not runnable")
    expect: list[str] = Field(
        default_factory=list, description="strings that must appear in stdout, in this order"
    )

    @model_validator(mode="after")
    def _reason_when_not_runnable(self) -> Snippet:
        if not self.runnable and not (self.reason and self.reason.strip()):
            raise ValueError("a snippet with runnable: false needs a reason")
        return self

    def program(self) -> str:
        """The exact source that is executed: the setup preamble, then the shown code."""
        return f"{self.setup.rstrip()}\n{self.code}" if self.setup else self.code


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Slug
    bank: str = ""
    kind: Kind
    topic: str
    difficulty: int = Field(ge=1, le=3)
    prompt: Text
    choices: list[Text] = Field(default_factory=list)
    answer: Text
    explanation: Text
    code: list[Snippet] = Field(default_factory=list)
    related: list[Slug] = Field(default_factory=list)
    aliases: list[Text] = Field(
        default_factory=list, description="other wordings merged into this question"
    )
    sources: list[str] = Field(
        default_factory=list, description="source refs such as '002#17' this question covers"
    )
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_kind(self) -> Question:
        if self.topic not in TOPICS:
            raise FieldError("topic", f"unknown topic {self.topic!r} (known: {', '.join(TOPICS)})")
        if self.kind is Kind.MCQ:
            if len(self.choices) < 2:
                raise FieldError("choices", "an mcq needs at least two choices")
            if self.answer not in self.choices:
                raise FieldError("answer", "the mcq answer is not among its choices")
            if len(set(self.choices)) != len(self.choices):
                raise FieldError("choices", "the mcq has duplicate choices")
        elif self.choices:
            raise FieldError("choices", f"a {self.kind.value} has no choices")
        return self

    @property
    def answer_index(self) -> int:
        return self.choices.index(self.answer)


class BankHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bank: Slug
    title: Text
    description: str = ""
    source: str | None = None
    questions: list[Any]


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class Bank:
    id: str
    title: str
    path: Path
    description: str = ""
    source: str | None = None
    questions: list[Question] = field(default_factory=list)
    # question id -> line of the question / of its 'related' key, for library-level problems
    question_lines: dict[str, int] = field(default_factory=dict)
    related_lines: dict[str, int] = field(default_factory=dict)


@dataclass
class Library:
    """Every loaded bank plus what went wrong; the question index is what the core serves."""

    banks: list[Bank] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_id: dict[str, Question] = {}
        self._reindex()

    def _reindex(self) -> None:
        self._by_id = {q.id: q for b in self.banks for q in b.questions}

    @property
    def questions(self) -> list[Question]:
        return [q for b in self.banks for q in b.questions]

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id)

    def __getitem__(self, question_id: str) -> Question:
        return self._by_id[question_id]

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def topics_in_use(self) -> list[str]:
        used = {q.topic for q in self.questions}
        return [t for t in TOPICS if t in used]


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that records the 1-based line of every mapping as key ``__line__``."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        key_lines = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_lines[key_node.value] = key_node.start_mark.line + 1
        mapping["__key_lines__"] = key_lines
        return mapping


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_lines(v) for k, v in value.items() if k not in ("__line__", "__key_lines__")
        }
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _line_of(raw: Any, loc: Iterable[Any], default: int) -> int:
    """Walk a pydantic error location through the raw YAML to the deepest known line."""
    line = default
    node = raw
    for part in loc:
        if isinstance(node, dict):
            line = node.get("__key_lines__", {}).get(part, node.get("__line__", line))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            if isinstance(node, dict):
                line = node.get("__line__", line)
        else:
            break
    return line


def _error_loc(err: Any) -> tuple[Any, ...]:
    """The error's location, extended by the field a cross-field rule blamed."""
    loc = tuple(p for p in err["loc"] if not str(p).startswith("function-after"))
    cause = err.get("ctx", {}).get("error")
    return (*loc, cause.field_name) if isinstance(cause, FieldError) else loc


def _format_error(err: Any) -> str:
    where = ".".join(str(p) for p in _error_loc(err))
    msg = err["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg


def load_bank(path: Path) -> tuple[Bank | None, list[Problem]]:
    """Parse and validate one bank file. Returns (bank or None, problems)."""
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(path, 1, f"cannot read file: {exc}")]
    try:
        raw = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and context_mark and context_mark.line + 1 != line:
            problem += f" ({context} started at line {context_mark.line + 1})"
        return None, [Problem(path, line, f"invalid YAML: {problem}")]
    if not isinstance(raw, dict):
        return None, [Problem(path, 1, "a bank file must be a mapping with 'bank', 'title' and 'questions'")]

    try:
        header = BankHeader.model_validate(_strip_lines(raw))
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem(path, _line_of(raw, _error_loc(err), 1), _format_error(err)))
        return None, problems

    bank = Bank(
        id=header.bank,
        title=header.title,
        path=path,
        description=header.description,
        source=header.source,
    )
    seen: dict[str, int] = {}
    raw_questions = raw["questions"]
    for index, raw_q in enumerate(raw_questions):
        line = raw_q.get("__line__", 1) if isinstance(raw_q, dict) else 1
        if not isinstance(raw_q, dict):
            problems.append(Problem(path, line, f"questions[{index}] must be a mapping"))
            continue
        data = _strip_lines(raw_q)
        data.setdefault("bank", header.bank)
        try:
            question = Question.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                problems.append(
                    Problem(path, _line_of(raw_q, _error_loc(err), line), _format_error(err))
                )
            continue
        if question.id in seen:
            problems.append(
                Problem(path, line, f"duplicate id {question.id!r} (first at line {seen[question.id]})")
            )
            continue
        seen[question.id] = line
        bank.questions.append(question)
        bank.question_lines[question.id] = line
        bank.related_lines[question.id] = _line_of(raw_q, ("related",), line)
    return bank, problems


def bank_files(content_dir: Path) -> list[Path]:
    return sorted(p for p in content_dir.glob("*.yaml") if p.name not in NOT_BANK_FILES)


def load_library(content_dir: Path | None = None, extra_files: Iterable[Path] = ()) -> Library:
    """Load every bank. A bank with any problem is skipped whole and reported, never fatal."""
    content_dir = content_dir or DEFAULT_CONTENT_DIR
    library = Library()
    files = [*bank_files(content_dir), *extra_files]
    global_ids: dict[str, Path] = {}
    for path in files:
        bank, problems = load_bank(path)
        if bank is not None:
            for q in bank.questions:
                if q.id in global_ids:
                    problems.append(
                        Problem(
                            path,
                            bank.question_lines.get(q.id, 1),
                            f"id {q.id!r} is already used in {global_ids[q.id].name}",
                        )
                    )
        if problems or bank is None:
            library.problems.extend(problems)
            library.skipped.append(path)
            continue
        for q in bank.questions:
            global_ids[q.id] = path
        library.banks.append(bank)
    library._reindex()
    for bank in library.banks:
        for q in bank.questions:
            for rel in q.related:
                if rel not in library:
                    library.problems.append(
                        Problem(
                            bank.path,
                            bank.related_lines.get(q.id, 1),
                            f"{q.id}: related id {rel!r} does not exist",
                        )
                    )
    return library


_FENCE_RE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.DOTALL)


def fenced_code(text: str) -> str | None:
    """The first fenced code block of a chat message, used by 'Run code' shortcuts."""
    match = _FENCE_RE.search(text)
    if match:
        return match.group(1)
    stripped = text.strip()
    if stripped.startswith("`") and stripped.endswith("`") and len(stripped) > 2:
        return stripped.strip("`")
    return None
