"""Splitting plain-text documents into paragraphs and telling code from prose.

The exports lost every fence, so code is recognised by how its lines look.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CODE_LINE_RE = re.compile(
    r"^\s*(#|import\s|from\s+\S+\s+import\s|def\s|class\s|@|return\b|print\(|for\s.+:\s*$"
    r"|while\s.+:\s*$|with\s.+:\s*$|if\s.+:\s*$|elif\s|else:|try:|except\b|[\])}],?\s*$)"
)
_TARGET = r"[\w.'\"]+(?:\[[^\]]*\])*"
_ASSIGN_RE = re.compile(rf"^\s*{_TARGET}(?:\s*,\s*{_TARGET})*\s*(?:[-+*/]?=)(?!=)\s*\S")
_CALL_LINE_RE = re.compile(r"^\s*[\w.]+\(.*\)\s*(#.*)?$")
_OPEN_CALL_RE = re.compile(r"[(\[{,]\s*$")


@dataclass
class Block:
    line: int  # 1-based line of the block's first line
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def paragraphs(text: str, first_line: int = 1) -> list[Block]:
    """Blank-line separated blocks, with original indentation kept for code."""
    blocks: list[Block] = []
    current: list[str] = []
    start = first_line
    for i, line in enumerate([*text.splitlines(), ""], start=first_line):
        if line.strip():
            if not current:
                start = i
            current.append(line.rstrip())
        elif current:
            blocks.append(Block(start, current))
            current = []
    return blocks


def is_code_line(line: str) -> bool:
    if line.startswith((" ", "\t")) and line.strip():
        return True
    return bool(
        _CODE_LINE_RE.match(line)
        or _ASSIGN_RE.match(line)
        or _CALL_LINE_RE.match(line)
        or _OPEN_CALL_RE.search(line)
    )


def is_code(block: Block) -> bool:
    """A block is code when most of its lines look like Python and it is not a sentence."""
    lines = block.lines
    if len(lines) == 1:
        line = lines[0].strip()
        words = line.split()
        if line.endswith((".", "?", "!", ":", "...")) and len(words) >= 4 and not (
            _ASSIGN_RE.match(line) or line.startswith("#")
        ):
            return False
    code_like = sum(is_code_line(line) for line in lines)
    if code_like * 2 >= len(lines) and code_like > 0:
        return True
    # Several lines and not one of them ends a sentence: program output or a traceback.
    return len(lines) > 1 and not any(line.rstrip().endswith((".", "?", "!")) for line in lines)
