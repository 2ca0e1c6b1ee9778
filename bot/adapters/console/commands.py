"""Typed lines → a command word and its text. The words after it go to the core's grammar."""

from __future__ import annotations

from dataclasses import dataclass, field

ALIASES = {"exit": "quit", "q": "quit", "?": "help", "lb": "leaderboard", "top": "leaderboard"}


@dataclass
class Parsed:
    name: str
    args: list[str] = field(default_factory=list)
    rest: str = ""  # the raw text after the command word (for `run print(1)`)


def parse(line: str) -> Parsed | None:
    text = line.strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    name = word.lower().lstrip("/") or word.lower()  # `/quiz` as on the platforms
    return Parsed(ALIASES.get(name, name), rest.split(), rest.strip())
