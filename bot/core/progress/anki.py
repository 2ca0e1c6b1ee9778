"""Anki packages (.apkg) of a member's misses and due cards, so practice can go on in Anki.

The package is written by genanki (a maintained Anki writer): one note type, one deck, a note
and a new card per question. The note type and deck ids are fixed and each note's guid comes
from its question id, so importing a later export updates the same notes in Anki instead of
duplicating them. Every bank text is HTML-escaped before it reaches a field: a community
question is inert in Anki too.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import re
import sqlite3
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import genanki

from bot.core.content.bank import Kind, Question
from bot.core.render.questions import LETTERS

SCHEMA_VERSION = 11  # the collection genanki writes: every Anki since 2.1 and AnkiDroid import it
MODEL_ID = 1_607_392_319_001  # the torchdrill note type, fixed so re-imports update notes
MAX_CARDS = 500  # a deck larger than this is cut (most due first)

CSS = """.card { font-family: sans-serif; font-size: 18px; text-align: left; }
pre { background: #f4f4f4; padding: 8px; text-align: left; }
.why-not { color: #555; }"""

MODEL = genanki.Model(
    MODEL_ID, "torchdrill question",
    fields=[{"name": "Front"}, {"name": "Back"}],
    templates=[{"name": "Card 1", "qfmt": "{{Front}}", "afmt": "{{FrontSide}}<hr id=answer>{{Back}}"}],
    css=CSS,
)


@dataclass(frozen=True)
class Note:
    """One Anki note: the front and back as HTML, tags, and the question it came from."""

    key: str  # the question id: stable ids and guid
    front: str
    back: str
    tags: tuple[str, ...]


def _markup(text: str) -> str:
    """The bot's small markup (``**bold**``, `` `code` ``) as HTML, every character escaped."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return out.replace("\n", "<br>")


def _code(code: str) -> str:
    return f"<pre><code>{html.escape(code.rstrip())}</code></pre>"


def note_of(question: Question, why: str) -> Note:
    """A question as Anki shows it: prompt, code and lettered choices on the front; the answer,
    the explanation, why each wrong choice is wrong and further code on the back."""
    front = [_markup(question.shown_prompt)]
    shown = question.shown_snippet
    if shown is not None:
        front.append(_code(shown.code))
    if question.kind is Kind.MCQ:
        front.append("<br>".join(f"<b>{LETTERS[i]}.</b> {_markup(c)}" for i, c in enumerate(question.choices)))
    back = []
    if question.kind is Kind.MCQ and 0 <= question.answer_index < len(question.choices):
        back.append(f"<b>Answer: {LETTERS[question.answer_index]}.</b> {_markup(question.answer)}")
    else:
        back.append(f"<b>Answer:</b> {_markup(question.answer)}")
    back.append(f"<b>Why:</b> {_markup(question.explanation)}")
    for snippet in [s for s in question.code if s is not shown][:2]:
        back.append(_code(snippet.code))
    why_nots = [f"<b>{LETTERS[i]}.</b> {_markup(question.why_not[c])}"
                for i, c in enumerate(question.choices) if c in question.why_not]
    if why_nots:
        back.append('<div class="why-not"><b>Why not the others:</b><br>' + "<br>".join(why_nots) + "</div>")
    tags = ("torchdrill", f"topic::{question.topic}", f"difficulty::{question.difficulty}", why)
    return Note(question.id, "<br><br>".join(front), "<br><br>".join(back), tags)


def _id_of(key: str, salt: str) -> int:
    """A positive 52-bit id from the key: within JavaScript's exact integers, as Anki wants."""
    return int.from_bytes(hashlib.sha1(f"{salt}:{key}".encode()).digest()[:8], "big") >> 12


def guid_of(key: str) -> str:
    """The note's guid, from the question id alone: Anki updates a note whose guid it knows."""
    return genanki.guid_for("torchdrill", key)


def _strip(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _deck(notes: Sequence[Note], deck_name: str) -> genanki.Deck:
    deck = genanki.Deck(_id_of(deck_name, "deck"), deck_name, description="From torchdrill")
    for position, note in enumerate(notes[:MAX_CARDS], start=1):
        deck.add_note(genanki.Note(
            model=MODEL, fields=[note.front, note.back], sort_field=_strip(note.front),
            tags=list(note.tags), guid=guid_of(note.key), due=position))
    return deck


def collection(notes: Sequence[Note], deck_name: str, now: datetime) -> bytes:
    """The ``collection.anki2`` SQLite file holding ``notes`` as new cards of one deck.

    genanki's own ``write_to_file`` leaves its temporary database behind; its ``write_to_db``
    into an in-memory database, serialised, writes the same collection and leaves nothing."""
    timestamp = now.timestamp()
    con = sqlite3.connect(":memory:")
    try:
        genanki.Package(_deck(notes, deck_name)).write_to_db(
            con.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
        con.commit()
        return con.serialize()
    finally:
        con.close()


def package(notes: Sequence[Note], deck_name: str, now: datetime) -> bytes:
    """The .apkg: a zip of the collection and an empty media map, as genanki lays it out."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("collection.anki2", collection(notes, deck_name, now))
        archive.writestr("media", "{}")
    return buffer.getvalue()
