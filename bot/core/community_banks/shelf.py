"""Keeps the library's community questions in step with the database.

Another replica may have taken an upload, so before choosing questions the core asks whether
anything changed (one small aggregate query); only then does it reload. A button on a post
whose question this process has not loaded yet reloads once (``Drill.handle_action``). The
rows come through ``CommunityRows`` (bot.core.stores), read in the caller's transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.content.bank import Library, Question
from bot.core.content.community import load_question

if TYPE_CHECKING:
    from bot.core.stores import CommunityRows, Tx


class Shelf:
    def __init__(self, library: Library, rows: CommunityRows) -> None:
        self.library = library
        self.rows = rows
        self._stamp: tuple[object, ...] | None = None

    async def refresh(self, session: Tx, *, force: bool = False) -> None:
        stamp = await self.rows.stamp(session)
        if stamp == self._stamp and not force:
            return
        every: dict[str, Question] = {}
        offered: dict[tuple[str, str], list[Question]] = {}
        for row in await self.rows.rows(session):
            question = load_question(row.data)
            every[question.id] = question
            if row.enabled and not row.retired:
                offered.setdefault(row.community, []).append(question)
        self.library.set_community(every, offered)
        self._stamp = stamp
