"""Who is acting and where: members and channels are (platform, workspace, id) triples."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.clock import Clock
from bot.storage.models import Channel, Member, Workspace
from bot.storage.upsert import dialect_insert


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


@dataclass(frozen=True)
class MemberRef:
    """The two ids most interactions need, cached per Database to save round trips."""

    id: int
    workspace_id: int
    display_name: str


async def member_ref(session: AsyncSession, who: Who, clock: Clock) -> MemberRef:
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
