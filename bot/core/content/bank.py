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
    field_validator,
    model_validator,
)

from bot.core.domain.topics import TOPICS

SLUG_RE = r"^[a-z0-9][a-z0-9-]{1,80}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_RE)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

DEFAULT_CONTENT_DIR = Path(__file__).resolve().parents[3] / "content"
NOT_BANK_FILES = {"errors.yaml", "verified.yaml", "tracks.yaml"}  # the error catalog; the pinned torch version; /mock tracks


class Kind(StrEnum):
    MCQ = "mcq"
    FLASHCARD = "flashcard"
    DEEP_DIVE = "deep_dive"


class Check(StrEnum):
    """How CI verifies an executable MCQ's key by running its snippet."""

    STDOUT = "stdout"  # the last printed line is the keyed choice
    RAISES_AT = "raises_at"  # the keyed choice names the line that raises


class Area(StrEnum):
    """The depth areas strong interviews probe (issue 35); ``content stats`` counts each."""

    DISTRIBUTED = "distributed"
    AUTOGRAD_INTERNALS = "autograd-internals"
    COMPILE = "compile"
    MEMORY_PERF = "memory-perf"
    NUMERICS = "numerics"


class Skill(StrEnum):
    """What a question asks of a member: recall a name or definition, reason, or read code."""

    RECALL = "recall"
    REASONING = "reasoning"
    CODE = "code"


class DeviceClaim(StrEnum):
    """A question whose claim holds on that device only: CPU CI does not execute it."""

    CUDA = "cuda"


def _one_of(kind: str, enum: type[StrEnum], value: Any) -> Any:
    """A readable error for a value outside a small fixed list (pydantic's names the enum)."""
    if value is not None and value not in {e.value for e in enum}:
        raise ValueError(f"unknown {kind} {value!r} (known: {', '.join(e.value for e in enum)})")
    return value


RUNS_CLEAN = "It runs without an error"
# Shown after the prompt of every raises_at question: a traceback passes through several lines
# of the snippet (a call, then the function it calls); the keyed line is the deepest of them.
RAISES_AT_RULE = "(The answer is the deepest line of the snippet in the traceback.)"
_LINE_CHOICE_RE = re.compile(r"^Line (\d+)\b")


def choice_line(choice: str) -> int | None:
    """N for a raises_at choice "Line N…", None for RUNS_CLEAN (or anything else)."""
    match = _LINE_CHOICE_RE.match(choice)
    return int(match.group(1)) if match else None


def printed_form(choice: str) -> str:
    """A stdout choice as printed: stripped, with one surrounding pair of backticks removed."""
    text = choice.strip()
    if len(text) >= 2 and text.startswith("`") and text.endswith("`"):
        text = text[1:-1]
    return text.strip()


class FieldError(ValueError):
    """A cross-field rule broken by one field, so the loader can point at that field's line.

    ``field_name`` may be a path such as ``("choices", 2)`` to point inside a list.
    """

    def __init__(self, field_name: str | tuple[str | int, ...], message: str) -> None:
        self.path = field_name if isinstance(field_name, tuple) else (field_name,)
        self.field_name = self.path[0]
        super().__init__(message)


class Choice(BaseModel):
    """The object form of an MCQ choice: its text and, for a distractor, why it is wrong."""

    model_config = ConfigDict(extra="forbid")

    text: Text
    why_not: Text | None = None


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
    isolate: bool = Field(
        default=False,
        description="run in its own interpreter (threads, DDP, multiprocessing), not a warm one",
    )

    @model_validator(mode="after")
    def _reason_when_not_runnable(self) -> Snippet:
        if not self.runnable and not (self.reason and self.reason.strip()):
            raise ValueError("a snippet with runnable: false needs a reason")
        return self

    def program(self) -> str:
        """The exact source that is executed: the setup preamble, then the shown code."""
        return f"{self.setup.rstrip()}\n{self.code}" if self.setup else self.code

    @property
    def setup_lines(self) -> int:
        """Lines of the hidden preamble: program line L is shown line L - setup_lines."""
        return self.setup.rstrip().count("\n") + 1 if self.setup else 0


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Slug
    bank: str = ""
    kind: Kind
    topic: str
    difficulty: int = Field(ge=1, le=3)
    prompt: Text
    choices: list[Text] = Field(
        default_factory=list, description="choice texts; YAML may give {text, why_not} objects"
    )
    why_not: dict[str, str] = Field(
        default_factory=dict, description="distractor text -> why it is wrong (from the choices)"
    )
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
    check: Check | None = Field(
        default=None, description="executable key: CI runs the one snippet and checks the key"
    )
    twin_of: Slug | None = Field(
        default=None, description="another version of the same question; never both in a cycle"
    )
    area: Area | None = Field(default=None, description="depth area (content stats counts them)")
    skill: Skill | None = Field(
        default=None, description="recall, reasoning or code; see effective_skill for the default"
    )
    device: DeviceClaim | None = Field(
        default=None, description="the claim is device-specific: CPU CI skips running it"
    )

    @field_validator("area", mode="before")
    @classmethod
    def _known_area(cls, value: Any) -> Any:
        return _one_of("area", Area, value)

    @field_validator("skill", mode="before")
    @classmethod
    def _known_skill(cls, value: Any) -> Any:
        return _one_of("skill", Skill, value)

    @field_validator("device", mode="before")
    @classmethod
    def _known_device(cls, value: Any) -> Any:
        return _one_of("device", DeviceClaim, value)

    @model_validator(mode="before")
    @classmethod
    def _normalise_choices(cls, data: Any) -> Any:
        """Object choices become their text; their why_not moves to ``why_not``."""
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            return data
        texts: list[Any] = []
        why_not = dict(data.get("why_not") or {}) if isinstance(data.get("why_not"), dict) else {}
        for index, item in enumerate(data["choices"]):
            if not isinstance(item, dict):
                texts.append(item)
                continue
            try:
                choice = Choice.model_validate(item)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise FieldError(("choices", index, *err["loc"]), err["msg"]) from None
            texts.append(choice.text)
            if choice.why_not:
                why_not[choice.text] = choice.why_not
        return {**data, "choices": texts, "why_not": why_not}

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
            if self.answer in self.why_not:
                raise FieldError(("choices", self.answer_index),
                                 "the keyed choice must not have a why_not")
            stray = [t for t in self.why_not if t not in self.choices]
            if stray:
                raise FieldError("why_not", f"why_not for a text that is not a choice: {stray[0]!r}")
        elif self.choices:
            raise FieldError("choices", f"a {self.kind.value} has no choices")
        if self.check is not None:
            self._check_executable()
        if self.twin_of == self.id:
            raise FieldError("twin_of", "a question cannot be its own twin")
        return self

    def _check_executable(self) -> None:
        """An executable key: one runnable snippet, and choices of the form the check compares."""
        if self.kind is not Kind.MCQ:
            raise FieldError("check", "only an mcq can have an executable key")
        if len(self.code) != 1 or not self.code[0].runnable:
            raise FieldError("code", f"check: {self.check} needs exactly one runnable snippet")
        if self.check is Check.STDOUT:
            printed = [printed_form(c) for c in self.choices]
            if len(set(printed)) != len(printed):
                raise FieldError("choices", "two choices print the same text once backticks are removed")
            return
        n_lines = self.code[0].code.rstrip().count("\n") + 1
        seen: dict[int | None, int] = {}
        for index, choice in enumerate(self.choices):
            line = choice_line(choice)
            if line is None and choice != RUNS_CLEAN:
                raise FieldError(("choices", index),
                                 f"a raises_at choice is 'Line N…' or exactly {RUNS_CLEAN!r}")
            if line is not None and not 1 <= line <= n_lines:
                raise FieldError(("choices", index), f"line {line} is outside the snippet (1-{n_lines})")
            if line in seen:
                raise FieldError(("choices", index), f"two choices name line {line}")
            seen[line] = index

    @property
    def shown_prompt(self) -> str:
        """The prompt as every surface shows it: a raises_at question adds the shared rule."""
        return f"{self.prompt} {RAISES_AT_RULE}" if self.check is Check.RAISES_AT else self.prompt

    @property
    def shown_snippet(self) -> Snippet | None:
        """The snippet shown with the question itself (executable MCQs), not only in the answer."""
        return self.code[0] if self.check is not None and self.code else None

    @property
    def effective_skill(self) -> Skill:
        """The declared skill, else ``code`` for an MCQ with a checked snippet, else reasoning."""
        if self.skill is not None:
            return self.skill
        return Skill.CODE if self.kind is Kind.MCQ and self.check is not None else Skill.REASONING

    @property
    def cpu_runnable(self) -> bool:
        """Whether CPU CI executes this question's snippets (device claims run on their device)."""
        return self.device is None

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
    warning: bool = False  # content lints may only warn; schema problems are always errors

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {'warning: ' if self.warning else ''}{self.message}"


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
    # question id -> its raw YAML mapping (with line marks), so lints can point at any field
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    header_line: int = 1
    entries: int = 0  # question entries in the file, the broken ones too (a bank's size limit)

    def line_of(self, question_id: str, *loc: str | int) -> int:
        """Line of a field of a question, e.g. ``line_of(qid, "choices", 2, "why_not")``."""
        default = self.question_lines.get(question_id, 1)
        raw = self.raw.get(question_id)
        return _line_of(raw, loc, default) if raw is not None else default


@dataclass
class Library:
    """Every loaded bank plus what went wrong; the question index is what the core serves."""

    banks: list[Bank] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_id: dict[str, Question] = {}
        # Community banks (bot.core.content.community): every served id of every community,
        # retired ones included, so any post still renders; and what each community may be
        # offered, keyed (platform, workspace). Kept in step with the database by the Shelf.
        self.community: dict[str, Question] = {}
        self.offered: dict[tuple[str, str], list[Question]] = {}
        self._reindex()

    def _reindex(self) -> None:
        self._by_id = {q.id: q for b in self.banks for q in b.questions}

    @property
    def questions(self) -> list[Question]:
        """The built-in questions (community ones are offered only to their community)."""
        return [q for b in self.banks for q in b.questions]

    def offered_to(self, community: tuple[str, str] | None, source: str = "both") -> list[Question]:
        """What a community may be served: built-in, its own banks' questions, or both."""
        builtin = self.questions if source != "community" or community is None else []
        own = self.offered.get(community, []) if community is not None and source != "builtin" else []
        return [*builtin, *own]

    def set_community(self, every: dict[str, Question], offered: dict[tuple[str, str], list[Question]]) -> None:
        self.community, self.offered = every, offered

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id) or self.community.get(question_id)

    def __getitem__(self, question_id: str) -> Question:
        found = self.get(question_id)
        if found is None:
            raise KeyError(question_id)
        return found

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id or question_id in self.community

    def __len__(self) -> int:
        return len(self._by_id)

    def topics_in_use(self) -> list[str]:
        used = {q.topic for q in self.questions}
        return [t for t in TOPICS if t in used]

    def bank_of(self, question_id: str) -> Bank | None:
        return next((b for b in self.banks if any(q.id == question_id for q in b.questions)), None)


def twin_groups(questions: Iterable[Question]) -> dict[str, frozenset[str]]:
    """Question id -> every id linked to it by ``twin_of`` (either direction, transitively)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for q in questions:
        find(q.id)
        if q.twin_of:
            parent[find(q.id)] = find(q.twin_of)
    groups: dict[str, set[str]] = {}
    for qid in parent:
        groups.setdefault(find(qid), set()).add(qid)
    return {qid: frozenset(groups[find(qid)]) for qid in parent}


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
    loc = tuple(p for p in err["loc"] if not str(p).startswith(("function-after", "function-before")))
    cause = err.get("ctx", {}).get("error")
    return (*loc, *cause.path) if isinstance(cause, FieldError) else loc


def _format_error(err: Any) -> str:
    where = ".".join(str(p) for p in _error_loc(err))
    msg = err["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg


def load_bank(path: Path) -> tuple[Bank | None, list[Problem]]:
    """Parse and validate one bank file. Returns (bank or None, problems)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(path, 1, f"cannot read file: {exc}")]
    return parse_bank(text, path)


def parse_bank(text: str, path: Path) -> tuple[Bank | None, list[Problem]]:
    """Parse and validate a bank's text; ``path`` names it in problems (a file or an upload)."""
    problems: list[Problem] = []
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
        header_line=raw.get("__key_lines__", {}).get("bank", 1),
    )
    seen: dict[str, int] = {}
    raw_questions = raw["questions"]
    bank.entries = len(raw_questions)
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
        bank.raw[question.id] = raw_q
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
            if q.twin_of and q.twin_of not in library:
                library.problems.append(
                    Problem(bank.path, bank.line_of(q.id, "twin_of"),
                            f"{q.id}: twin_of id {q.twin_of!r} does not exist")
                )
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
