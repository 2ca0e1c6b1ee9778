"""Who is acting and where: members and channels are (platform, workspace, id) triples.

Vocabulary only: their rows are found or made by storage (``bot.core.stores.Identities``,
implemented in ``bot.storage.identity``)."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@dataclass(frozen=True)
class Who:
    platform: str
    workspace: str
    user_id: str
    display_name: str = ""

    @property
    def community(self) -> tuple[str, str]:
        return (self.platform, self.workspace)


@dataclass(frozen=True)
class Where:
    platform: str
    workspace: str
    channel_id: str
    name: str | None = None

    @property
    def community(self) -> tuple[str, str]:
        """The server or workspace: whose community banks this channel may be served."""
        return (self.platform, self.workspace)


class BadTimezoneError(ValueError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"unknown timezone {name!r}: use an IANA name such as 'Europe/Berlin' or 'America/New_York'"
        )


def check_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, IsADirectoryError) as exc:
        raise BadTimezoneError(name) from exc
