"""The numbered format (seed 002): 'N. question' lines, each followed by its answer prose.

These exports cut answers off with '...' and mangle characters; the draft repairs what it can
and tags what a curator must finish ('truncated', 'encoding-guessed').
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.core.content.bank import Kind
from bot.core.content.importers.draft import DraftBank, DraftQuestion, ImportFormatError
from bot.core.content.importers.text import repair_mojibake

_HEADING_RE = re.compile(r"^\s*(\d{1,4})[.)]\s+(\S.*)$")


def parse_numbered(text: str, path: Path) -> DraftBank:
    lines = text.splitlines()
    matches = [_HEADING_RE.match(line) for line in lines]
    # Where a number also heads a later line that asks a question, that line is the heading.
    last_question_line: dict[int, int] = {}
    for index, match in enumerate(matches):
        if match and match.group(2).rstrip().endswith("?"):
            last_question_line[int(match.group(1))] = index
    title_lines: list[str] = []
    items: list[tuple[int, int, str, list[str]]] = []  # (line, number, question, answer lines)
    for index, (line, match) in enumerate(zip(lines, matches, strict=True)):
        # A heading must continue the numbering, so "2. Then..." inside question 7's answer
        # stays part of the answer; and "2. Do this." loses to a later "2. Why...?".
        number = int(match.group(1)) if match else 0
        if (
            match
            and number > (items[-1][1] if items else 0)
            and last_question_line.get(number, index) <= index
        ):
            items.append((index + 1, number, match.group(2).strip(), []))
        elif items:
            items[-1][3].append(line)
        elif line.strip():
            title_lines.append(line.strip())
    if not items:
        raise ImportFormatError(path, 1, "no numbered question ('1. ...') found "
                                         "(is this the numbered format?)")
    draft = DraftBank(title=title_lines[0] if title_lines else "", questions=[],
                      description=" ".join(title_lines[1:]))
    for at, number, question, answer_lines in items:
        answer = "\n".join(answer_lines).strip()
        if not answer:
            raise ImportFormatError(path, at, f"question {number} has no answer text")
        prompt, prompt_guessed = repair_mojibake(question)
        answer, answer_guessed = repair_mojibake(answer)
        tags = []
        if answer.rstrip().endswith(("...", "…")):
            tags.append("truncated")
        if prompt_guessed or answer_guessed:
            tags.append("encoding-guessed")
        draft.questions.append(DraftQuestion(
            line=at, kind=Kind.FLASHCARD, prompt=prompt, answer=answer, tags=tags,
            source_number=number,
        ))
    return draft
