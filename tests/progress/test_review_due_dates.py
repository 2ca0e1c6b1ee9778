"""FSRS due dates members are shown by /review (issue 21, srs.py survivors of pure code)."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta

from fsrs import Rating

from bot.core.domain.clock import as_utc
from bot.core.progress.srs import next_card, rating_for, review
from bot.storage.db import Database
from bot.storage.models import Member, SrsCard, Workspace
from bot.storage.srs_cards import StoredCards

CARDS = StoredCards()

WHEN = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def test_correct_rates_good_and_wrong_rates_again() -> None:
    assert rating_for(True) is Rating.Good
    assert rating_for(False) is Rating.Again


def test_a_new_card_has_a_stable_id_and_counts_one_review() -> None:
    row = next_card(7, "q-1", None, None, Rating.Good, WHEN)
    assert json.loads(str(row["state"]))["card_id"] == zlib.crc32(b"7:q-1")
    assert (row["member_id"], row["question_id"], row["reps"]) == (7, "q-1", 1)
    assert row["due"] > WHEN


def test_good_is_due_later_than_again() -> None:
    good = next_card(1, "q", None, 0, Rating.Good, WHEN)["due"]
    again = next_card(1, "q", None, 0, Rating.Again, WHEN)["due"]
    assert again < good


def test_a_stored_card_is_continued_not_restarted() -> None:
    first = next_card(1, "q", None, 0, Rating.Good, WHEN)
    later = first["due"]
    second = next_card(1, "q", str(first["state"]), 1, Rating.Good, later)
    fresh = next_card(1, "q", None, 1, Rating.Good, later)
    assert second["reps"] == 2
    assert second["due"] - later > fresh["due"] - later  # a second Good grows the interval


async def _two_members(db: Database) -> None:
    async with db.write() as s:
        s.add(Workspace(id=1, platform="console", external_id="w", name="w"))
        await s.flush()
        s.add_all([Member(id=1, workspace_id=1, user_id="a", display_name="A", created_at=WHEN),
                   Member(id=2, workspace_id=1, user_id="b", display_name="B", created_at=WHEN)])


async def test_review_continues_the_stored_card_and_due_lists_are_per_member(db: Database) -> None:
    """What /review serves: only this member's cards, due ones first by due time, at most limit."""
    await _two_members(db)
    async with db.write() as s:
        first_due = await review(CARDS, s, 1, "q-a", Rating.Good, WHEN)
        await review(CARDS, s, 1, "q-b", Rating.Again, WHEN)
        await review(CARDS, s, 2, "q-other", Rating.Again, WHEN)
    async with db.write() as s:
        second_due = await review(CARDS, s, 1, "q-a", Rating.Good, first_due)
    async with db.read() as s:
        card = await s.get(SrsCard, (1, "q-a"))
        assert card is not None and card.reps == 2
        assert second_due - first_due > first_due - WHEN  # the stored card went on, not restarted
        assert await CARDS.known_ids(s, 1) == {"q-a", "q-b"}
        assert await CARDS.known_ids(s, 2) == {"q-other"}
        again_due = as_utc((await s.get(SrsCard, (1, "q-b"))).due)
        # due exactly now counts as due; later ones are not; order is by due time; limit holds
        assert await CARDS.due_ids(s, 1, again_due, 10) == ["q-b"]
        assert await CARDS.due_ids(s, 1, again_due - timedelta(seconds=1), 10) == []
        assert await CARDS.due_ids(s, 1, second_due, 10) == ["q-b", "q-a"]
        assert await CARDS.due_ids(s, 1, second_due, 1) == ["q-b"]


async def test_due_cards_come_by_due_time_not_as_stored(db: Database) -> None:
    """A card stored first but due later comes second. (Both databases walk the (member, due)
    index here, so this pins the order; a plan without that index needs the ORDER BY.)"""
    await _two_members(db)
    async with db.write() as s:
        late = await review(CARDS, s, 1, "q-late", Rating.Good, WHEN)
        await review(CARDS, s, 1, "q-early", Rating.Again, WHEN)
    async with db.read() as s:
        assert await CARDS.due_ids(s, 1, late, 10) == ["q-early", "q-late"]
        assert await CARDS.due_ids(s, 1, late, 1) == ["q-early"]
