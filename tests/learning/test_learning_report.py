"""`torchdrill content quality --export FILE` on a real database whose answers were recorded
through the core: the markdown report of the built-in banks, open questions left out."""

from __future__ import annotations

import random

from bot.app import build_drill
from bot.core.content.bank import load_library
from bot.core.learning.quality_desk import QualityDesk
from bot.storage.estimates import read_picks
from bot.storage.learning_picks import StoredQualityData
from tests.support.learning_reports import MEMBERS, WHERE, _export, pick_choice, post_question, who


async def test_export_reports_revealed_picks_per_question_and_flags_a_dead_distractor(db, clock, publisher, tmp_path):
    drill = build_drill(db, load_library(), clock, rng=random.Random(5))
    # post 1: the five strongest members answer right, everyone else picks the same distractor
    first, question, order = await post_question(drill, publisher)
    key = question.answer_index
    lure = (key + 1) % len(question.choices)
    for m in range(MEMBERS):
        await pick_choice(drill, m, first, order, key if m < 5 else lure)
    # post 2: the first half right, the rest spread over every distractor
    second, question2, order2 = await post_question(drill, publisher)
    key2 = question2.answer_index
    others = [c for c in range(len(question2.choices)) if c != key2]
    for m in range(MEMBERS):
        await pick_choice(drill, m, second, order2, key2 if m < MEMBERS // 2 else others[m % len(others)])
    await drill.reveal_post(first, WHERE, publisher)
    await drill.reveal_post(second, WHERE, publisher)
    # post 3 is still open: its picks stay private, in the report too
    third, question3, order3 = await post_question(drill, publisher)
    await pick_choice(drill, 1, third, order3, question3.answer_index)
    async with db.read() as s:
        picks = await read_picks(s, {question.id, question2.id, question3.id})
    assert len(picks) == 2 * MEMBERS and {p.question for p in picks} == {question.id, question2.id}

    report = tmp_path / "quality.md"
    result = _export(db.engine.url.render_as_string(hide_password=False), report)
    assert result.returncode == 0, result.stderr[-2000:]
    n_mcq = sum(1 for q in drill.library.questions if q.kind.value == "mcq")
    assert result.stderr.strip().endswith(f"{n_mcq} questions, 80 answers, 1 flagged")
    text = report.read_text()
    assert text.startswith(f"# Question quality\n\n{n_mcq} multiple-choice questions, 80 answers, 1 flagged.\n")
    row = next(line for line in text.splitlines() if line.startswith(f"| `{question.id}` |"))
    letters = "ABCDEFGH"
    rates = " ".join(f"{letters[k]}{'*' if k == key else ''} {share}"
                     for k, share in enumerate(["12%" if k == key else "88%" if k == lure else "0%"
                                                for k in range(len(question.choices))]))
    dead = [letters[k] for k in range(len(question.choices)) if k not in (key, lure)]
    notes = "; ".join(f"{letter} drew 0 of 35 wrong answers" for letter in dead)
    assert row.startswith(f"| `{question.id}` | {question.topic} | 40 | 12% | r +")
    assert f"| {rates} |" in row
    assert row.endswith(f"| {question.difficulty} | {row.split(' | ')[8]} | dead distractor; {notes} |")
    assert f"| `{question3.id}` | {question3.topic} | 0 | - | - | - | - | {question3.difficulty} | - |  |" in text

    # /bank quality builtin answers from the same rows, flagged question first
    reply = await QualityDesk(StoredQualityData(db), drill.library).report(who(0), "builtin", question.topic)
    n_topic = sum(1 for q in drill.library.questions if q.kind.value == "mcq" and q.topic == question.topic)
    lines = reply.plain().splitlines()
    answers = 40 + (40 if question2.topic == question.topic else 0)
    assert f"{n_topic} multiple-choice questions · {answers} answers · 1 flagged " \
           "(flags need 30 answers to a question)" in lines
    assert f"`{question.id}` · dead distractor · 12% right of 40 · {notes}" in lines
    assert [a.filename for a in reply.attachments] == [f"quality-builtin-{question.topic}.md"]


def test_export_without_a_database_says_one_line(tmp_path):
    result = _export(f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'none.db'}", tmp_path / "q.md")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "q.md").exists()
