"""Milestone roles behind bot.core.drill.ports' ``RoleGrants``: a channel's rewards, who holds
their roles, and what each member's milestone is measured on (the drill decides who earned it)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.domain.identity import Who
from bot.core.drill.ports import RewardCandidate, RewardStanding, RoleRewardRule
from bot.storage.db import Database
from bot.storage.estimates import read_abilities
from bot.storage.models import (
    ChallengeProgress,
    Channel,
    Member,
    RoleGrant,
    RoleReward,
    Streak,
    Workspace,
)


class StoredRoleGrants:
    """``RoleGrants``: each call one transaction, as ``Drill`` made them before."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def member_id(self, who: Who) -> int | None:
        async with self.db.read() as session:
            return await session.scalar(select(Member.id).join(
                Workspace, Workspace.id == Member.workspace_id).where(
                Workspace.platform == who.platform, Workspace.external_id == who.workspace,
                Member.user_id == who.user_id))

    async def channels_rewarding(self, platform: str, workspace: str,
                                 kinds: Collection[str]) -> list[tuple[int, str, str | None]]:
        async with self.db.read() as session:
            rows = (await session.execute(
                select(Channel.id, Channel.channel_id, Channel.name).distinct()
                .join(RoleReward, RoleReward.channel_id == Channel.id)
                .join(Workspace, Workspace.id == Channel.workspace_id)
                .where(Workspace.platform == platform, Workspace.external_id == workspace,
                       RoleReward.kind.in_(list(kinds))).order_by(Channel.id))).tuples().all()
        return list(rows)

    async def standings(self, channel_pk: int, kinds: Collection[str],
                        members: Collection[int] | None) -> list[RewardStanding]:
        async with self.db.read() as session:
            rewards = list(await session.scalars(select(RoleReward).where(
                RoleReward.channel_id == channel_pk, RoleReward.kind.in_(list(kinds)))))
            if not rewards:
                return []
            held = set((await session.execute(select(RoleGrant.reward_id, RoleGrant.member_id).where(
                RoleGrant.reward_id.in_([r.id for r in rewards])))).tuples())
            return [RewardStanding(
                RoleRewardRule(r.id, r.kind, r.role_id, r.threshold, r.topic),
                frozenset(m for reward_id, m in held if reward_id == r.id),
                await _candidates(session, r, members)) for r in rewards]

    async def record(self, reward_id: int, member_id: int, *, held: bool, now: datetime) -> None:
        try:
            async with self.db.write() as session:
                if held:
                    session.add(RoleGrant(reward_id=reward_id, member_id=member_id, granted_at=now))
                else:
                    await session.execute(delete(RoleGrant).where(
                        RoleGrant.reward_id == reward_id, RoleGrant.member_id == member_id))
        except IntegrityError:  # another replica recorded the same grant
            pass

    async def set_problem(self, reward_id: int, problem: str | None) -> None:
        async with self.db.write() as session:
            await session.execute(update(RoleReward).where(RoleReward.id == reward_id)
                                  .values(problem=problem))


async def _candidates(session: AsyncSession, reward: RoleReward,
                      members: Collection[int] | None) -> list[RewardCandidate]:
    """The members the reward looks at: the channel's daily players (streak, readiness) or the
    workspace's solvers (challenges); ``members``: only those (readiness: any member of the
    workspace, whose estimates moved)."""
    only = [] if members is None else [ChallengeProgress.member_id.in_(list(members))]
    if reward.kind == "solved":
        solved = (await session.execute(
            select(ChallengeProgress.member_id, Member.user_id, func.count(ChallengeProgress.solved_at))
            .join(Member, Member.id == ChallengeProgress.member_id)
            .join(Channel, Channel.workspace_id == ChallengeProgress.workspace_id)
            .where(Channel.id == reward.channel_id, *only)
            .group_by(ChallengeProgress.member_id, Member.user_id)
            .order_by(ChallengeProgress.member_id))).tuples().all()
        return [RewardCandidate(m, u, n) for m, u, n in solved]
    if reward.kind == "readiness" and members is not None:
        people = (await session.execute(
            select(Member.id, Member.user_id).join(Channel, Channel.workspace_id == Member.workspace_id)
            .where(Channel.id == reward.channel_id, Member.id.in_(list(members)))
            .order_by(Member.id))).tuples().all()
    else:
        streaks = (await session.execute(
            select(Streak.member_id, Streak.current, Member.user_id)
            .join(Member, Member.id == Streak.member_id).where(Streak.channel_id == reward.channel_id,
                                                               *([Streak.member_id.in_(list(members))]
                                                                 if members is not None else []))
            .order_by(Streak.member_id))).tuples().all()
        if reward.kind != "readiness":
            return [RewardCandidate(m, u, current) for m, current, u in streaks]
        people = [(m, u) for m, _, u in streaks]
    return [RewardCandidate(member_id, user_id, abilities=await read_abilities(session, member_id))
            for member_id, user_id in people]
