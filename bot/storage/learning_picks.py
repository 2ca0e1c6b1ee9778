"""Reads behind calibration and the quality lab.

``read_member_picks``: one member's revealed picks. ``read_question_stats`` and
``read_item_estimates``: what the quality lab reads, a bounded aggregate (a few rows per
question and choice, whatever the number of answers) and the stored estimates
(``bot.storage.estimates``, which also holds ``read_picks``, every pick: the batch refit's
input), so /bank quality neither replays nor refits picks. Answers on a channel
question that is still open are left out: picks stay private until the reveal, aggregated
ones included.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from sqlalchemy import and_, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bot.core.domain.identity import Who
from bot.core.learning.irt import ItemEstimate
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.learning.quality import QuestionStats
from bot.core.learning.quality_desk import CommunityPool
from bot.storage.db import Database
from bot.storage.estimates import read_item_estimates
from bot.storage.identity import workspace_row
from bot.storage.models import Answer, CommunityBank, CommunityQuestion, MemberAbility
from bot.storage.visibility import on_open_question


async def read_member_picks(session: AsyncSession, member_id: int) -> list[Pick]:
    """One member's revealed picks, oldest first (the order the online update replays them)."""
    rows = await session.execute(
        select(Answer.question_id, Answer.topic, Answer.choice, Answer.correct, Answer.response_ms)
        .where(Answer.member_id == member_id, ~on_open_question())
        .order_by(Answer.answered_at, Answer.id)
    )
    return [Pick(str(member_id), q, t, c, bool(ok), ms or 0) for q, t, c, ok, ms in rows]


def _answers_of(question_ids: Collection[str], workspace_id: int | None) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [Answer.question_id.in_(sorted(question_ids)), ~on_open_question()]
    if workspace_id is not None:
        where.append(Answer.workspace_id == workspace_id)
    return where


async def read_question_stats(session: AsyncSession, items: Sequence[ItemInfo], *,
                              workspace_id: int | None = None, groups: int = 3) -> dict[str, QuestionStats]:
    """Per question, the sums the quality flags need (``QuestionStats``), aggregated by the
    database: each answer carries its member's stored ability in the topic (0, the prior
    mean, where none is stored) and its rank among the question's respondents; the result is
    one row per question and choice, plus the two middle answer times per question."""
    if not items:
        return {}
    ids = [item.question for item in items]
    theta = func.coalesce(MemberAbility.mean, 0.0)
    scored = (
        select(Answer.question_id.label("q"), Answer.choice.label("choice"), Answer.correct.label("ok"),
               theta.label("theta"),
               func.row_number().over(partition_by=Answer.question_id,
                                      order_by=(theta.desc(), Answer.id)).label("rank"),
               func.count().over(partition_by=Answer.question_id).label("n"))
        .select_from(Answer)
        .outerjoin(MemberAbility, and_(MemberAbility.member_id == Answer.member_id,
                                       MemberAbility.topic == Answer.topic))
        .where(*_answers_of(ids, workspace_id))
    ).subquery()
    ok = case((scored.c.ok, 1), else_=0)
    strong = case((scored.c.rank * groups <= scored.c.n, 1), else_=0)  # rank <= n // groups
    rows = await session.execute(
        select(scored.c.q, scored.c.choice, func.count(), func.sum(ok), func.sum(scored.c.theta),
               func.sum(scored.c.theta * scored.c.theta), func.sum(ok * scored.c.theta), func.sum(strong))
        .group_by(scored.c.q, scored.c.choice))
    timed = (
        select(Answer.question_id.label("q"), Answer.response_ms.label("ms"),
               func.row_number().over(partition_by=Answer.question_id, order_by=Answer.response_ms).label("rank"),
               func.count().over(partition_by=Answer.question_id).label("n"))
        .where(*_answers_of(ids, workspace_id), Answer.response_ms > 0)
    ).subquery()
    middle = and_(timed.c.rank * 2 >= timed.c.n, timed.c.rank * 2 <= timed.c.n + 2)  # the one or two middle ones
    medians = {q: int(ms) for q, ms in await session.execute(
        select(timed.c.q, func.avg(timed.c.ms)).where(middle).group_by(timed.c.q))}
    per_choice: dict[str, list[tuple[int, int, int, float, float, float, int]]] = defaultdict(list)
    for q, choice, n, right, s_theta, s_theta2, s_right_theta, s_strong in rows:
        per_choice[q].append((int(choice), int(n), int(right or 0), float(s_theta or 0.0),
                              float(s_theta2 or 0.0), float(s_right_theta or 0.0), int(s_strong or 0)))
    found: dict[str, QuestionStats] = {}
    for item in items:
        groups_of = per_choice.get(item.question)
        if not groups_of:
            continue
        counts, thetas, strongs = [0] * item.n_choices, [0.0] * item.n_choices, [0] * item.n_choices
        for choice, n, _right, s_theta, _s2, _srt, s_strong in groups_of:
            if 0 <= choice < item.n_choices:
                counts[choice], thetas[choice], strongs[choice] = n, s_theta, s_strong
        answers = sum(g[1] for g in groups_of)
        found[item.question] = QuestionStats(
            answers=answers, right=sum(g[2] for g in groups_of), counts=tuple(counts),
            theta_by_choice=tuple(thetas), strong=tuple(strongs), strong_size=answers // groups,
            sum_theta=sum(g[3] for g in groups_of), sum_theta2=sum(g[4] for g in groups_of),
            sum_right_theta=sum(g[5] for g in groups_of), median_ms=medians.get(item.question))
    return found


class StoredQualityData:
    """The quality lab's storage port (``bot.core.learning.quality_desk.QualityData``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def community_bank(self, who: Who, slug: str) -> CommunityPool | None:
        async with self.db.read() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            row = await session.scalar(select(CommunityBank).where(
                CommunityBank.workspace_id == ws.id, CommunityBank.slug == slug))
            if row is None:
                return None
            data = list(await session.scalars(select(CommunityQuestion.data).where(
                CommunityQuestion.bank_id == row.id, CommunityQuestion.retired.is_(False))))
            return CommunityPool(ws.id, row.slug, row.title, data)

    async def stats(self, items: Sequence[ItemInfo], workspace_id: int | None,
                    groups: int) -> dict[str, QuestionStats]:
        async with self.db.read() as session:
            return await read_question_stats(session, items, workspace_id=workspace_id, groups=groups)

    async def estimates(self, items: Sequence[ItemInfo], workspace_id: int | None) -> dict[str, ItemEstimate]:
        async with self.db.read() as session:
            return await read_item_estimates(session, items, workspace_id or 0)
