"""Importers that turn the four raw document formats into draft YAML banks for curation.

Call ``import_file(path, fmt, bank_id)``; it returns YAML text that ``load_bank`` accepts, or
raises ``ImportFormatError`` whose message reads ``path:line: problem``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.core.content.importers.draft import (
    DraftBank,
    ImportFormatError,
    default_bank_id,
    render_yaml,
)
from bot.core.content.importers.longform import parse_longform
from bot.core.content.importers.mcq import parse_mcq
from bot.core.content.importers.numbered import parse_numbered
from bot.core.content.importers.qa import parse_qa

Parser = Callable[[str, Path], DraftBank]

FORMATS: dict[str, Parser] = {
    "mcq": parse_mcq,
    "numbered": parse_numbered,
    "qa": parse_qa,
    "longform": parse_longform,
}

__all__ = ["FORMATS", "ImportFormatError", "import_file", "import_text", "parse"]


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(path, 1, f"cannot read file: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFormatError(
            path, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x}); re-save it as UTF-8"
        ) from exc


def parse(text: str, fmt: str, path: Path) -> DraftBank:
    """Parse already-read text; ``path`` is only used in messages and for source refs."""
    parser = FORMATS.get(fmt)
    if parser is None:
        raise ImportFormatError(path, 1, f"unknown format {fmt!r}; choose one of "
                                         f"{', '.join(FORMATS)}")
    if not text.strip():
        raise ImportFormatError(path, 1, "the file is empty")
    return parser(text, path)


def import_text(text: str, fmt: str, path: Path, bank_id: str | None = None) -> str:
    return render_yaml(parse(text, fmt, path), path, bank_id or default_bank_id(path), fmt)


def import_file(path: Path, fmt: str, bank_id: str | None = None) -> str:
    """Read ``path`` in format ``fmt`` and return the draft bank as YAML text."""
    path = Path(path)
    if fmt not in FORMATS:
        raise ImportFormatError(path, 1, f"unknown format {fmt!r}; choose one of "
                                         f"{', '.join(FORMATS)}")
    return import_text(_read(path), fmt, path, bank_id)
