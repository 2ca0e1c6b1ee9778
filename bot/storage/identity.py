"""The workspace, member and channel rows behind bot.core.stores' ``Identities``: each found
or made on first sight, inside the caller's transaction (a concurrent insert of the same row
is absorbed by ``ON CONFLICT DO NOTHING`` and the row read back)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.clock import Clock
from bot.core.domain.identity import Where, Who
from bot.core.stores import ChannelRef, MemberRef
from bot.storage.models import Channel, Member, Workspace
from bot.storage.upsert import dialect_insert


class StoredIdentities:
    """``Identities``: the members and channels the core acts for, as their ids."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock  # a new member's ``created_at``

    async def member(self, tx: AsyncSession, who: Who) -> MemberRef:
        row = await member_row(tx, who, self.clock)
        return MemberRef(row.id, row.workspace_id, row.display_name)

    async def channel(self, tx: AsyncSession, where: Where) -> ChannelRef:
        row = await channel_row(tx, where)
        return ChannelRef(row.id, row.timezone)


async def workspace_row(session: AsyncSession, platform: str, external_id: str) -> Workspace:
    query = select(Workspace).where(
        Workspace.platform == platform, Workspace.external_id == external_id
    )
    row = await session.scalar(query)
    if row is None:
        await session.execute(
            dialect_insert(session, Workspace)
            .values(platform=platform, external_id=external_id)
            .on_conflict_do_nothing()
        )
        row = await session.scalar(query)
    assert row is not None
    return row


async def member_ref(session: AsyncSession, who: Who, clock: Clock) -> MemberRef:
    """``member_row``'s ids, cached per Database (``id_cache``, ``new_ids`` in the session's
    info) to save the round trips of the hot answer path."""
    key = (who.platform, who.workspace, who.user_id)
    cached = session.info.get("id_cache", {}).get(key) or session.info.get("new_ids", {}).get(key)
    if cached and (not who.display_name or cached[2] == who.display_name):
        return MemberRef(*cached)
    row = await member_row(session, who, clock)
    ref = MemberRef(row.id, row.workspace_id, row.display_name)
    if "new_ids" in session.info:
        session.info["new_ids"][key] = (ref.id, ref.workspace_id, ref.display_name)
    return ref


async def member_row(session: AsyncSession, who: Who, clock: Clock) -> Member:
    ws = await workspace_row(session, who.platform, who.workspace)
    query = select(Member).where(Member.workspace_id == ws.id, Member.user_id == who.user_id)
    row = await session.scalar(query)
    if row is None:
        await session.execute(
            dialect_insert(session, Member)
            .values(
                workspace_id=ws.id,
                user_id=who.user_id,
                display_name=who.display_name or who.user_id,
                created_at=clock.now(),
            )
            .on_conflict_do_nothing()
        )
        row = await session.scalar(query)
        assert row is not None
    elif who.display_name and row.display_name != who.display_name:
        row.display_name = who.display_name
    return row


async def channel_row(session: AsyncSession, where: Where) -> Channel:
    ws = await workspace_row(session, where.platform, where.workspace)
    query = select(Channel).where(
        Channel.workspace_id == ws.id, Channel.channel_id == where.channel_id
    )
    row = await session.scalar(query)
    if row is None:
        await session.execute(
            dialect_insert(session, Channel)
            .values(workspace_id=ws.id, channel_id=where.channel_id, name=where.name, timezone="UTC")
            .on_conflict_do_nothing()
        )
        row = await session.scalar(query)
    assert row is not None
    return row
