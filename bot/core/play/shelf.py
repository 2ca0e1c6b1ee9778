"""Keeps the library's community questions in step with the database.

Another replica may have taken an upload, so before choosing questions the core asks whether
anything changed (one small aggregate query); only then does it reload. A button on a post
whose question this process has not loaded yet reloads once (``Drill.handle_action``).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Library, Question
from bot.core.content.community import load_question
from bot.storage.models import CommunityBank, CommunityQuestion, Workspace


class Shelf:
    def __init__(self, library: Library) -> None:
        self.library = library
        self._stamp: tuple[object, ...] | None = None

    async def refresh(self, session: AsyncSession, *, force: bool = False) -> None:
        stamp = tuple((await session.execute(
            select(func.count(CommunityBank.id), func.max(CommunityBank.updated_at),
                   func.sum(CommunityBank.version))
        )).one())
        if stamp == self._stamp and not force:
            return
        banks = {
            bank_id: (enabled, (platform, workspace))
            for bank_id, enabled, platform, workspace in await session.execute(
                select(CommunityBank.id, CommunityBank.enabled, Workspace.platform, Workspace.external_id)
                .join(Workspace, Workspace.id == CommunityBank.workspace_id)
            )
        }
        every: dict[str, Question] = {}
        offered: dict[tuple[str, str], list[Question]] = {}
        rows = await session.execute(
            select(CommunityQuestion.bank_id, CommunityQuestion.retired, CommunityQuestion.data)
            .order_by(CommunityQuestion.bank_id, CommunityQuestion.slug)
        )
        for bank_id, retired, data in rows:
            question = load_question(data)
            every[question.id] = question
            enabled, community = banks[bank_id]
            if enabled and not retired:
                offered.setdefault(community, []).append(question)
        self.library.set_community(every, offered)
        self._stamp = stamp
