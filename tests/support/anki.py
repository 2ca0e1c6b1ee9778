"""Reading an exported Anki package back, and review cards made due."""

from __future__ import annotations

import html
import io
import json
import re
import sqlite3
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from bot.app import App
from bot.core.progress import anki, srs
from bot.storage.hot_statements import upsert_srs_card
from bot.storage.models import Member

# What Anki's importer reads of a schema-11 collection: every table and column it selects.
ANKI_COLUMNS = {
    "col": ["id", "crt", "mod", "scm", "ver", "dty", "usn", "ls", "conf", "models", "decks", "dconf", "tags"],
    "notes": ["id", "guid", "mid", "mod", "usn", "tags", "flds", "sfld", "csum", "flags", "data"],
    "cards": ["id", "nid", "did", "ord", "mod", "usn", "type", "queue", "due", "ivl", "factor", "reps",
              "lapses", "left", "odue", "odid", "flags", "data"],
    "revlog": ["id", "cid", "usn", "ease", "ivl", "lastIvl", "factor", "time", "type"],
    "graves": ["usn", "oid", "type"],
}


def open_package(data: bytes, tmp_path: Path) -> sqlite3.Connection:
    """Open an .apkg as Anki does and check its structure; returns the collection."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == ["collection.anki2", "media"]
        assert json.loads(archive.read("media")) == {}
        path = tmp_path / "collection.anki2"
        path.write_bytes(archive.read("collection.anki2"))
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    for table, columns in ANKI_COLUMNS.items():
        assert [r[1] for r in con.execute(f"PRAGMA table_info({table})")] == columns
    [(ver, models, decks, dconf, conf)] = con.execute("SELECT ver, models, decks, dconf, conf FROM col")
    assert ver == anki.SCHEMA_VERSION
    models, decks, dconf, conf = map(json.loads, (models, decks, dconf, conf))
    [model] = models.values()
    assert [f["name"] for f in model["flds"]] == ["Front", "Back"] and model["type"] == 0
    assert model["tmpls"][0]["qfmt"] == "{{Front}}"
    assert int(model["id"]) == anki.MODEL_ID and model["css"] == anki.CSS
    assert "1" in decks and "1" in dconf and str(conf["curDeck"]) in decks
    ours = {str(d["id"]) for d in decks.values() if d["name"] == "torchdrill"}
    for nid, mid, flds, sfld, guid in con.execute("SELECT id, mid, flds, sfld, guid FROM notes"):
        assert mid == int(model["id"]) and len(flds.split("\x1f")) == 2 and guid
        assert sfld == html.unescape(re.sub(r"<[^>]+>", "", flds.split("\x1f")[0]))  # sorts by the text
        [(did, queue, ntype)] = con.execute("SELECT did, queue, type FROM cards WHERE nid = ?", (nid,))
        assert {str(did)} == ours and (queue, ntype) == (0, 0)  # new cards of our deck
    return con


async def seed_due(app: App, user_id: str, count: int, now: datetime) -> None:
    async with app.db.write() as session:
        member_id = await session.scalar(select(Member.id).where(Member.user_id == user_id))
        assert member_id is not None
        for q in [q for q in app.library.questions if q.kind.value == "mcq"][:count]:
            await upsert_srs_card(session, srs.next_card(member_id, q.id, None, 0, srs.rating_for(True),
                                                         now - timedelta(days=30)))
