"""The click path keeps the public count incrementally (issue 36): summed from a few stripes
per post, never counted from the answers, exactly once (double clicks, concurrent retries).
The calibration estimates (issue 33) move at the reveal: every revealed answer moves the
member's ability and the question's difficulty by one online step, exactly once (a re-run
reveal), and nothing unrevealed shows in them; on both databases."""

from __future__ import annotations

import asyncio
import math

import pytest
from sqlalchemy import func, select

from bot.core.content.bank import Kind, Library
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.drill.service import Drill
from bot.core.learning import online
from bot.core.learning.adaptive import predicted_success
from bot.core.learning.online import OnlineCalibrator, step
from bot.core.learning.picks import Pick
from bot.core.learning.readiness import from_belief
from bot.core.progress.ability import labels_of
from bot.storage import hot_statements as hot
from bot.storage.estimates import (
    apply_revealed,
    read_abilities,
    read_difficulties,
    refit,
    stored_calibrator,
)
from bot.storage.models import (
    Answer,
    MemberAbility,
    PostAnswerCount,
    QuestionDifficulty,
    QuestionDifficultyStripe,
)
from tests.conftest import RecordingPublisher

HERE = Where("test", "w", "c", "general")
MEMBERS = [Who("test", "w", f"u{i}", f"m{i}") for i in range(12)]


async def pick(drill: Drill, post_id: int, position: int, who: Who):
    return await drill.handle_action(who, Action(Verb.PICK, post_id, position).encode())


async def replayed(drill: Drill, library: Library) -> tuple[OnlineCalibrator, list[Pick]]:
    """The online update fed every recorded answer post by post (the reveals' order, here the
    posts' own), in the order recorded within a post."""
    async with drill.db.read() as session:
        rows = (await session.execute(select(Answer.member_id, Answer.question_id, Answer.topic, Answer.choice,
                                             Answer.correct).order_by(Answer.post_id, Answer.id))).all()
    picks = [Pick(str(m), q, t, c, bool(ok)) for m, q, t, c, ok in rows]
    calibrator = OnlineCalibrator(labels=labels_of(library))
    for p in picks:
        calibrator.observe(p)
    return calibrator, picks


def test_no_click_statement_counts_the_answers() -> None:
    for statement in (hot.CLICK_STATE, hot.RECORD_PG, hot.RECORD_PG_FIRST):
        assert "count(*) FROM answers" not in statement.sql
        assert "post_answer_counts" in statement.sql


async def test_the_public_count_is_kept_in_stripes_and_counts_each_member_once(drill: Drill) -> None:
    publisher = RecordingPublisher()
    warm = await drill.ask(HERE, publisher, kind="daily")
    post = await drill.ask(HERE, publisher, kind="daily")
    for who in MEMBERS:  # first contact goes through the session; then the members are known
        await pick(drill, warm.post_id, 0, who)
    for n, who in enumerate(MEMBERS, start=1):  # known members: the raw path
        outcome = await pick(drill, post.post_id, n % 4, who)
        assert outcome.recorded and outcome.public is not None
        assert f"{n} answered" in outcome.public.plain()
        again = await pick(drill, post.post_id, (n + 1) % 4, who)  # a double click
        assert not again.recorded and "You already answered" in again.reply.plain()
    async with drill.db.read() as session:
        stripes = (await session.execute(select(PostAnswerCount.stripe, PostAnswerCount.n)
                                          .where(PostAnswerCount.post_id == post.post_id))).all()
    assert sum(n for _, n in stripes) == len(MEMBERS) and 1 <= len(stripes) <= hot.COUNT_STRIPES


async def test_concurrent_double_clicks_count_and_update_once(drill: Drill) -> None:
    publisher = RecordingPublisher()
    warm = await drill.ask(HERE, publisher, kind="daily")
    post = await drill.ask(HERE, publisher, kind="daily")
    for who in MEMBERS:
        await pick(drill, warm.post_id, 0, who)
    outcomes = await asyncio.gather(*(pick(drill, post.post_id, k % 4, who)
                                      for who in MEMBERS for k in range(3)))
    assert sum(o.recorded for o in outcomes) == len(MEMBERS)
    async with drill.db.read() as session:
        counted = await session.scalar(select(func.sum(PostAnswerCount.n))
                                       .where(PostAnswerCount.post_id == post.post_id))
        stripe_n = await session.scalar(select(func.sum(QuestionDifficultyStripe.n)))
        ability_n = await session.scalar(select(func.sum(MemberAbility.n)))
    assert counted == len(MEMBERS)
    assert stripe_n is None and ability_n is None  # nothing moves before the reveal
    await drill.reveal_post(warm.post_id, HERE, publisher)
    await asyncio.gather(*(drill.reveal_post(post.post_id, HERE, publisher) for _ in range(3)))
    await drill.reveal_post(post.post_id, HERE, publisher)  # a re-run reveal
    async with drill.db.read() as session:
        stripe_n = await session.scalar(select(func.sum(QuestionDifficultyStripe.n)))
        ability_n = await session.scalar(select(func.sum(MemberAbility.n)))
    assert stripe_n == ability_n == 2 * len(MEMBERS)  # the warm-up answers and these, once each


async def test_an_unrevealed_answer_moves_no_estimate(drill: Drill, clock: FakeClock) -> None:
    """A member must not learn from their estimates whether an open question was right."""
    publisher = RecordingPublisher()
    post = await drill.ask(HERE, publisher, kind="daily")
    assert (await pick(drill, post.post_id, 0, MEMBERS[0])).recorded
    async with drill.db.read() as session:
        member_id = await session.scalar(select(Answer.member_id).where(Answer.post_id == post.post_id))
        assert member_id is not None
        assert await read_abilities(session, member_id) == {}
    clock.advance(hours=13)
    assert await drill.reveal_due(publisher) == 1
    async with drill.db.read() as session:
        assert [b.n for b in (await read_abilities(session, member_id)).values()] == [1]


async def test_stored_estimates_are_the_online_update_of_every_recorded_answer(
    drill: Drill, library: Library
) -> None:
    publisher = RecordingPublisher()
    posts = [await drill.ask(HERE, publisher, kind="daily") for _ in range(3)]
    for round_ in range(2):  # a first answer through the session, later ones on the raw path
        for i, who in enumerate(MEMBERS):
            for k, post in enumerate(posts):
                await pick(drill, post.post_id, (i * (k + 1) + round_) % 4, who)
    for post in posts:
        await drill.reveal_post(post.post_id, HERE, publisher)
    calibrator, picks = await replayed(drill, library)
    assert len(picks) == len(MEMBERS) * len(posts)
    async with drill.db.read() as session:
        member_ids = sorted({int(p.member) for p in picks})
        for member_id in member_ids:
            for topic, belief in (await read_abilities(session, member_id)).items():
                expected = calibrator.ability(str(member_id), topic)
                assert belief.n == expected.n
                assert math.isclose(belief.mean, expected.mean, abs_tol=1e-9)
                assert math.isclose(belief.var, expected.var, abs_tol=1e-9)
        questions = {p.question for p in picks}
        stored = await read_difficulties(session, {q: library[q].difficulty for q in questions}, workspace_id=1)
        assert set(stored) == questions
        for q, belief in stored.items():
            expected = calibrator.difficulty(q)
            assert belief.n == expected.n == len(MEMBERS)
            assert math.isclose(belief.mean, expected.mean, abs_tol=1e-9)
            assert math.isclose(belief.var, expected.var, abs_tol=1e-9)
        # readers take the stored beliefs as they took a replay
        member = member_ids[0]
        ws = await session.scalar(select(Answer.workspace_id).where(Answer.member_id == member).limit(1))
        loaded = await stored_calibrator(session, library, member, ws)
    q = library[picks[0].question]
    assert math.isclose(predicted_success(loaded, str(member), q.id, q.topic),
                        predicted_success(calibrator, str(member), q.id, q.topic), abs_tol=1e-9)
    readiness_input = from_belief(str(member), q.topic, loaded.ability(str(member), q.topic))
    assert readiness_input.answers == calibrator.ability(str(member), q.topic).n >= 1


async def test_the_refit_overwrites_the_online_estimates(drill: Drill, library: Library, clock: FakeClock) -> None:
    publisher = RecordingPublisher()
    posts = [await drill.ask(HERE, publisher, kind="daily") for _ in range(3)]
    for i, who in enumerate(MEMBERS):
        for k, post in enumerate(posts):
            await pick(drill, post.post_id, (i + k) % 4 if i % 3 else 0, who)
    clock.advance(hours=13)
    assert await drill.reveal_due(publisher) == len(posts)
    summary = await refit(drill.db, library, clock.now())
    assert summary.scopes == 1 and summary.questions == len(posts) and summary.answers == len(MEMBERS) * 3
    async with drill.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(QuestionDifficultyStripe)) == 0
        base = {q: (m, v, n) for q, m, v, n in await session.execute(
            select(QuestionDifficulty.question_id, QuestionDifficulty.mean, QuestionDifficulty.var,
                   QuestionDifficulty.n))}
        assert len(base) == len(posts) and all(n == len(MEMBERS) for _, _, n in base.values())
        stored = await read_difficulties(session, {q: library[q].difficulty for q in base}, workspace_id=1)
        assert {q: (b.mean, b.var) for q, b in stored.items()} == {q: (m, v) for q, (m, v, _) in base.items()}
        abilities = (await session.execute(select(MemberAbility.n))).scalars().all()
    assert len(abilities) >= len(MEMBERS) and all(n >= 1 for n in abilities)
    # a new answer builds on the refit once revealed: one more answer of evidence on its base
    post = await drill.ask(HERE, publisher, kind="daily")
    assert (await pick(drill, post.post_id, 0, MEMBERS[0])).recorded
    await drill.reveal_post(post.post_id, HERE, publisher)
    async with drill.db.read() as session:
        qid = await session.scalar(select(Answer.question_id).where(Answer.post_id == post.post_id))
        assert qid is not None
        after = (await read_difficulties(session, {qid: library[qid].difficulty}, workspace_id=1))[qid]
    assert after.n == base.get(qid, (0.0, 1.0, 0))[2] + 1


def test_the_refit_command_on_an_empty_database(tmp_path) -> None:
    """``torchdrill learning refit``: what it did, in one line; nothing answered, nothing fit."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from bot.storage.db import migrate

    url = f"sqlite+aiosqlite:///{tmp_path / 'refit.db'}"
    migrate(url)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_", "DATABASE_", "LOG_"))}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "learning", "refit"], cwd=Path(__file__).parents[1],
                          env={**env, "DATABASE_URL": url, "LOG_JSON": "0", "RUNNER_BACKEND": "embedded"},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        "refit 0 questions in 0 bank scopes and 0 member abilities from 0 answers")


def test_bank_scopes() -> None:
    """Built-in questions share one scope across communities; a community's own stay in it."""
    from bot.core.learning.estimates import BUILT_IN_SCOPE, scope_of

    assert scope_of("tensors-001", 7) == BUILT_IN_SCOPE == 0
    assert scope_of("c12.q-3", 7) == 7


async def test_a_private_answer_moves_the_estimates_at_once_and_a_double_click_does_not(drill: Drill) -> None:
    """A quiz answer is revealed to the member right away, so it counts at once, once."""
    from bot.core.domain.actions import decode

    me = Who("test", "w", "solo", "Solo")
    msg = await drill.practice.quiz(me, topic="tensors", count=2, difficulty=None)
    pick_id = next(b.action_id for b in msg.buttons if decode(b.action_id).verb is Verb.PICK)
    first = await drill.handle_action(me, pick_id)
    again = await drill.handle_action(me, pick_id)
    assert first.recorded and not again.recorded
    async with drill.db.read() as session:
        member_id = await session.scalar(select(Answer.member_id))
        assert member_id is not None
        abilities = await read_abilities(session, member_id)
        stripes = await session.scalar(select(func.sum(QuestionDifficultyStripe.n)))
    assert {t: b.n for t, b in abilities.items()} == {"tensors": 1} and stripes == 1


async def _replayed_post(drill: Drill, post_id: int, abilities: dict[int, tuple[float, float]],
                         difficulty: tuple[float, float]) -> tuple[dict[int, tuple[float, float]],
                                                                   dict[int, tuple[float, float, bool]]]:
    """One post's answers stepped in answer order from ``abilities`` and ``difficulty``: the
    members' new abilities and the difficulty (and correctness) each answer met."""
    async with drill.db.read() as session:
        answers = (await session.execute(select(Answer.member_id, Answer.correct)
                                         .where(Answer.post_id == post_id).order_by(Answer.id))).all()
    new, met = {}, {}
    d_mean, d_var = difficulty
    for member_id, correct in answers:
        a_mean, a_var = abilities.get(member_id, (0.0, 1.0))
        met[member_id] = (d_mean, d_var, bool(correct))
        a_mean, a_var, d_mean, d_var, _info = step(a_mean, a_var, d_mean, d_var, bool(correct))
        new[member_id] = (a_mean, a_var)
    return new, met


async def test_a_reveal_whose_read_went_stale_loses_no_update(drill: Drill, library: Library,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL's reveal reads the abilities without a row lock and writes only rows still
    as read: when another reveal of the same members in the topic commits between its read and
    its write (first answers in the topic: both insert the rows; later ones: both update them),
    the members it left out are stepped again from the committed row, so each answer moves each
    ability exactly once and none is lost."""
    if drill.db.is_sqlite:
        pytest.skip("SQLite's reveals hold the write lock: no read goes stale")
    publisher = RecordingPublisher()
    warm = await drill.ask(HERE, publisher, kind="daily")
    for who in MEMBERS:
        await pick(drill, warm.post_id, 0, who)
    question = next(q for q in library.questions if q.kind is Kind.MCQ)
    stale_reads = []
    read = hot.rows

    async def interleaved(session, statement, values):
        found = await read(session, statement, values)
        if statement is hot.REVEAL_READ_FREE_PG and values["post_id"] == interleave.get("stale"):
            interleave["stale"] = None
            async with drill.db.write() as other:  # the other reveal commits in between
                await apply_revealed(other, interleave["other"], question, drill.clock.now())
        if statement is hot.STALE_READ_PG:
            stale_reads.append(len(found))
        return found

    interleave: dict[str, int | None] = {}
    monkeypatch.setattr(hot, "rows", interleaved)
    for phase in (1, 2):
        stale, other = [await drill.ask(HERE, publisher, kind="daily") for _ in range(2)]
        for i, who in enumerate(MEMBERS):
            await pick(drill, stale.post_id, i % 4, who)
            await pick(drill, other.post_id, (i * 3 + 1) % 4, who)
        async with drill.db.read() as session:
            member_ids = sorted(set((await session.scalars(
                select(Answer.member_id).where(Answer.post_id == stale.post_id))).all()))
            before = {m: (b.mean, b.var) for m in member_ids
                      for t, b in (await read_abilities(session, m)).items() if t == question.topic}
            d0 = (await read_difficulties(session, {question.id: question.difficulty}, workspace_id=1)).get(question.id)
        start_d = (d0.mean, d0.var) if d0 else (online.LABEL_LOGITS[question.difficulty], online.PRIOR_VAR)
        interleave.update(stale=stale.post_id, other=other.post_id)
        async with drill.db.write() as session:
            assert await apply_revealed(session, stale.post_id, question, drill.clock.now()) == len(MEMBERS)
        after_other, _ = await _replayed_post(drill, other.post_id, before, start_d)
        _, met = await _replayed_post(drill, stale.post_id, before, start_d)  # the stale read's view
        assert stale_reads[-1] == len(MEMBERS)  # every member was written again, from the row as committed
        async with drill.db.read() as session:
            for m in member_ids:
                belief = (await read_abilities(session, m))[question.topic]
                expected = step(*after_other[m], *met[m])
                assert belief.n == 2 * phase  # both reveals, each once
                assert math.isclose(belief.mean, expected[0], abs_tol=1e-9)
                assert math.isclose(belief.var, expected[1], abs_tol=1e-9)
            stripe_n = await session.scalar(select(func.sum(QuestionDifficultyStripe.n)))
        assert stripe_n == 2 * phase * len(MEMBERS)
