"""Study groups: named groups that members join and leave within a workspace. The rules for
names live here; the rows behind ``GroupStore`` (bot.core.progress.ports)."""

from __future__ import annotations

import re

NAME_RE = re.compile(r"^[\w][\w .+#-]{0,31}$")


class GroupError(ValueError):
    pass


def display_name(name: str) -> str:
    return " ".join(name.split())


def name_key(name: str) -> str:
    """The key a group is found by (case and spacing folded); GroupError for a bad name."""
    clean = display_name(name)
    if not NAME_RE.match(clean):
        raise GroupError(
            f"group names are 1-32 letters, digits, spaces or - _ . + # (got {name!r})"
        )
    return clean.lower()


def missing(name: str) -> GroupError:
    return GroupError(f"there is no study group called {name!r}; /group list shows them")


def taken(existing: str) -> GroupError:
    return GroupError(f"a group called {existing!r} already exists; join it with /group join")
