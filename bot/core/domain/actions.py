"""Button action ids: compact, self-describing, and valid forever (they carry the post id).

Format ``td:<verb>:<post id>:<arg>`` stays far below Discord's 100-character custom_id limit,
so a button on a week-old message still works after any number of restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

PREFIX = "td"


class Verb(StrEnum):
    PICK = "a"  # pick choice <arg> (displayed position) of an mcq post
    SHOW = "s"  # show the answer of a flashcard / deep dive
    GRADE = "g"  # self-grade a flashcard 1..4 (Again, Hard, Good, Easy)
    NEXT = "n"  # next question of a quiz or review
    STOP = "x"  # stop a quiz or review
    TAKE = "w"  # take the weekly challenge; <post id> is then the weekly claim's id
    PROGRESS = "p"  # my progress, under a weekly digest; <post id> is the weekly claim's id
    MOCK = "m"  # an item of a /mock; <post id> is the mock's id, <arg> item * 100 + what
    HOME = "h"  # a dashboard (App Home) button: <arg> 1 review now, 2 answer post <post id>
    JOIN = "j"  # Start, under a group mock's post: <post id> is the group mock's id
    FLAG = "f"  # 🚩 report the question of <post id>: arg 0 asks why, 1-4 is the reason


@dataclass(frozen=True)
class Action:
    verb: Verb
    post_id: int
    arg: int = 0

    def encode(self) -> str:
        return f"{PREFIX}:{self.verb.value}:{self.post_id}:{self.arg}"


class BadActionError(ValueError):
    pass


def decode(action_id: str) -> Action:
    parts = action_id.split(":")
    if len(parts) != 4 or parts[0] != PREFIX:
        raise BadActionError(f"not a torchdrill action: {action_id!r}")
    try:
        return Action(Verb(parts[1]), int(parts[2]), int(parts[3]))
    except ValueError as exc:
        raise BadActionError(f"malformed action id {action_id!r}") from exc


# Regex for platforms that route by pattern (discord.ui.DynamicItem templates, Slack action ids).
ACTION_PATTERN = rf"{PREFIX}:(?P<verb>[a-z]):(?P<post_id>[0-9]+):(?P<arg>[0-9]+)"
