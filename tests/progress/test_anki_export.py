"""`/review export`: a member's misses and due cards as an Anki package, sent privately, on
Discord and Slack; the package (written by genanki) is checked the way Anki opens it (zip,
collection schema, note type, deck, notes and cards that point at each other, guids that stay
the same from one export to the next so a re-import updates the notes)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.app import App
from bot.core.content.bank import Question
from bot.core.domain.clock import FakeClock
from bot.core.progress import anki
from bot.storage.models import Post
from tests.support.anki import open_package
from tests.support.discord_fixtures import StartAdapter, correct_position
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of

pytestmark = pytest.mark.platform("discord")

ALICE = User(800_000_000_000_000_001, "alice")


async def _daily(fake: FakeDiscord, app: App, *, right: bool) -> str:
    """A daily question Alice answers (right or wrong); returns its question id."""
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    assert "Posted today's question" in text_of(await fake.original_of(token))
    [question] = [m for m in fake.in_channel(fake.channel_id)  # open ones: a revealed post keeps only 🚩
                  if any(b["custom_id"].startswith("td:a:") for b in buttons_of(m))]
    buttons = buttons_of(question)
    post_id = int(buttons[0]["custom_id"].split(":")[2])
    good = await correct_position(app, post_id)
    pick = good if right else (good + 1) % 4
    await fake.original_of(await fake.click(int(question["id"]), buttons[pick]["custom_id"], ALICE))
    async with app.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        return post.question_id


async def test_export_sends_misses_privately_as_an_anki_package(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock, tmp_path: Path
) -> None:
    await start_adapter()
    empty = await fake.original_of(await fake.slash("review", ALICE, action="export"))
    assert text_of(empty).strip() == (
        "Nothing to export yet: your Anki deck holds the questions you missed and the cards due "
        "for review. Try /quiz or /review first.")
    missed = await _daily(fake, app, right=False)
    discord_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    still_open = await _daily(fake, app, right=False)  # not revealed: never in the deck

    token = await fake.slash("review", ALICE, action="export")
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "1 card: 1 you missed, 0 due for review." in text_of(reply)
    assert "In Anki: File → Import and pick the file" in text_of(reply)
    assert [a["filename"] for a in reply["attachments"]] == ["torchdrill-2026-03-05.apkg"]
    [(name, content)] = [f for r in fake.requests if r.files and token in r.path for f in r.files]
    con = open_package(content, tmp_path)
    [(flds, tags)] = con.execute("SELECT flds, tags FROM notes")
    question = app.library[missed]
    assert still_open != missed
    front, back = flds.split("\x1f")
    assert front.startswith(anki._markup(question.prompt))
    assert f"<b>Why:</b> {anki._markup(question.explanation)}" in back
    assert tags.split() == ["torchdrill", f"topic::{question.topic}",
                            f"difficulty::{question.difficulty}", "missed"]


def test_a_which_line_card_carries_the_shared_rule() -> None:
    q = Question.model_validate({
        "id": "which-line", "kind": "mcq", "topic": "tensors", "difficulty": 2,
        "prompt": "Which line raises?", "choices": ["Line 2: the `view` call", "It runs without an error"],
        "answer": "Line 2: the `view` call", "explanation": "Strides (1, 2) cannot flatten.",
        "check": "raises_at", "code": [{"code": "import torch\ntorch.zeros(2, 2).t().view(-1)"}]})
    assert anki.note_of(q, "due").front.startswith(
        "Which line raises? (The answer is the deepest line of the snippet in the traceback.)")


def test_bank_text_is_inert_html_and_ids_are_stable(tmp_path: Path) -> None:
    q = Question.model_validate({
        "id": "evil-q", "kind": "mcq", "topic": "autograd", "difficulty": 1,
        "prompt": "Is <script>alert(1)</script> run? `x.grad`", "answer": "No <b>never</b>",
        "choices": ["No <b>never</b>", {"text": "Yes", "why_not": "it is <i>text</i>"}, "Maybe", "Both"],
        "explanation": "Escaped & inert.",
    })
    note = anki.note_of(q, "due")
    assert "<script>" not in note.front and "&lt;script&gt;alert(1)&lt;/script&gt;" in note.front
    assert "<code>x.grad</code>" in note.front
    assert "No &lt;b&gt;never&lt;/b&gt;" in note.back and "it is &lt;i&gt;text&lt;/i&gt;" in note.back
    now = datetime(2026, 3, 4, tzinfo=UTC)
    first = anki.collection([note], "torchdrill", now)
    again = anki.collection([note], "torchdrill", now + timedelta(days=3))
    ids = []
    for i, data in enumerate((first, again)):
        path = tmp_path / f"c{i}.anki2"
        path.write_bytes(data)
        con = sqlite3.connect(path)
        ids.append((con.execute("SELECT n.guid, n.mid, c.did FROM notes n JOIN cards c "
                                "ON c.nid = n.id").fetchall(),
                    con.execute("SELECT n.id, c.id FROM notes n JOIN cards c ON c.nid = n.id").fetchall()))
    assert ids[0][0] == ids[1][0]  # same guid, note type and deck: Anki updates the notes
    assert ids[0][0] == [(anki.guid_of("evil-q"), anki.MODEL_ID, ids[0][0][0][2])]
    assert all(0 < x < 2**53 for x in ids[0][1][0] + ids[1][1][0])  # JavaScript-exact ids
    other = anki.note_of(q.model_copy(update={"id": "other-q"}), "due")
    assert anki.guid_of("other-q") != anki.guid_of("evil-q") and other.key == "other-q"


