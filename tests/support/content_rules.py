"""Small banks written to disk and checked by the content rules."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app

PROBLEM_RE = re.compile(r"^(?P<path>.+?\.yaml):(?P<line>\d+): (?P<warning>warning: )?(?P<message>.+)$")


def default_prompt(qid: str) -> str:
    """Words no other generated prompt shares, so only the near-duplicate test has duplicates."""
    word = qid.replace("-", "")
    return f"Which holds for {word}x {word}y {word}z?"


def mcq(qid: str, key: str, others: list[str], *, prompt: str | None = None, why: bool = True,
        extra: str = "") -> str:
    """One MCQ in YAML; distractors get a why_not unless ``why`` is False."""
    lines = [f"  - id: {qid}", "    kind: mcq", "    topic: tensors", "    difficulty: 2",
             f"    prompt: {prompt or default_prompt(qid)!r}", "    choices:",
             f"      - text: {key!r}"]
    for other in others:
        lines.append(f"      - text: {other!r}")
        if why:
            lines.append(f"        why_not: 'Wrong for {qid} because of {other}.'")
    lines += [f"    answer: {key!r}", f"    explanation: Because {qid} says so."]
    return "\n".join(lines) + ("\n" + textwrap.indent(textwrap.dedent(extra).strip("\n"), "    ")
                               if extra else "") + "\n"


def bank(path: Path, bank_id: str, *questions: str) -> Path:
    path.write_text(f"bank: {bank_id}\ntitle: Rules\nquestions:\n" + "".join(questions), encoding="utf-8")
    return path


def balanced(n: int, prefix: str = "ok") -> list[str]:
    """n MCQs whose keys are never the longest choice and are as long as the distractors."""
    return [mcq(f"{prefix}-{i}", f"key number {i:02d}", [f"other one {i:02d}", f"other two {i:02d}",
                                                       f"other three {i:02d}"]) for i in range(n)]


def check(*files: Path | str) -> tuple[int, list[tuple[str, int, bool, str]], str]:
    result = CliRunner().invoke(app, ["content", "check", *map(str, files)])
    found = []
    for line in result.output.splitlines():
        if m := PROBLEM_RE.match(line):
            found.append((Path(m["path"]).name, int(m["line"]), bool(m["warning"]), m["message"]))
    return result.exit_code, found, result.output


def line_of(path: Path, text: str, occurrence: int = 1) -> int:
    hits = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return hits[occurrence - 1]
