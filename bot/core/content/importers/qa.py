"""The Q/A format (seed 003): section titles, then 'Q: ... A: ...' cards.

A card may run on over several paragraphs (more prose, or code) until the next 'Q:' or the
next section title; code paragraphs become snippets. The section title becomes a tag.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.core.content.bank import Kind
from bot.core.content.importers.blocks import Block, is_code, paragraphs
from bot.core.content.importers.draft import DraftBank, DraftQuestion, ImportFormatError
from bot.core.content.importers.text import repair_mojibake, slugify

_Q_RE = re.compile(r"^Q:\s*(.*)$", re.DOTALL)
_A_SPLIT_RE = re.compile(r"\s+A:\s+|\nA:\s*")
_TITLE_MAX_WORDS = 8


def _is_section_title(block: Block, next_block: Block | None) -> bool:
    """A short unpunctuated line directly followed by a card."""
    text = block.text.strip()
    return (
        len(block.lines) == 1
        and len(text.split()) <= _TITLE_MAX_WORDS
        and not text.endswith((".", ":", ";", ",", "?", "!", ")", "]", "}"))
        and not is_code(block)
        and next_block is not None
        and bool(_Q_RE.match(next_block.text))
    )


def parse_qa(text: str, path: Path) -> DraftBank:
    text, _ = repair_mojibake(text)
    blocks = paragraphs(text)
    first_card = next((i for i, b in enumerate(blocks) if _Q_RE.match(b.text)), None)
    if first_card is None:
        raise ImportFormatError(path, 1, "no 'Q: ... A: ...' card found (is this the qa format?)")
    preamble = [b.text.strip() for b in blocks[:first_card]]
    section = ""
    if first_card > 0 and _is_section_title(blocks[first_card - 1], blocks[first_card]):
        section = preamble.pop()
    draft = DraftBank(title=preamble[0] if preamble else "", questions=[],
                      description=" ".join(preamble[1:]))
    # (card block, its text after "Q:", section, continuation)
    cards: list[tuple[Block, str, str, list[Block]]] = []
    for i in range(first_card, len(blocks)):
        block, following = blocks[i], blocks[i + 1] if i + 1 < len(blocks) else None
        if card_match := _Q_RE.match(block.text):
            cards.append((block, card_match.group(1), section, []))
        elif _is_section_title(block, following):
            section = block.text.strip()
        else:
            cards[-1][3].append(block)
    for number, (card, body, card_section, extra) in enumerate(cards, start=1):
        parts = _A_SPLIT_RE.split(body, maxsplit=1)
        if len(parts) < 2 and extra and extra[0].text.startswith("A:"):
            parts = [body, extra.pop(0).text.removeprefix("A:")]
        if len(parts) < 2 or not parts[1].strip():
            raise ImportFormatError(path, card.line, f"card {number} has a 'Q:' but no 'A:'")
        prompt, answer = (" ".join(p.split()) for p in parts)
        if not prompt:
            raise ImportFormatError(path, card.line, f"card {number} has an empty question")
        prose = [answer]
        code: list[str] = []
        previous_was_code = False
        for b in extra:
            if not is_code(b):
                prose.append(b.text.strip())
            elif previous_was_code:
                code[-1] += "\n\n" + b.text  # one program with blank lines inside
            else:
                code.append(b.text)
            previous_was_code = is_code(b)
        draft.questions.append(DraftQuestion(
            line=card.line, kind=Kind.FLASHCARD, prompt=prompt, answer="\n\n".join(prose),
            code=code, tags=[slugify(card_section, max_len=40)] if card_section else [],
            source_number=number,
        ))
    return draft
