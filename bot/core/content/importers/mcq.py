"""The multiple-choice format (seed 000): 'Question N', the prompt, 'Accepted Answer', 'Answer'...

Every choice is the paragraph after its marker. The source always lists the accepted answer
first, so the draft shuffles the choices (seeded, so re-importing gives the same file).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from bot.core.content.bank import Kind
from bot.core.content.importers.draft import DraftBank, DraftQuestion, ImportFormatError

_QUESTION_RE = re.compile(r"^Question\s+(\d+)\s*$", re.IGNORECASE)
_ACCEPTED = "accepted answer"
_ANSWER = "answer"


def _paragraphs(lines: list[str]) -> list[tuple[int, str]]:
    """(1-based line, text) of each blank-line separated paragraph."""
    out: list[tuple[int, str]] = []
    start = 0
    buf: list[str] = []
    for i, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if not buf:
                start = i
            buf.append(line.strip())
        elif buf:
            out.append((start, " ".join(buf)))
            buf = []
    return out


def parse_mcq(text: str, path: Path) -> DraftBank:
    paras = _paragraphs(text.splitlines())
    first_q = next((i for i, (_, p) in enumerate(paras) if _QUESTION_RE.match(p)), None)
    if first_q is None:
        raise ImportFormatError(path, 1, "no 'Question N' heading found (is this the mcq format?)")
    preamble = [p for _, p in paras[:first_q]]
    draft = DraftBank(title=preamble[0] if preamble else "", questions=[],
                      description=" ".join(preamble[1:]))
    i = first_q
    while i < len(paras):
        line, head = paras[i]
        match = _QUESTION_RE.match(head)
        if not match:
            if draft.questions and all(
                not _QUESTION_RE.match(p) and p.lower() not in (_ACCEPTED, _ANSWER)
                for _, p in paras[i:]
            ):
                trailing = " / ".join(p for _, p in paras[i:])
                draft.notes.append(f"ignored trailing text at line {line}: {trailing[:80]!r}")
                break
            raise ImportFormatError(path, line, f"expected 'Question N', found {head[:60]!r}")
        number = int(match.group(1))
        i += 1
        if i >= len(paras) or paras[i][1].lower() in (_ACCEPTED, _ANSWER) or _QUESTION_RE.match(
            paras[i][1]
        ):
            raise ImportFormatError(path, line, f"question {number} has no prompt")
        prompt_parts = []
        while i < len(paras) and paras[i][1].lower() not in (_ACCEPTED, _ANSWER) and not (
            _QUESTION_RE.match(paras[i][1])
        ):
            prompt_parts.append(paras[i][1])
            i += 1
        prompt = "\n\n".join(prompt_parts)
        accepted: list[str] = []
        choices: list[str] = []
        while i < len(paras) and paras[i][1].lower() in (_ACCEPTED, _ANSWER):
            marker_line, marker = paras[i]
            if i + 1 >= len(paras) or paras[i + 1][1].lower() in (_ACCEPTED, _ANSWER) or (
                _QUESTION_RE.match(paras[i + 1][1])
            ):
                raise ImportFormatError(path, marker_line, f"'{marker}' is not followed by its text")
            choice = paras[i + 1][1]
            if choice in choices:
                raise ImportFormatError(path, paras[i + 1][0], f"duplicate choice {choice!r}")
            choices.append(choice)
            if marker.lower() == _ACCEPTED:
                accepted.append(choice)
            i += 2
        if not accepted:
            raise ImportFormatError(path, line, f"question {number} has no 'Accepted Answer'")
        if len(accepted) > 1:
            raise ImportFormatError(path, line, f"question {number} has {len(accepted)} "
                                                "'Accepted Answer' entries; expected one")
        if len(choices) < 2:
            raise ImportFormatError(path, line, f"question {number} needs at least one wrong "
                                                "'Answer' besides the accepted one")
        random.Random(f"{prompt}|{number}").shuffle(choices)
        draft.questions.append(DraftQuestion(
            line=line, kind=Kind.MCQ, prompt=prompt, answer=accepted[0], choices=choices,
            source_number=number,
        ))
    return draft
