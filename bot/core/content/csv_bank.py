"""Community banks from a spreadsheet: a CSV upload becomes the same YAML bank and passes the
same checks (``check_bank_text``), every problem answered with the CSV line it is on.

One question per row, multiple choice, under a header naming the columns (any order, any case):
``prompt, choice_a, choice_b, choice_c, choice_d, answer, explanation, topic, difficulty``, and
optionally ``id`` and ``why_not_a`` … ``why_not_d``. ``answer`` is the right choice's letter
(or its exact text). The bank's id is the file's name (``our-loop.csv`` → ``our-loop``); a row
without an id gets one from its prompt, the same on every upload, so progress stays attached.
The stored source is the YAML the rows became, so ``/bank export`` gives a file to edit either
way. Nothing is stored unless every row is clean.
"""

from __future__ import annotations

import bisect
import csv
import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.core.content.bank import SLUG_RE, Library
from bot.core.content.community import (
    MAX_QUESTIONS_PER_BANK,
    MAX_UPLOAD_BYTES,
    Checked,
    check_bank_text,
    too_big,
)

LETTERS = "abcd"
REQUIRED = ("prompt", *(f"choice_{x}" for x in LETTERS), "answer", "explanation", "topic", "difficulty")
OPTIONAL = ("id", *(f"why_not_{x}" for x in LETTERS))
_LINE = re.compile(r"^line (\d+): ")


@dataclass
class CsvChecked:
    """The checked bank and the YAML text to store (None unless clean)."""

    checked: Checked
    text: str | None


def is_csv(filename: str) -> bool:
    return filename.lower().endswith(".csv")


def _slug(text: str) -> str:
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def _question_id(prompt: str) -> str:
    """A stable id from the prompt: its first words and a checksum."""
    words = _slug(prompt)[:40].strip("-") or "q"
    return f"{words}-{zlib.crc32(prompt.encode()):08x}"


def _refused(*errors: str) -> CsvChecked:
    return CsvChecked(Checked(None, list(errors)), None)


def _question(row: dict[str, str], line: int) -> tuple[dict[str, object] | None, list[str]]:
    errors = []
    for column in REQUIRED:
        if not row.get(column, "").strip():
            errors.append(f"line {line}: {column} is empty")
    if errors:
        return None, errors
    choices = [row[f"choice_{x}"].strip() for x in LETTERS]
    answer = row["answer"].strip()
    if answer.lower() in LETTERS:
        key = LETTERS.index(answer.lower())
    elif answer in choices:
        key = choices.index(answer)
    else:
        return None, [f"line {line}: answer must be A, B, C or D (or the right choice's text), got {answer!r}"]
    difficulty = row["difficulty"].strip()
    if difficulty not in ("1", "2", "3"):
        return None, [f"line {line}: difficulty must be 1, 2 or 3, got {difficulty!r}"]
    listed = []
    for i, (x, text) in enumerate(zip(LETTERS, choices, strict=True)):
        why = (row.get(f"why_not_{x}") or "").strip()
        if why and i == key:
            errors.append(f"line {line}: why_not_{x} is set but {x.upper()} is the right answer")
        listed.append({"text": text, "why_not": why} if why else {"text": text})
    prompt = row["prompt"].strip()
    return {
        "id": (row.get("id") or "").strip() or _question_id(prompt),
        "kind": "mcq", "topic": row["topic"].strip(), "difficulty": int(difficulty),
        "prompt": prompt, "choices": listed, "answer": choices[key],
        "explanation": row["explanation"].strip(),
    }, errors


def check_csv_bank(data: bytes, filename: str, builtin: Library) -> CsvChecked:
    """Every problem of a CSV bank as ``line N: problem`` (N: the CSV line), or the YAML."""
    if len(data) > MAX_UPLOAD_BYTES:
        return _refused(f"line 1: {too_big(len(data))}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return _refused(f"line {line}: not UTF-8 text; save the sheet as CSV UTF-8")
    slug = _slug(Path(filename).stem)
    if not re.match(SLUG_RE, slug):
        return _refused(f"line 1: name the file after the bank, e.g. our-loop.csv ({filename!r} gives no id)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lower().replace(" ", "_").replace("-", "_") for h in next(reader, [])]
    except csv.Error as exc:
        return _refused(f"line 1: {exc}")
    missing = [c for c in REQUIRED if c not in header]
    unknown = [h for h in header if h and h not in REQUIRED + OPTIONAL]
    if missing or unknown:
        what = "; ".join(x for x in (
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}" if missing else "",
            f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}" if unknown else "") if x)
        return _refused(f"line 1: {what} (the columns are {', '.join(REQUIRED)}, optionally "
                        f"{', '.join(OPTIONAL)})")
    questions: list[tuple[int, dict[str, object]]] = []
    errors: list[str] = []
    end = reader.line_num
    try:
        for cells in reader:
            line, end = end + 1, reader.line_num  # a quoted cell may span lines: its first one
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                errors.append(f"line {line}: {len(cells)} cells; the header has {len(header)}")
                continue
            question, problems = _question(dict(zip(header, cells, strict=True)), line)
            errors += problems
            if question is not None:
                questions.append((line, question))
    except csv.Error as exc:
        errors.append(f"line {reader.line_num}: {exc}")
    rows = len(questions) + len(errors)
    if rows > MAX_QUESTIONS_PER_BANK:
        return _refused(f"line 1: {rows} questions; a community bank holds at most {MAX_QUESTIONS_PER_BANK}")
    if not questions and not errors:
        return _refused("line 1: the file has no questions under its header")
    if errors:
        return _refused(*errors)
    yaml_text, starts = _as_yaml(slug, Path(filename).stem, [q for _, q in questions])
    checked = check_bank_text(yaml_text, f"{slug}.yaml", builtin)
    csv_lines = [line for line, _ in questions]

    def at_csv_line(problem: str) -> str:
        found = _LINE.match(problem)
        if not found:
            return problem
        index = bisect.bisect_right(starts, int(found.group(1))) - 1
        line = csv_lines[index] if index >= 0 else 1
        return f"line {line}: {problem[found.end():]}"

    checked.errors = [at_csv_line(e) for e in checked.errors]
    checked.warnings = [at_csv_line(w) for w in checked.warnings]
    return CsvChecked(checked, yaml_text if checked.ok else None)


def _as_yaml(slug: str, title: str, questions: list[dict[str, object]]) -> tuple[str, list[int]]:
    """The bank as YAML, and the line each question starts on (to map problems back)."""
    parts = [yaml.safe_dump({"bank": slug, "title": title.replace("-", " ").replace("_", " ").strip()
                             or slug}, sort_keys=False, allow_unicode=True), "questions:\n"]
    line = sum(p.count("\n") for p in parts) + 1
    starts = []
    for q in questions:
        dumped = yaml.safe_dump([q], sort_keys=False, allow_unicode=True, width=10_000)
        starts.append(line)
        parts.append(dumped)
        line += dumped.count("\n")
    return "".join(parts), starts
