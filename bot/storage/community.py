"""The community banks behind bot.core.stores' ``CommunityRows``: the shelf's change stamp
and its rows, read in the caller's transaction."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.stores import CommunityRow
from bot.storage.models import CommunityBank, CommunityQuestion, Workspace


class StoredCommunityRows:
    """``CommunityRows``: the same three queries the shelf always made."""

    async def stamp(self, session: AsyncSession) -> tuple[object, ...]:
        return tuple((await session.execute(
            select(func.count(CommunityBank.id), func.max(CommunityBank.updated_at),
                   func.sum(CommunityBank.version))
        )).one())

    async def rows(self, session: AsyncSession) -> list[CommunityRow]:
        banks = {
            bank_id: (enabled, (platform, workspace))
            for bank_id, enabled, platform, workspace in await session.execute(
                select(CommunityBank.id, CommunityBank.enabled, Workspace.platform, Workspace.external_id)
                .join(Workspace, Workspace.id == CommunityBank.workspace_id)
            )
        }
        rows = await session.execute(
            select(CommunityQuestion.bank_id, CommunityQuestion.retired, CommunityQuestion.data)
            .order_by(CommunityQuestion.bank_id, CommunityQuestion.slug)
        )
        return [CommunityRow(banks[bank_id][0], banks[bank_id][1], retired, data)
                for bank_id, retired, data in rows]
