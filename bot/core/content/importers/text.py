"""Text helpers shared by the importers: mis-decoding repair, first sentences, slugs."""

from __future__ import annotations

import re

# Bytes 0x80-0xBF are UTF-8 continuation bytes. A UTF-8 file decoded as cp1252 (or latin-1,
# where cp1252 leaves a byte undefined) turns each of them into one of these characters.
_BYTE_OF: dict[str, int] = {}
for _b in range(0x80, 0xC0):
    _char = bytes([_b]).decode("cp1252", errors="ignore")  # empty where cp1252 has no char
    if _char:
        _BYTE_OF[_char] = _b
    _BYTE_OF.setdefault(chr(_b), _b)
_CONT = "".join(re.escape(c) for c in _BYTE_OF)
# A lead byte (0xC2-0xF4, read as latin-1 'Â'..'ô') followed by its continuation characters.
_MOJIBAKE_RE = re.compile(rf"[\u00c2-\u00f4][{_CONT}]{{1,3}}")
# 'â' (lead byte 0xE2) whose continuation bytes were dropped, standing alone between non-letters.
_ORPHAN_E2_RE = re.compile(r"(?<![^\W\d_])â+(?![^\W\d_])")


def _redecode(match: re.Match[str]) -> str:
    chunk = match.group(0)
    try:
        return bytes(ord(chunk[0]) if i == 0 else _BYTE_OF[c] for i, c in enumerate(chunk)).decode(
            "utf-8"
        )
    except (UnicodeDecodeError, ValueError):
        return chunk


# E2 80 9D (right double quote) is the one common sequence whose last byte cp1252 leaves
# undefined, so exports often drop it and leave 'â€' behind.
_ORPHAN_QUOTE_RE = re.compile("â€(?![" + _CONT + "])")


def _guess_orphan(match: re.Match[str]) -> str:
    # U+2500..U+257F (box drawing) and U+2010..U+2027 (dashes, quotes) all start with 0xE2.
    # Runs of them are comment rulers ("# ── section"); a single one in prose is an em dash.
    n = len(match.group(0))
    return "─" * n if n > 1 else "—"


def repair_mojibake(text: str) -> tuple[str, bool]:
    """Undo UTF-8-read-as-cp1252 damage. Returns (text, whether any character had to be guessed).

    Complete sequences are decoded back exactly. Where the export dropped the continuation
    bytes only the lead 'â' survives; that cannot be decoded, so it is replaced by the likeliest
    character and reported as a guess so the curator can check it.
    """
    fixed = _MOJIBAKE_RE.sub(_redecode, text)
    guessed = _ORPHAN_E2_RE.sub(_guess_orphan, _ORPHAN_QUOTE_RE.sub("”", fixed))
    return guessed, guessed != fixed


# A sentence ends at . ! or ? right after a word (flattened code leaves "torch . nn" behind).
_SENTENCE_END_RE = re.compile(r"(?<=[\w)\]\"'][.!?])\s+(?=\S)")
# Abbreviations after which a period does not end a sentence.
_NOT_AN_END = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "cf.")


def first_sentence(text: str, limit: int = 300) -> str:
    """The opening sentence of an answer, used as the draft explanation."""
    flat = " ".join(text.split())
    for match in _SENTENCE_END_RE.finditer(flat):
        candidate = flat[: match.start()]
        if not candidate.lower().endswith(_NOT_AN_END):
            flat = candidate
            break
    if len(flat) > limit:
        flat = flat[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return flat


def slugify(text: str, max_len: int = 60) -> str:
    """Lowercase words joined by dashes, cut at a word boundary."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    return slug or (words[0][:max_len] if words else "")
