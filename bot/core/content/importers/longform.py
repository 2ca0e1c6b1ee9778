"""The long-form format (seed 004): answers of prose, bullet lists and code, headings stripped.

Without headings the answers must be told apart by shape. Each answer opens with a prose
paragraph and then has a body (code, bullets, or a 'Something:' lead-in to them). After a body,
a run of prose paragraphs is either the end of the same answer (labelled asides such as
'Rule of thumb: ...', or text that refers back) or the opening of the next one. When a run
holds several plausible openers, the one whose words belong to the following body rather than
the preceding answer wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from bot.core.content.bank import Kind
from bot.core.content.importers.blocks import Block, is_code, paragraphs
from bot.core.content.importers.draft import DraftBank, DraftQuestion, ImportFormatError
from bot.core.content.importers.text import first_sentence, repair_mojibake

PLACEHOLDER = "TODO: write the question"

_BULLET_RE = re.compile(r"^\s*(?:[•\-*▪◦]\s|\d{1,2}[.)]\s)")
# 'Rule of thumb: ...', 'DataParallel (DP): ...', 'Why fused? ...': an aside, not an opener.
_LABEL_RE = re.compile(r"^((?:[^:?!.]|\.(?=\S)){1,60}?)[:?](?:\s|$)")
_LABEL_MAX_WORDS = 4
# Openers never start by pointing back at what came before.
_ANAPHORIC_RE = re.compile(
    r"^(first|second|then|next|also|finally|however|so|thus|therefore|this|that|these|those|"
    r"it|they|such|here|there|you|the (consequence|result|reason|trade-?off|catch)|in short|"
    r"in practice|note)\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[a-z_][a-z0-9_]{2,}")
_STOP_WORDS = (
    "the and for are but not you your with that this from into when than then them they their "
    "its has have was were will can all any one two each both only also more most such which "
    "what while where how why use used using does did very just like over out"
)
_STOP = frozenset(_STOP_WORDS.split())


class Shape(Enum):
    TITLE = "title"
    PROSE = "prose"
    ASIDE = "aside"  # labelled or back-referring prose: never opens an answer
    LEAD_IN = "lead-in"  # prose ending in ':' that introduces a list or code
    BULLETS = "bullets"
    CODE = "code"


BODY = (Shape.LEAD_IN, Shape.BULLETS, Shape.CODE)


def _is_label(text: str) -> bool:
    """'Key idea: ...' or 'TorchScript (legacy): ...' - a few words before the colon."""
    match = _LABEL_RE.match(text)
    if not match:
        return False
    words = re.sub(r"\([^)]*\)", " ", match.group(1)).split()
    return 0 < len(words) <= _LABEL_MAX_WORDS


def _shape(block: Block) -> Shape:
    if all(_BULLET_RE.match(line) for line in block.lines):
        return Shape.BULLETS
    if is_code(block):
        return Shape.CODE
    text = block.text.strip()
    # 'Why contiguous() matters:' leads into a list; 'X is Y. Three pieces matter:' opens too.
    if text.endswith(":") and not re.search(r"[.!?]\s", text):
        return Shape.LEAD_IN
    if _is_label(text) or _ANAPHORIC_RE.match(text):
        return Shape.ASIDE
    return Shape.PROSE


def _words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if w not in _STOP}


def _leans_forward(candidate: Block, before: str, after: str) -> bool:
    words = _words(candidate.text)
    if not words:
        return False
    return len(words & _words(after)) > len(words & _words(before))


@dataclass
class _Answer:
    blocks: list[tuple[Shape, Block]] = field(default_factory=list)

    @property
    def has_body(self) -> bool:
        return any(shape in BODY for shape, _ in self.blocks)

    @property
    def text(self) -> str:
        return "\n".join(b.text for _, b in self.blocks)


def segment(blocks: list[Block]) -> tuple[str, list[_Answer]]:
    """Split the document's blocks into (title, answers)."""
    shapes = [_shape(b) for b in blocks]
    title = ""
    if blocks and shapes[0] is Shape.PROSE and not blocks[0].text.rstrip().endswith((".", ":")):
        title, blocks, shapes = blocks[0].text.strip(), blocks[1:], shapes[1:]
    answers: list[_Answer] = []
    i = 0
    while i < len(blocks):
        if shapes[i] in BODY or not answers or not answers[-1].has_body:
            if not answers:
                answers.append(_Answer())
            answers[-1].blocks.append((shapes[i], blocks[i]))
            i += 1
            continue
        # A run of prose after a body: find where (if anywhere) the next answer opens.
        end = i
        while end < len(blocks) and shapes[end] in (Shape.PROSE, Shape.ASIDE):
            end += 1
        run = list(range(i, end))
        openers = [k for k in run if shapes[k] is Shape.PROSE]
        split = None
        if end < len(blocks) and openers:
            after_end = end
            while after_end < len(blocks) and shapes[after_end] in BODY:
                after_end += 1
            after = "\n".join(b.text for b in blocks[end:after_end])
            split = openers[-1]
            if len(openers) > 1:
                before = answers[-1].text
                split = next(
                    (k for k in openers if _leans_forward(blocks[k], before, after)), split
                )
        for k in run:
            if k == split:
                answers.append(_Answer())
            answers[-1].blocks.append((shapes[k], blocks[k]))
        i = end
    return title, answers


def _to_question(answer: _Answer, number: int) -> DraftQuestion:
    prose: list[str] = []
    code: list[list[str]] = []
    tags: list[str] = []
    previous: Shape | None = None
    for shape, block in answer.blocks:
        if shape is Shape.CODE:
            if previous is Shape.CODE:
                code[-1].extend(["", *block.lines])  # blank lines inside one program
            else:
                code.append(list(block.lines))
        else:
            if previous is Shape.LEAD_IN and shape not in BODY:
                tags.append("incomplete")  # a lead-in whose list or table was lost
            prose.append(block.text.strip())
        previous = shape
    if previous is Shape.LEAD_IN:
        tags.append("incomplete")
    text = "\n\n".join(prose)
    opening = first_sentence(prose[0]) if prose else ""
    return DraftQuestion(
        line=answer.blocks[0][1].line,
        kind=Kind.DEEP_DIVE,
        prompt=f"{PLACEHOLDER} — {opening}" if opening else PLACEHOLDER,
        answer=text or "\n".join(code[0]),
        code=["\n".join(c) for c in code],
        tags=tags,
        source_number=number,
        id_text=opening or f"answer {number}",
        explanation=opening or None,
    )


def parse_longform(text: str, path: Path) -> DraftBank:
    text, guessed = repair_mojibake(text)
    title, answers = segment(paragraphs(text))
    if not answers:
        raise ImportFormatError(path, 1, "no answers found")
    first_shape, first_block = answers[0].blocks[0]
    if first_shape is Shape.CODE:
        raise ImportFormatError(path, first_block.line,
                                "the document starts with code; an answer must open with prose")
    questions = [_to_question(a, n) for n, a in enumerate(answers, start=1)]
    notes = [f"{len(questions)} answers found by shape; check that each question starts where "
             "its answer starts."]
    if guessed:
        notes.append("some mis-decoded characters were guessed (search for '—' and '─').")
    return DraftBank(title=title, questions=questions, notes=notes)
