"""Explain well-known PyTorch errors from a failed job's stderr.

The catalog (``content/errors.yaml``) is data so that people who know PyTorch, not Python, can
improve the explanations. This module only knows how to read a traceback: it finds the final
exception (the one that killed the job), matches the catalog against it, and falls back to the
exceptions it was chained from, because the root cause is often an inner one (a DataLoader worker
re-raising, user code wrapping a torch error). Dependencies are stdlib, PyYAML and pydantic only,
so the runner stays deployable without the chat adapters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    field_validator,
)

DEFAULT_CATALOG = Path(__file__).resolve().parents[1] / "content" / "errors.yaml"

# Tracebacks sit at the end of stderr; a job that printed megabytes first must not make us slow.
MAX_SCAN_CHARS = 200_000

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{1,80}$")]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

# `RuntimeError: ...`, `torch.OutOfMemoryError: ...`, `_pickle.PicklingError: ...`, bare `KeyError`.
_HEADER_RE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Iteration)(?::.*)?$"
)
# Lines that end an exception's message: a new traceback (also torch's "Original Traceback"),
# a stack frame, or Python's chaining separators.
_BLOCK_END_RE = re.compile(
    r"Traceback \(most recent call last\):"
    r"|^\s+File \""
    r"|^The above exception was the direct cause of the following exception:"
    r"|^During handling of the above exception, another exception occurred:"
)


class CatalogError(ValueError):
    """The catalog file is unreadable or invalid; the message names the file, line and entry."""


class CatalogEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    title: Text
    patterns: list[str] = Field(min_length=1)
    explanation: Text
    fix: Text
    fix_code: str | None = None
    related: list[Slug] = Field(default_factory=list)

    _compiled: tuple[re.Pattern[str], ...] = PrivateAttr(default=())

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if not pattern.strip():
                raise ValueError("a pattern is empty")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regex: {exc}") from exc
        return patterns

    def model_post_init(self, __context: object) -> None:
        # MULTILINE so `^` can anchor on a continuation line of a multi-line torch message.
        self._compiled = tuple(re.compile(p, re.MULTILINE) for p in self.patterns)

    def search(self, text: str) -> re.Match[str] | None:
        for regex in self._compiled:
            match = regex.search(text)
            if match:
                return match
        return None


class ErrorExplanation(BaseModel):
    """What the runner sends back to the chat thread next to a failed job's output."""

    id: str
    title: str
    explanation: str
    fix: str
    fix_code: str | None
    related: list[str]
    matched: str = Field(description="the line of the error message that matched")


def load_catalog(path: Path | None = None) -> list[CatalogEntry]:
    """The validated catalog, in priority order. Cached until the file changes."""
    path = (path or DEFAULT_CATALOG).resolve()
    try:
        stat = path.stat()
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read the error catalog: {exc}") from exc
    return list(_load_catalog_cached(path, stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=8)
def _load_catalog_cached(path: Path, mtime_ns: int, size: int) -> tuple[CatalogEntry, ...]:
    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read the error catalog: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or exc
        raise CatalogError(f"{path}:{line}: invalid YAML: {problem}") from exc
    if not isinstance(raw, list) or not isinstance(root, yaml.SequenceNode):
        raise CatalogError(f"{path}:1: the error catalog must be a YAML list of entries")

    entries: list[CatalogEntry] = []
    first_line: dict[str, int] = {}
    for index, (item, node) in enumerate(zip(raw, root.value, strict=True)):
        line = node.start_mark.line + 1
        name = repr(item.get("id")) if isinstance(item, dict) else f"#{index + 1}"
        if not isinstance(item, dict):
            raise CatalogError(f"{path}:{line}: entry {name} must be a mapping")
        try:
            entry = CatalogEntry.model_validate(item)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: "
                f"{err['msg'].removeprefix('Value error, ')}"
                for err in exc.errors()
            )
            raise CatalogError(f"{path}:{line}: entry {name}: {problems}") from exc
        if entry.id in first_line:
            raise CatalogError(
                f"{path}:{line}: duplicate id {entry.id!r} (first at line {first_line[entry.id]})"
            )
        first_line[entry.id] = line
        entries.append(entry)
    return tuple(entries)


def exception_messages(stderr: str) -> list[str]:
    """Every exception message in stderr (header line plus continuation lines), oldest first.

    A chained traceback yields one message per link; torch's multi-line messages (state_dict key
    lists, the CUDA debugging hints) stay with their header. Text with no recognisable exception
    header is returned whole, so bare messages (a log line, a C++ abort) can still be matched.
    """
    lines = stderr[-MAX_SCAN_CHARS:].splitlines()
    messages: list[str] = []
    current: list[str] | None = None
    for line in lines:
        if _HEADER_RE.match(line):
            if current:
                messages.append("\n".join(current))
            current = [line]
        elif current is not None:
            if _BLOCK_END_RE.search(line):
                messages.append("\n".join(current))
                current = None
            else:
                current.append(line)
    if current:
        messages.append("\n".join(current))
    if not messages and stderr.strip():
        messages.append(stderr[-MAX_SCAN_CHARS:])
    return [m.rstrip() for m in messages]


def explain(
    stderr: str, catalog: Sequence[CatalogEntry] | None = None
) -> ErrorExplanation | None:
    """The catalog's explanation for the error that ended the job, or None if none applies.

    The last exception is tried first, then the ones it was chained from; within one exception
    the first matching catalog entry wins, so more specific entries come earlier in the file.
    """
    entries = load_catalog() if catalog is None else catalog
    for message in reversed(exception_messages(stderr)):
        for entry in entries:
            match = entry.search(message)
            if match:
                return ErrorExplanation(
                    id=entry.id,
                    title=entry.title,
                    explanation=entry.explanation,
                    fix=entry.fix,
                    fix_code=entry.fix_code,
                    related=list(entry.related),
                    matched=_line_at(message, match.start()),
                )
    return None


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end != -1 else len(text)].strip()
