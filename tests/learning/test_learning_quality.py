"""Quality flags from picks, on hand-built answers whose verdict is obvious."""

from __future__ import annotations

from bot.core.learning.irt import fit
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.learning.quality import Flag, assess


def _picks(question: str, rows: list[tuple[int, int]], topic: str = "tensors", key: int = 0) -> list[Pick]:
    """``rows``: (member number, choice); members 0..n, higher numbers stronger elsewhere."""
    return [Pick(f"m{m}", question, topic, c, c == key, 5000 + 10 * m) for m, c in rows]


def _anchor(members: int) -> list[Pick]:
    """Twenty normal questions that order the members: member m gets m*20//members right."""
    picks = []
    for q in range(20):
        for m in range(members):
            right = q < m * 20 // members
            picks.append(Pick(f"m{m}", f"anchor{q}", "tensors", 0 if right else 1 + q % 3, right))
    return picks


def test_a_distractor_the_strong_prefer_is_a_likely_wrong_key_and_silences_the_rest():
    members = 60
    # the strong half pick C (index 2); the weak half split between A (the key) and B
    rows = [(m, 2 if m >= members // 2 else m % 2) for m in range(members)]
    picks = _anchor(members) + _picks("bad", rows)
    items = [ItemInfo("bad", "tensors", 2, 4, 0, "core")]
    [row] = assess(items, picks, fit(picks))
    assert row.flags == (Flag.WRONG_KEY,)  # D is never picked, but dead distractor is silenced
    assert row.notes == ("the strongest third pick C (100%) over the key A (0%)",)
    assert row.answers == 60 and row.share_right == 0.25 and row.pick_rates == (0.25, 0.25, 0.5, 0.0)
    assert row.median_ms == 5295 and row.discrimination is not None and row.discrimination < 0


def test_a_distractor_nobody_picks_is_dead_once_enough_answers_are_wrong():
    members = 90
    # the strong answer right; the weak pick B or C, never D
    rows = [(m, 0 if m >= 40 else 1 + m % 2) for m in range(members)]
    picks = _anchor(members) + _picks("dull", rows)
    [row] = assess([ItemInfo("dull", "tensors", 2, 4, 0)], picks, fit(picks))
    assert row.flags == (Flag.DEAD_DISTRACTOR,)
    assert row.notes == ("D drew 0 of 40 wrong answers",)
    fewer = _anchor(members) + _picks("dull", rows[20:])  # 20 wrong answers: too few to judge
    [row] = assess([ItemInfo("dull", "tensors", 2, 4, 0)], fewer, fit(fewer))
    assert Flag.DEAD_DISTRACTOR not in row.flags


def test_right_or_wrong_regardless_of_strength_is_no_signal_and_few_answers_flag_nothing():
    members = 60
    rows = [(m, m % 2) for m in range(members)]  # alternate right and wrong, strong or weak
    picks = _anchor(members) + _picks("noise", rows)
    [row] = assess([ItemInfo("noise", "tensors", 2, 2, 0)], picks, fit(picks))
    assert row.flags == (Flag.NO_SIGNAL,)
    few = _anchor(members) + _picks("noise", rows[:20])
    [row] = assess([ItemInfo("noise", "tensors", 2, 2, 0)], few, fit(few))
    assert row.flags == () and row.answers == 20


def test_an_unanswered_question_still_gets_a_row():
    [row] = assess([ItemInfo("new", "tensors", 1, 4, 3)], [], fit([]))
    assert (row.answers, row.share_right, row.pick_rates, row.median_ms, row.calibrated, row.flags) == (
        0, 0.0, (0.0, 0.0, 0.0, 0.0), None, None, ())
