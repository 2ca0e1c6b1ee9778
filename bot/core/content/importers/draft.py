"""The draft bank every importer produces, and its YAML rendering.

Importers only parse; ids, topics, explanations, validation and YAML layout are decided here
once, so the four formats yield drafts that look alike and always pass ``load_bank``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bot.core.content.bank import SLUG_RE, BankHeader, Kind, Question
from bot.core.content.importers.guess import guess_topic
from bot.core.content.importers.text import first_sentence, slugify

DRAFT_DIFFICULTY = 2
DRAFT_SNIPPET_REASON = "imported draft: a curator has not run this code yet"
MAX_ID_LEN = 72


class ImportFormatError(ValueError):
    """Input that cannot be turned into a draft; the message reads ``path:line: problem``."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = message
        super().__init__(f"{path}:{line}: {message}")


@dataclass
class DraftQuestion:
    """One parsed item; ``line`` is where it starts in the source, for error messages."""

    line: int
    kind: Kind
    prompt: str
    answer: str
    choices: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    source_number: int | None = None
    id_text: str | None = None  # what the id is made from when the prompt is a placeholder
    explanation: str | None = None
    topic: str | None = None


@dataclass
class DraftBank:
    title: str
    questions: list[DraftQuestion]
    description: str = ""
    notes: list[str] = field(default_factory=list)  # shown to the curator as YAML comments


def default_bank_id(path: Path) -> str:
    return slugify(path.stem, max_len=40) or "imported"


def source_doc(path: Path) -> str:
    """The document part of a source ref: the leading number of seed files ('002_x.txt' -> '002')."""
    match = re.match(r"(\d+)[_-]", path.name)
    return match.group(1) if match else default_bank_id(path)


def _id_prefix(bank_id: str) -> str:
    return slugify(bank_id, max_len=12) or bank_id[:12].rstrip("-")


def _unique_id(prefix: str, text: str, used: set[str]) -> str:
    base = f"{prefix}-{slugify(text, max_len=MAX_ID_LEN - len(prefix) - 4) or 'question'}"
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate


def draft_records(draft: DraftBank, path: Path, bank_id: str) -> dict[str, Any]:
    """The bank as plain data in schema order, each question validated against the real schema."""
    if not re.match(SLUG_RE, bank_id):
        raise ImportFormatError(path, 1, f"bank id {bank_id!r} must be lowercase letters, "
                                         "digits and dashes (2 to 81 characters)")
    if not draft.questions:
        raise ImportFormatError(path, 1, "no questions found")
    prefix, used, doc = _id_prefix(bank_id), set[str](), source_doc(path)
    questions: list[dict[str, Any]] = []
    for q in draft.questions:
        record: dict[str, Any] = {
            "id": _unique_id(prefix, q.id_text or q.prompt, used),
            "kind": q.kind.value,
            "topic": q.topic or guess_topic(q.prompt, q.answer),
            "difficulty": DRAFT_DIFFICULTY,
            "prompt": q.prompt,
        }
        if q.choices:
            record["choices"] = q.choices
        record["answer"] = q.answer
        record["explanation"] = q.explanation or first_sentence(q.answer)
        if q.code:
            record["code"] = [
                {"code": c, "runnable": False, "reason": DRAFT_SNIPPET_REASON} for c in q.code
            ]
        if q.source_number is not None:
            record["sources"] = [f"{doc}#{q.source_number}"]
        if q.tags:
            record["tags"] = list(dict.fromkeys(q.tags))
        try:
            Question.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            msg = first["msg"].removeprefix("Value error, ")
            raise ImportFormatError(path, q.line, f"{where}: {msg}" if where else msg) from exc
        questions.append(record)
    header: dict[str, Any] = {
        "bank": bank_id,
        "title": draft.title or bank_id,
        "description": draft.description,
        "source": path.name,
        "questions": questions,
    }
    BankHeader.model_validate(header)
    return header


class _DraftDumper(yaml.SafeDumper):
    """Writes multi-line strings (answers, code) as literal blocks a person can edit."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # Trailing spaces and tabs make PyYAML fall back to a quoted scalar; drop them.
        value = "\n".join(line.rstrip() for line in value.splitlines()).replace("\t", "    ")
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_DraftDumper.add_representer(str, _str_representer)


def render_yaml(draft: DraftBank, path: Path, bank_id: str, fmt: str) -> str:
    records = draft_records(draft, path, bank_id)
    lines = [
        f"# DRAFT bank imported from {path.name} (format: {fmt}) by `torchdrill content import`.",
        "# Review before use: topics are keyword guesses, difficulty is a default,",
        "# explanations are first sentences, and every snippet is marked not runnable.",
        *(f"# NOTE: {note}" for note in draft.notes),
    ]
    body = yaml.dump(
        records, Dumper=_DraftDumper, sort_keys=False, allow_unicode=True, width=100
    )
    return "\n".join(lines) + "\n" + body
