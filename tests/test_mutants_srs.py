"""FSRS due dates members are shown by /review (issue 21, srs.py survivors of pure code)."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime

from fsrs import Rating

from bot.core.progress.srs import next_card, rating_for

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
