"""Channel posts as the drill asks and reveals them, behind bot.core.drill.ports'
``DrillPosts``: the statements ``Drill`` ran itself before."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.identity import Where
from bot.core.domain.kinds import PostKind
from bot.core.drill.ports import PostFacts
from bot.core.reveal.posts import is_closed
from bot.storage.db import Database
from bot.storage.identity import channel_row
from bot.storage.models import Answer, Channel, Post, Workspace

# posts per read in ``wheres``: a read per post made 5,000 reveals due at once wait on 5,000
# sequential round trips
WHERES_PER_READ = 1000


class StoredDrillPosts:
    """``DrillPosts``: the methods without a transaction argument run their own."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def channel_pk(self, tx: AsyncSession, where: Where) -> int:
        return (await channel_row(tx, where)).id

    async def set_ref(self, post_id: int, ref: str) -> None:
        async with self.db.write() as session:
            stored = await session.get(Post, post_id)
            assert stored is not None
            stored.platform_ref = ref

    async def extras_after(self, where: Where, post_id: int, now: datetime) -> list[tuple[int, str | None, bool]]:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            rows = await session.scalars(
                select(Post).where(Post.channel_id == channel.id, Post.kind == PostKind.NOW,
                                   Post.id > post_id).order_by(Post.id.desc()))
            return [(p.id, p.platform_ref, is_closed(p, now)) for p in rows]

    async def facts(self, tx: AsyncSession, post_id: int) -> PostFacts:
        post = await tx.get(Post, post_id)
        assert post is not None
        return PostFacts(post.question_id, post.kind, post.channel_id)

    async def answerers(self, post_id: int) -> list[int]:
        async with self.db.read() as session:
            return list(await session.scalars(select(Answer.member_id).where(Answer.post_id == post_id)))

    async def wheres(self, tx: AsyncSession, post_ids: Sequence[int]) -> dict[int, Where]:
        found: dict[int, Where] = {}
        for start in range(0, len(post_ids), WHERES_PER_READ):
            rows = await tx.execute(
                select(Post.id, Workspace.platform, Workspace.external_id, Channel.channel_id, Channel.name)
                .join(Channel, Channel.workspace_id == Workspace.id)
                .join(Post, Post.channel_id == Channel.id)
                .where(Post.id.in_(post_ids[start:start + WHERES_PER_READ]))
            )
            found.update({post_id: Where(platform, ext, channel, name)
                          for post_id, platform, ext, channel, name in rows})
        return found
