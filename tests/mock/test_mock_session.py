"""/mock's pure rules: the key-point checklist, self-graded marks, times, the countdown, how
MCQ slots are shared by a track's weights, and tracks that name real topics and challenges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fsrs import Rating

from bot.core.content.bank import Kind, Question
from bot.core.content.challenges import load_challenges
from bot.core.domain.topics import TOPICS
from bot.core.mock import session as mock
from bot.core.mock.desk import allocate
from bot.core.mock.tracks import DEFAULT_TRACK, TRACKS, Track, per_track, track


def card(answer: str, explanation: str = "Short. Second sentence here.") -> Question:
    return Question(id="dd-q", kind=Kind.DEEP_DIVE, topic="autograd", difficulty=2, prompt="Why?",
                    answer=answer, explanation=explanation)


def test_a_which_line_mcq_carries_the_shared_rule() -> None:
    q = Question.model_validate({
        "id": "which-line", "kind": "mcq", "topic": "tensors", "difficulty": 2,
        "prompt": "Which line raises?", "choices": ["Line 2: the `view` call", "It runs without an error"],
        "answer": "Line 2: the `view` call", "explanation": "Strides (1, 2) cannot flatten.",
        "check": "raises_at", "code": [{"code": "import torch\ntorch.zeros(2, 2).t().view(-1)"}]})
    now = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    screen = mock.Screen(mock_id=1, index=0, total=8, section_number=1, section_size=8,
                         track_name="core", now=now, deadline=now + timedelta(minutes=30))
    msg = mock.mcq_message(screen, q, [0, 1])
    assert msg.blocks[0].text == (
        "Which line raises? (The answer is the deepest line of the snippet in the traceback.)")


def test_key_points_are_the_bullets_else_the_explanations_sentences() -> None:
    assert mock.key_points(card("Intro.\n\n- One.\n- Two.\n\nMore.\n\n* Three.\n")) == ["One.", "Two.", "Three."]
    assert mock.key_points(card("No bullets at all.", "It records ops. Backward frees it! Done")) == [
        "It records ops.", "Backward frees it!", "Done"]
    many = "\n".join(f"- point {i}" for i in range(9))
    assert len(mock.key_points(card(many))) == mock.KEY_POINTS_MAX


def test_self_graded_marks_drive_the_card() -> None:
    assert [mock.explain_rating(c, 4) for c in (0, 1, 2, 3, 4)] == [
        Rating.Again, Rating.Again, Rating.Hard, Rating.Hard, Rating.Good]
    assert mock.explain_rating(0, 0) is Rating.Again


def test_times_and_the_countdown_read_as_members_read_them() -> None:
    assert [mock.duration(s) for s in (0, 44.6, 60, 125, 3600)] == ["0 s", "45 s", "1 min", "2 min 5 s", "60 min"]
    now = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    assert mock.countdown(now, now + timedelta(minutes=29, seconds=5)) == "⏱ 29:05 left · ends 10:29 UTC"
    assert mock.countdown(now, now - timedelta(seconds=3)) == "⏱ 0:00 left · ends 09:59 UTC"
    assert mock.median_seconds([1000, 3000, 20000]) == 3.0 and mock.median_seconds([]) is None


def test_items_per_length_and_slots_per_weight() -> None:
    assert mock.item_count(30) == (8, 2, 1) and mock.item_count(15) == (8, 1, 1)
    assert allocate({"a": 2, "b": 1, "c": 1, "d": 0}, 8) == {"a": 4, "b": 2, "c": 2}
    assert allocate({"a": 3, "b": 2, "c": 2}, 8) == {"a": 4, "b": 2, "c": 2}
    for t in TRACKS:
        assert sum(allocate(t.weights, 8).values()) == 8


def test_tracks_name_real_topics_and_challenges() -> None:
    bank = load_challenges()
    assert len(TRACKS) >= 3 and track(None).slug == DEFAULT_TRACK
    for t in TRACKS:
        assert set(t.weights) <= set(TOPICS), t.slug
        assert all(bank.get(c) is not None for c in t.challenges), t.slug


def test_weakest_topics_are_those_with_the_most_marks_lost() -> None:
    items = [mock.ItemResult("mcq", "tensors", "p", 1.0, 5), mock.ItemResult("mcq", "autograd", "p", 0.0, 5),
             mock.ItemResult("mcq", "data", "p", None, None), mock.ItemResult("explain", "tensors", "p", 0.5, 9)]
    assert mock.weakest_topics(items) == ["autograd", "data"]
    assert [i.topic for i in mock.misses(items)] == ["autograd", "data", "tensors"]


def test_readiness_per_track_weighs_the_topics_the_banks_have() -> None:
    role = Track("x", "X", {"tensors": 2, "autograd": 1, "distributed": 3, "data": 0}, ())
    assert per_track(role, {"tensors": 0.5, "autograd": 0.8, "data": 0.1}) == (2 * 0.5 + 0.8) / 3
    assert per_track(role, {}) == 0.0
