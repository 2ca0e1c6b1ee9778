"""The plain data the calibration reads: one recorded pick, and what a question looks like."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pick:
    """One member's answer to one multiple-choice question.

    ``member`` is unique across communities (storage uses the member's row id), so a member's
    ability is theirs alone while a built-in question is shared by every community.
    ``choice`` is the original (unshuffled) choice index; ``ms`` is 0 when not recorded.
    """

    member: str
    question: str
    topic: str
    choice: int
    correct: bool
    ms: int = 0


@dataclass(frozen=True, slots=True)
class ItemInfo:
    """What the quality report needs to know about a question besides its picks."""

    question: str
    topic: str
    labelled: int  # the author's difficulty, 1-3
    n_choices: int
    key: int  # index of the keyed choice
    bank: str = ""
