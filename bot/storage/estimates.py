"""Stored ability and difficulty estimates: the reads behind ``bot.core.learning.estimates``,
their online update when a post's answers are revealed, and the periodic batch refit that
overwrites them.

``apply_revealed`` writes them when a post is revealed (a channel post's reveal, a private or
quiz post's own answer), once per post, in the transaction that marks it so: a member's
ability per topic in one row, a question's difficulty as its last refit
(``question_difficulties``, absent before the first: the label's prior) plus the online
evidence since, striped by post (``question_difficulty_stripes``: mean = base mean -
sum(shift), precision = 1 / base var + sum(info)). The click itself writes none of it
(``docs/clicks.md``: it cost the click path +8-34%), and estimates never hold an answer that
is not revealed yet, so readers may show them to the member.

``refit`` (``torchdrill learning refit``, run periodically, e.g. nightly from cron) fits all
revealed picks with the batch Rasch / 2PL fit and, per scope in one transaction, writes each
question's difficulty and its standard error as the new base and drops its stripes; abilities
come from the fit of the built-in questions (all communities, one scale). Online evidence
from questions still open at the refit is dropped with the stripes; the next refit counts it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Kind, Library, Question
from bot.core.content.community import is_community_id
from bot.core.learning.estimates import BUILT_IN_SCOPE, calibrator_from, scope_of
from bot.core.learning.irt import Calibration, FitSettings, ItemEstimate, fit
from bot.core.learning.online import LABEL_LOGITS, PRIOR_VAR, Belief, OnlineCalibrator, step
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.progress.ability import labels_of
from bot.storage import hot_statements as hot
from bot.storage.db import Database
from bot.storage.models import Answer, MemberAbility, QuestionDifficulty, QuestionDifficultyStripe
from bot.storage.upsert import dialect_insert
from bot.storage.visibility import on_open_question

PARTITION = 10_000


async def read_picks(session: AsyncSession, question_ids: Collection[str], *,
                     workspace_id: int | None = None) -> list[Pick]:
    """Picks of ``question_ids`` (every community's, or one workspace's), member = member row id."""
    if not question_ids:
        return []
    query = (
        select(Answer.member_id, Answer.question_id, Answer.topic, Answer.choice, Answer.correct,
               Answer.response_ms)
        .where(Answer.question_id.in_(sorted(question_ids)), ~on_open_question())
        .execution_options(yield_per=PARTITION)
    )
    if workspace_id is not None:
        query = query.where(Answer.workspace_id == workspace_id)
    picks: list[Pick] = []
    result = await session.stream(query)
    async for rows in result.partitions(PARTITION):
        picks.extend(Pick(str(m), q, t, c, bool(ok), ms or 0) for m, q, t, c, ok, ms in rows)
    return picks


async def read_abilities(session: AsyncSession, member_id: int) -> dict[str, Belief]:
    rows = await session.execute(select(MemberAbility.topic, MemberAbility.mean, MemberAbility.var,
                                        MemberAbility.n).where(MemberAbility.member_id == member_id))
    return {topic: Belief(mean, var, n) for topic, mean, var, n in rows}


async def read_difficulties(session: AsyncSession, labels: Mapping[str, int],
                            workspace_id: int) -> dict[str, Belief]:
    """Stored difficulties (refit base + online stripes) of the questions in ``labels``
    (question id -> labelled difficulty: the prior of one never refit)."""
    question_ids = labels
    keys = sorted({(q, scope_of(q, workspace_id)) for q in question_ids})
    if not keys:
        return {}
    pair = tuple_(QuestionDifficulty.question_id, QuestionDifficulty.scope_id)
    base = {q: (m, v, n) for q, m, v, n in await session.execute(
        select(QuestionDifficulty.question_id, QuestionDifficulty.mean, QuestionDifficulty.var,
               QuestionDifficulty.n).where(pair.in_(keys)))}
    s = QuestionDifficultyStripe
    stripes = {q: (shift, info, n) for q, shift, info, n in await session.execute(
        select(s.question_id, func.sum(s.shift), func.sum(s.info), func.sum(s.n))
        .where(tuple_(s.question_id, s.scope_id).in_(keys)).group_by(s.question_id))}
    found: dict[str, Belief] = {}
    for q in set(base) | set(stripes):
        mean, var, n = base.get(q, (LABEL_LOGITS.get(labels[q], 0.0), PRIOR_VAR, 0))
        shift, info, s_n = stripes.get(q, (0.0, 0.0, 0))
        found[q] = Belief(mean - float(shift), 1.0 / (1.0 / var + float(info)), int(n) + int(s_n))
    return found


async def read_item_estimates(session: AsyncSession, items: Sequence[ItemInfo],
                              workspace_id: int) -> dict[str, ItemEstimate]:
    """The stored difficulty of each question (refit base + online evidence since, as
    ``read_difficulties`` reads it) with the refit's 2PL slope where one was fitted; questions
    never answered since the estimates exist are absent."""
    beliefs = await read_difficulties(session, {item.question: item.labelled for item in items}, workspace_id)
    keys = sorted((q, scope_of(q, workspace_id)) for q in beliefs)
    slopes: dict[str, tuple[float, float | None]] = {}
    if keys:
        d = QuestionDifficulty
        slopes = {q: (a, a_se) for q, a, a_se in await session.execute(
            select(d.question_id, d.slope, d.slope_se)
            .where(tuple_(d.question_id, d.scope_id).in_(keys), d.slope.is_not(None), d.slope_se.is_not(None)))}
    topics = {item.question: item.topic for item in items}
    found = {}
    for q, b in beliefs.items():
        slope, slope_se = slopes.get(q, (1.0, None))
        found[q] = ItemEstimate(q, topics[q], b.mean, b.se, slope, slope_se, b.n)
    return found


async def stored_calibrator(session: AsyncSession, library: Library, member_id: int,
                            workspace_id: int) -> OnlineCalibrator:
    """The member's stored beliefs and those of every question they may be offered, ready for
    ``adaptive.predicted_success`` and ``readiness.from_belief`` (no replay of their history)."""
    labels = labels_of(library)
    return calibrator_from(member_id, await read_abilities(session, member_id),
                           await read_difficulties(session, labels, workspace_id), labels)


class StoredEstimates:
    """``bot.core.learning.estimates.EstimateStore`` on the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def abilities(self, member_id: int) -> dict[str, Belief]:
        async with self.db.read() as session:
            return await read_abilities(session, member_id)

    async def difficulties(self, labels: Mapping[str, int], workspace_id: int) -> dict[str, Belief]:
        async with self.db.read() as session:
            return await read_difficulties(session, labels, workspace_id)


# ---- the online update, at the reveal ----------------------------------------------------

DIFFICULTY_STRIPES = 32  # stripe = post id modulo this: posts of one question revealed at once


async def apply_revealed(session: AsyncSession, post_id: int, question: Question, now: datetime) -> int:
    """Move the estimates by every answer of the post, one online step each, in answer order:
    the members' abilities in the question's topic and the question's difficulty in each
    answer's bank scope. Call it exactly once per post, in the transaction that marks the post
    revealed (``posts.reveal`` under the post's row lock, ``answers`` when a private post's one
    answer closes it): a re-run reveal or a double click then updates nothing twice. Returns
    the answers counted.

    A few set-based statements per post on the raw driver (``hot_statements``), the arithmetic
    in Python: about 10 us an answer, where the ORM took some 130 (``bench.answers --scale``).
    PostgreSQL: two round trips, no row lock (``_apply_revealed_pg``: a write that checks each
    ability row is still as read, and steps again under a lock the few that are not), so
    concurrent reveals sharing members lose no update. SQLite: the write lock is held, so the
    rows are read, created where missing and written in turn. The difficulty evidence is added
    to the post's stripe, so two reveals of one question add up.
    """
    if question.kind is not Kind.MCQ:
        return 0
    values = {"post_id": post_id, "topic": question.topic, "prior_var": PRIOR_VAR, "now": now}
    if session.get_bind().dialect.name == "postgresql":
        return await _apply_revealed_pg(session, post_id, question, values)
    found = await hot.rows(session, hot.REVEAL_READ, values)  # SQLite: the write lock is held
    if not found or len(found) < found[0][7]:  # a member's first answer in the topic
        await hot.rows(session, hot.ABILITY_ROWS, values)
        found = await hot.rows(session, hot.REVEAL_READ, values)
    if not found:
        return 0
    found.sort()  # answer order
    start: dict[int, Belief] = {}
    difficulty: dict[int, tuple[float, float]] = {}  # scope -> (mean, var), moved answer by answer
    info: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    scopes: dict[int, int] = {}  # workspace -> scope
    ids: list[int] = []
    means: list[float] = []
    variances: list[float] = []
    for _id, member_id, workspace_id, correct, a_mean, a_var, _n, _count in found:
        scope = scopes.get(workspace_id)
        if scope is None:
            scope = scopes[workspace_id] = scope_of(question.id, workspace_id)
            if scope not in difficulty:
                base_mean, base_var, shift, more = (await hot.rows(session, hot.DIFFICULTY_OF, {
                    "question_id": question.id, "scope_id": scope}))[0]
                mean = (LABEL_LOGITS.get(question.difficulty, 0.0) if base_mean is None else base_mean)
                var = 1.0 / (1.0 / (PRIOR_VAR if base_var is None else base_var) + float(more or 0.0))
                start[scope] = Belief(mean - float(shift or 0.0), var)
                difficulty[scope] = (start[scope].mean, var)
        a_mean, a_var, d_mean, d_var, p_info = step(a_mean, a_var, *difficulty[scope], bool(correct))
        difficulty[scope] = (d_mean, d_var)
        info[scope] += p_info
        counts[scope] += 1
        ids.append(member_id)
        means.append(a_mean)
        variances.append(a_var)
    await hot.many(session, hot.SET_ABILITY, values, [
        {"member_id": m, "mean": a, "var": v} for m, a, v in zip(ids, means, variances, strict=True)])
    for scope, (d_mean, _var) in difficulty.items():
        await hot.rows(session, hot.ADD_DIFFICULTY, {
            "question_id": question.id, "scope_id": scope, "d_stripe": post_id % DIFFICULTY_STRIPES,
            "d_n": counts[scope], "d_info": info[scope], "d_shift": start[scope].mean - d_mean})
    return len(found)


async def _difficulty_in(session: AsyncSession, question: Question, scope: int) -> tuple[float, float, float]:
    """(mean, var, the stripes' summed shift) of the question in ``scope``, one read."""
    base_mean, base_var, shift, more = (await hot.rows(session, hot.DIFFICULTY_OF, {
        "question_id": question.id, "scope_id": scope}))[0]
    return _difficulty_of(question, base_mean, base_var, shift, more)


def _difficulty_of(question: Question, base_mean: float | None, base_var: float | None,
                   shift: float | None, more: float | None) -> tuple[float, float, float]:
    mean = LABEL_LOGITS.get(question.difficulty, 0.0) if base_mean is None else base_mean
    var = 1.0 / (1.0 / (PRIOR_VAR if base_var is None else base_var) + float(more or 0.0))
    return mean - float(shift or 0.0), var, float(shift or 0.0)


async def _apply_revealed_pg(session: AsyncSession, post_id: int, question: Question,
                             values: dict[str, object]) -> int:
    """``apply_revealed`` on PostgreSQL in two round trips and without row locks: one read
    (the answers, the abilities they start from, the question's difficulty) and one write
    (the new abilities inserted or updated where the row is still as read, the difficulty's
    stripe). The lock the read took before wrote every ability row once more, and each
    round trip costs most on a loaded host (4-20 ms a statement at a load average of 8).

    A row that changed between the read and the write (another reveal of the member's answer
    in the topic, or the refit, committed meanwhile) is left out by the write's check; such
    members are stepped again under a row lock from their row as it is now, against the
    difficulty their answer met in this reveal: no update is lost or made twice. (The
    difficulty's evidence from that answer used the ability as read; two reveals of one
    question likewise each start from the evidence committed before them.)"""
    built_in = not is_community_id(question.id)
    found = await hot.rows(session, hot.REVEAL_READ_FREE_PG, {
        **values, "question_id": question.id, "scope_id": BUILT_IN_SCOPE if built_in else -1})
    if not found:
        return 0
    difficulty: dict[int, tuple[float, float]] = {}  # scope -> (mean, var), moved answer by answer
    start: dict[int, float] = {}  # scope -> mean before this reveal
    info: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    met: dict[int, tuple[int, float, float, bool]] = {}  # member -> (scope, d mean, d var, correct)
    ids: list[int] = []
    means: list[float] = []
    variances: list[float] = []
    old_means: list[float | None] = []
    old_vars: list[float | None] = []
    old_ns: list[int | None] = []
    for _id, member_id, workspace_id, correct, a_mean, a_var, a_n, b_mean, b_var, shift, more in found:
        scope = scope_of(question.id, workspace_id)
        if scope not in difficulty:
            mean, var, _shift = (_difficulty_of(question, b_mean, b_var, shift, more) if built_in
                                 else await _difficulty_in(session, question, scope))
            start[scope] = mean
            difficulty[scope] = (mean, var)
        met[member_id] = (scope, *difficulty[scope], bool(correct))
        new_mean, new_var, d_mean, d_var, p_info = step(
            0.0 if a_n is None else a_mean, PRIOR_VAR if a_n is None else a_var, *difficulty[scope], bool(correct))
        difficulty[scope] = (d_mean, d_var)
        info[scope] += p_info
        counts[scope] += 1
        ids.append(member_id)
        means.append(new_mean)
        variances.append(new_var)
        old_means.append(a_mean)
        old_vars.append(a_var)
        old_ns.append(a_n)
    order = sorted(range(len(ids)), key=ids.__getitem__)  # rows written in member order
    scopes = sorted(difficulty)
    written = await hot.rows(session, hot.WRITE_REVEAL_PG, {
        **values, "question_id": question.id, "d_stripe": post_id % DIFFICULTY_STRIPES,
        "ids": [ids[i] for i in order], "means": [means[i] for i in order],
        "vars": [variances[i] for i in order], "old_means": [old_means[i] for i in order],
        "old_vars": [old_vars[i] for i in order], "old_ns": [old_ns[i] for i in order],
        "d_scopes": scopes, "d_ns": [counts[c] for c in scopes], "d_infos": [info[c] for c in scopes],
        "d_shifts": [start[c] - difficulty[c][0] for c in scopes]})
    stale = sorted(set(ids) - {row[0] for row in written})
    if stale:
        await hot.rows(session, hot.STALE_ROWS_PG, {**values, "ids": stale})
        again_ids, again_means, again_vars = [], [], []
        for member_id, a_mean, a_var in await hot.rows(session, hot.STALE_READ_PG, {**values, "ids": stale}):
            _scope, d_mean, d_var, correct = met[member_id]
            new_mean, new_var, *_ = step(a_mean, a_var, d_mean, d_var, correct)
            again_ids.append(member_id)
            again_means.append(new_mean)
            again_vars.append(new_var)
        await hot.rows(session, hot.SET_ABILITIES_PG, {
            **values, "ids": again_ids, "means": again_means, "vars": again_vars})
    return len(found)


# ---- the periodic refit ------------------------------------------------------------------

@dataclass(frozen=True)
class RefitSummary:
    scopes: int
    questions: int
    abilities: int
    answers: int


async def _write_scope(db: Database, scope: int, calibration: Calibration, now: datetime,
                       *, abilities: bool) -> None:
    async with db.write() as session:
        for item in calibration.items.values():
            free = item.slope_se is not None  # 2PL: the slope was fitted
            values = dict(question_id=item.question, scope_id=scope, mean=item.difficulty,
                          var=item.difficulty_se ** 2, n=item.answers, refit_at=now,
                          slope=item.slope if free else None, slope_se=item.slope_se)
            insert = dialect_insert(session, QuestionDifficulty).values(**values)
            await session.execute(insert.on_conflict_do_update(
                index_elements=["question_id", "scope_id"],
                set_={k: insert.excluded[k] for k in ("mean", "var", "n", "refit_at", "slope", "slope_se")}))
        ids = list(calibration.items)
        for start in range(0, len(ids), 500):
            await session.execute(delete(QuestionDifficultyStripe).where(
                QuestionDifficultyStripe.scope_id == scope,
                QuestionDifficultyStripe.question_id.in_(ids[start:start + 500])))
        if not abilities:
            return
        for est in calibration.abilities.values():
            values = dict(member_id=int(est.member), topic=est.topic, mean=est.ability, var=est.se ** 2,
                          n=est.answers, updated_at=now)
            insert = dialect_insert(session, MemberAbility).values(**values)
            await session.execute(insert.on_conflict_do_update(
                index_elements=["member_id", "topic"],
                set_={k: insert.excluded[k] for k in ("mean", "var", "n", "updated_at")}))


async def refit(db: Database, library: Library, now: datetime,
                settings: FitSettings | None = None) -> RefitSummary:
    """Batch-fit every revealed pick and overwrite the stored estimates (see the module doc)."""
    built_in = {q.id for q in library.questions if q.kind is Kind.MCQ}
    async with db.read() as session:
        picks = await read_picks(session, built_in)
        rows = await session.execute(
            select(Answer.workspace_id, Answer.question_id).where(Answer.question_id.like("c%.%")).distinct())
        community: dict[int, set[str]] = defaultdict(set)
        for ws, q in rows:
            if is_community_id(q):
                community[ws].add(q)
    scopes = questions = abilities = answers = 0
    if picks:
        calibration = fit(picks, settings)
        await _write_scope(db, BUILT_IN_SCOPE, calibration, now, abilities=True)
        scopes, questions, abilities, answers = 1, len(calibration.items), len(calibration.abilities), len(picks)
    for ws, ids in sorted(community.items()):
        async with db.read() as session:
            mine = await read_picks(session, ids, workspace_id=ws)
        if not mine:
            continue
        calibration = fit(mine, settings)
        await _write_scope(db, ws, calibration, now, abilities=False)
        scopes, questions, answers = scopes + 1, questions + len(calibration.items), answers + len(mine)
    return RefitSummary(scopes, questions, abilities, answers)
