"""/bank quality reads the stored estimates and a bounded aggregate, never a fit of the picks:
the calibrated difficulty it shows is the stored one (moved by the reveal, replaced by a refit),
the 2PL slope is the refit's, and the database's sums equal the picks' own."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import event, update

from bot.app import build_drill
from bot.core.content.bank import load_library
from bot.core.drill.service import Drill
from bot.core.learning.picks import ItemInfo
from bot.core.learning.quality import QualityRules, stats_of
from bot.core.learning.quality_desk import QualityDesk
from bot.core.learning.report import items_of
from bot.storage.estimates import read_abilities, read_difficulties, read_picks, refit
from bot.storage.learning_picks import StoredQualityData, read_question_stats
from bot.storage.models import QuestionDifficulty
from tests.support.learning_reports import MEMBERS, WHERE, pick_choice, post_question, who


def _row(markdown: str, question_id: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"| `{question_id}` |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


async def _answered(db, clock, publisher) -> tuple[Drill, ItemInfo]:
    """One revealed question: members 0-4 right, the rest split over two distractors, with
    answer times 1.0 s, 1.1 s, ... in member order."""
    drill = build_drill(db, load_library(), clock, rng=random.Random(5))
    post, question, order = await post_question(drill, publisher)
    wrong = [c for c in range(len(question.choices)) if c != question.answer_index][:2]
    for m in range(MEMBERS):
        clock.advance(seconds=0.1)
        await pick_choice(drill, m, post, order, question.answer_index if m < 5 else wrong[m % 2])
    await drill.reveal_post(post, WHERE, publisher)
    [item] = [i for i in items_of(drill.library.questions) if i.question == question.id]
    return drill, item


async def _report(drill: Drill, topic: str) -> tuple[str, list[str]]:
    reply = await QualityDesk(StoredQualityData(drill.db), drill.library).report(who(0), "builtin", topic)
    return reply.attachments[0].content.decode(), reply.plain().splitlines()


async def test_the_report_shows_the_stored_difficulty_and_slope(db, clock, publisher) -> None:
    drill, item = await _answered(db, clock, publisher)
    async with db.read() as s:
        online = (await read_difficulties(s, {item.question: item.labelled}, 0))[item.question]
    markdown, _ = await _report(drill, item.topic)
    cells = _row(markdown, item.question)
    assert cells[2] == "40" and cells[3] == "12%"
    assert cells[8].startswith(f"{online.mean:+.2f} (≈")  # moved by the reveal, not fitted here

    summary = await refit(db, drill.library, clock.now())
    assert summary.answers == MEMBERS
    async with db.read() as s:
        refitted = (await read_difficulties(s, {item.question: item.labelled}, 0))[item.question]
    assert f"{refitted.mean:+.2f}" != f"{online.mean:+.2f}"
    markdown, _ = await _report(drill, item.topic)
    assert _row(markdown, item.question)[8].startswith(f"{refitted.mean:+.2f} (≈")

    # a refit that freed the slope (2PL) and found it flat: the report reads both from the row
    async with db.write() as s:
        await s.execute(update(QuestionDifficulty).where(QuestionDifficulty.question_id == item.question)
                        .values(mean=3.25, slope=0.2, slope_se=0.05))
    markdown, lines = await _report(drill, item.topic)
    cells = _row(markdown, item.question)
    assert cells[4].endswith(", a 0.20") and cells[8] == "+3.25 (≈3)"
    assert cells[9] == "dead distractor; no signal; D drew 0 of 35 wrong answers"
    assert (f"`{item.question}` · dead distractor, no signal · 12% right of 40 · "
            "D drew 0 of 35 wrong answers") in lines


async def test_the_database_sums_equal_the_picks_own(db, clock, publisher) -> None:
    drill, item = await _answered(db, clock, publisher)
    async with db.read() as s:
        [stats] = (await read_question_stats(s, [item], groups=QualityRules().groups)).values()
        picks = await read_picks(s, {item.question})
        abilities = {m: await read_abilities(s, int(m)) for m in {p.member for p in picks}}
    theta = [abilities[p.member][p.topic].mean if p.topic in abilities[p.member] else 0.0 for p in picks]
    assert len(set(theta)) == MEMBERS  # one ability each: the strongest third is unambiguous
    expected = stats_of(item, picks, theta, QualityRules().groups)
    assert (stats.answers, stats.right, stats.counts, stats.strong, stats.strong_size, stats.median_ms) == (
        expected.answers, expected.right, expected.counts, expected.strong, expected.strong_size,
        expected.median_ms)
    for got, want in [(stats.sum_theta, expected.sum_theta), (stats.sum_theta2, expected.sum_theta2),
                      (stats.sum_right_theta, expected.sum_right_theta),
                      *zip(stats.theta_by_choice, expected.theta_by_choice, strict=True)]:
        assert got == pytest.approx(want, abs=1e-9)


async def test_the_report_aggregates_in_the_database(db, clock, publisher) -> None:
    """Bounded work per request: a fixed handful of statements, and every one that reads
    answers groups them (rows per question and choice, not per pick)."""
    drill, item = await _answered(db, clock, publisher)
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", seen)
    try:
        await _report(drill, item.topic)
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", seen)
    reads = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert 1 <= len(reads) <= 6
    on_answers = [s for s in reads if "FROM answers" in s]
    assert len(on_answers) == 2 and all("GROUP BY" in s for s in on_answers)
