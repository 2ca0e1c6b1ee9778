"""The rows around the daily question behind bot.core.daily's ``DailyStore``: channel ids and
addresses, a channel's streak mode, its role rewards, today's post and a claim's post.

Methods taking a session run inside the caller's transaction; the others are one each.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.daily.ports import ClaimRow, DailyKey, RewardLine
from bot.core.domain.identity import Where
from bot.storage.db import Database
from bot.storage.identity import channel_row
from bot.storage.models import (
    Answer,
    Channel,
    DailyClaim,
    Post,
    RoleGrant,
    RoleReward,
    Schedule,
    Streak,
    Workspace,
)


class StoredDaily:
    """``bot.core.daily.ports.DailyStore``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def channel_pk(self, where: Where) -> int:
        async with self.db.write() as session:
            return (await channel_row(session, where)).id

    async def where_of(self, channel_pk: int) -> Where:
        async with self.db.read() as session:
            channel = await session.get(Channel, channel_pk)
            assert channel is not None
            ws = await session.get(Workspace, channel.workspace_id)
            assert ws is not None
            return Where(ws.platform, ws.external_id, channel.channel_id, channel.name)

    # ---- streak mode -----------------------------------------------------------------------
    async def streak_mode(self, tx: AsyncSession, where: Where) -> tuple[int, int | None]:
        channel = await channel_row(tx, where)
        return channel.id, channel.streak_per_week

    async def scheduled_days(self, tx: AsyncSession, channel_pk: int) -> int | None:
        schedule = await tx.get(Schedule, channel_pk)
        return None if schedule is None else len(schedule.weekdays.split(","))

    async def set_streak_mode(self, tx: AsyncSession, channel_pk: int, per_week: int | None, *,
                              restart: bool) -> None:
        channel = await tx.get(Channel, channel_pk)
        assert channel is not None
        channel.streak_per_week = per_week
        if restart:
            await tx.execute(update(Streak).where(Streak.channel_id == channel_pk).values(
                current=0, best=0, week_of=None, week_answers=0, week_done=False))

    # ---- role rewards ----------------------------------------------------------------------
    async def reward_lines(self, tx: AsyncSession, channel_pk: int) -> list[RewardLine]:
        rows = (await tx.execute(
            select(RoleReward.kind, RoleReward.threshold, RoleReward.topic, RoleReward.role_id,
                   RoleReward.problem, func.count(RoleGrant.member_id))
            .outerjoin(RoleGrant, RoleGrant.reward_id == RoleReward.id)
            .where(RoleReward.channel_id == channel_pk).group_by(RoleReward.id))).tuples().all()
        return list(rows)

    async def reward_for_role(self, tx: AsyncSession, channel_pk: int, role_id: str) -> int | None:
        found = await tx.scalar(select(RoleReward).where(  # the row stays in the session for
            RoleReward.channel_id == channel_pk, RoleReward.role_id == role_id))  # a change or removal
        return None if found is None else found.id

    async def reward_count(self, tx: AsyncSession, channel_pk: int) -> int:
        count = await tx.scalar(select(func.count()).select_from(RoleReward)
                                .where(RoleReward.channel_id == channel_pk))
        return count or 0

    async def add_reward(self, tx: AsyncSession, channel_pk: int, *, role_id: str, kind: str,
                         threshold: int, topic: str | None, created_by: str, now: datetime) -> None:
        tx.add(RoleReward(channel_id=channel_pk, threshold=threshold, role_id=role_id, kind=kind,
                          topic=topic, created_by=created_by, created_at=now))

    async def change_reward(self, tx: AsyncSession, reward_id: int, *, kind: str, threshold: int,
                            topic: str | None) -> None:
        reward = await tx.get(RoleReward, reward_id)
        assert reward is not None
        reward.threshold, reward.kind, reward.topic, reward.problem = threshold, kind, topic, None

    async def remove_reward(self, tx: AsyncSession, reward_id: int) -> None:
        reward = await tx.get(RoleReward, reward_id)
        if reward is not None:
            await tx.delete(reward)

    # ---- today's post and a claim's post ---------------------------------------------------
    async def post_of_day(self, tx: AsyncSession, key: DailyKey) -> Post | None:
        claim = await tx.get(DailyClaim, key)
        return await tx.get(Post, claim.post_id) if claim and claim.post_id else None

    async def answered(self, tx: AsyncSession, post_id: int, member_id: int) -> bool:
        count = await tx.scalar(select(func.count()).select_from(Answer).where(
            Answer.post_id == post_id, Answer.member_id == member_id))
        return bool(count)

    async def claim_row(self, tx: AsyncSession, key: DailyKey) -> ClaimRow | None:
        row = await tx.get(DailyClaim, key)
        return None if row is None else ClaimRow(row.claimed_by, row.sent_at is not None, row.post_id)

    async def post(self, tx: AsyncSession, post_id: int) -> Post | None:
        return await tx.get(Post, post_id)

    async def record_post(self, tx: AsyncSession, key: DailyKey, post_id: int) -> None:
        row = await tx.get(DailyClaim, key)  # the claim ``claim_row`` read: no second query
        assert row is not None
        row.post_id = post_id
