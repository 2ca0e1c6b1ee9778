"""Exact replies of the answer path (bot/core/answers/recording.py, issue 21 survivors).

Each test pins what a member reads after a click: the notice for a bad or stale button, the
letter and choice quoted back, the answer count of the public post, the streak line, the
reveal time in the channel's zone, and the spaced-repetition card the answer leaves behind.
"""

from __future__ import annotations

from datetime import timedelta

from fsrs import Rating
from sqlalchemy import func, select

from bot.core.answers import recording as answers
from bot.core.answers.recording import _in_words
from bot.core.domain.actions import Verb
from bot.core.progress import srs
from bot.core.reveal.posts import order_of
from bot.storage.identity import channel_row
from bot.storage.models import Answer, Member, Post, Quiz, SrsCard
from tests.support.clicks import WHERE, channel_post, click, one_question_quiz, post_of, who

LETTERS = "ABCD"
MISMATCH = "That button does not match this question."


# ---- notices for bad, stale and foreign buttons -------------------------------------------


async def test_stale_and_mismatched_buttons_get_exact_notices(drill, publisher, library) -> None:
    gone = await drill.handle_action(who(1), click(Verb.PICK, 999, 0))
    assert gone.reply.plain() == "This question no longer exists." and gone.post_id is None
    posted, question, order, right, _ = await channel_post(drill, publisher)
    past_end = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, len(order)))
    assert (past_end.reply.plain(), past_end.post_id, past_end.recorded) == (MISMATCH, posted.post_id, False)
    # a brand-new member's first click may be a Show or a Grade button on a channel MCQ
    shown = await drill.handle_action(who(7), click(Verb.SHOW, posted.post_id))
    assert shown.reply.plain() == "Pick one of the choices to answer this question."
    assert shown.post_id == posted.post_id
    graded = await drill.handle_action(who(8), click(Verb.GRADE, posted.post_id, int(Rating.Good)))
    assert (graded.reply.plain(), graded.post_id, graded.recorded) == (MISMATCH, posted.post_id, False)
    async with drill.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Answer)) == 0
    library.banks[0].questions.remove(question)
    library._reindex()
    removed = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert removed.reply.plain() == "This question was removed from the question banks."
    assert removed.post_id == posted.post_id


async def test_someone_elses_quiz_is_refused_by_name(drill) -> None:
    msg = await one_question_quiz(drill, who(1), "t-mcq-0")
    post_id = post_of(msg)
    out = await drill.handle_action(who(2), click(Verb.PICK, post_id, 0))
    assert out.reply.plain() == "This question belongs to someone else's quiz. Start your own with /quiz."
    assert (out.post_id, out.recorded) == (post_id, False)


async def test_a_grade_outside_the_four_ratings_is_refused(drill) -> None:
    msg = await one_question_quiz(drill, who(1), "t-card-0")
    post_id = post_of(msg)
    out = await drill.handle_action(who(1), click(Verb.GRADE, post_id, 9))
    assert (out.reply.plain(), out.post_id, out.recorded) == (MISMATCH, post_id, False)


# ---- channel posts: reply, public count, reveal time --------------------------------------


async def test_each_answer_updates_the_public_count_and_names_the_message(drill, publisher) -> None:
    posted, question, order, right, wrong = await channel_post(drill, publisher)
    first = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    second = await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, wrong))
    assert first.public.footer == "1 answered · answer revealed at 21:00 UTC"
    assert second.public.footer == "2 answered · answer revealed at 21:00 UTC"
    for out in (first, second):
        assert (out.post_id, out.platform_ref, out.recorded) == (posted.post_id, posted.ref, True)
    assert second.reply.plain() == (
        f"**❌ Not quite**\nYou picked **{LETTERS[wrong]}.** {question.choices[order[wrong]]}\n"
        "[🚩 Report]\n_The explanation comes with the reveal at 21:00 UTC._"
    )


async def test_the_reply_gives_the_reveal_time_in_the_channel_zone(drill, publisher) -> None:
    async with drill.db.write() as s:
        (await channel_row(s, WHERE)).timezone = "Europe/Paris"
    posted, _, _, right, _ = await channel_post(drill, publisher)
    out = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert out.reply.footer == "The explanation comes with the reveal at 22:00 CET."


async def test_answer_rows_keep_channel_and_exact_response_time(drill, publisher, clock) -> None:
    posted, _, _, right, _ = await channel_post(drill, publisher)
    await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))  # at once
    clock.advance(2.5)
    await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, right))
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        rows = (await s.execute(select(Answer.channel_id, Answer.response_ms).order_by(Answer.id))).all()
    assert [tuple(r) for r in rows] == [(post.channel_id, 0), (post.channel_id, 2500)]
    clock.advance(hours=13)
    revealed = await drill.reveal_post(posted.post_id, WHERE, publisher)
    assert "fastest correct: User 1 (0.0 s)" in revealed.plain()


async def test_speed_bonus_measures_the_full_window(drill, publisher, clock) -> None:
    """30.01% of the 12 h window gone: 5 * 0.6999 rounds to 3 (a window 0.1% longer gives 4)."""
    async with drill.db.write() as s:
        (await channel_row(s, WHERE)).speed_bonus = True
    posted, question, _, right, _ = await channel_post(drill, publisher)
    clock.advance(0.3001 * 12 * 3600)
    out = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert f"+{10 * question.difficulty + 3} points" in out.reply.plain()


# ---- the streak line in the reply ---------------------------------------------------------


def streak_lines(out) -> list[str]:
    return [line for line in out.reply.plain().splitlines() if "Streak" in line]


async def test_the_reply_shows_the_streak_this_answer_would_make(drill, publisher, clock) -> None:
    posted, _, _, right, _ = await channel_post(drill, publisher)
    assert streak_lines(await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))) == [
        "🔥 Streak: 1"
    ]
    clock.advance(hours=13)
    await drill.reveal_post(posted.post_id, WHERE, publisher)
    clock.advance(hours=11)
    posted, _, _, right, wrong = await channel_post(drill, publisher)
    assert streak_lines(await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))) == [
        "🔥 Streak: 2"
    ]
    assert streak_lines(await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, wrong))) == []


async def test_no_streak_line_outside_daily_posts(drill, publisher) -> None:
    posted, _, _, right, _ = await channel_post(drill, publisher, kind="now")
    out = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert out.reply.title == "✅ Correct!" and streak_lines(out) == []


# ---- re-clicks: what the member is told they chose ----------------------------------------


async def test_a_double_click_quotes_the_first_pick(drill, publisher) -> None:
    posted, question, order, right, wrong = await channel_post(drill, publisher)
    await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, wrong))
    again = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert again.reply.plain() == (
        f"You already answered this one: **{LETTERS[wrong]}.** {question.choices[order[wrong]]}. "
        "Only your first answer counts."
    )
    assert (again.post_id, again.recorded) == (posted.post_id, False)


async def test_clicks_after_the_close_quote_the_pick_or_say_closed(drill, publisher, clock) -> None:
    posted, question, order, right, wrong = await channel_post(drill, publisher)
    await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, wrong))
    clock.advance(hours=12)  # closed by time, not revealed yet
    mine = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    assert mine.reply.plain() == (
        f"You already answered this one: **{LETTERS[wrong]}.** {question.choices[order[wrong]]}. "
        "Only your first answer counts."
    )
    late = await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, right))
    assert late.reply.plain() == "This question is closed; answers are no longer accepted."
    assert (mine.post_id, late.post_id, mine.recorded, late.recorded) == (posted.post_id,) * 2 + (False,) * 2


async def test_an_insert_refused_without_an_earlier_answer_says_closed(drill, publisher) -> None:
    """The reveal won the race between reading the post and inserting the answer."""
    posted, question, order, _, _ = await channel_post(drill, publisher)
    async with drill.db.write() as s:
        out = await answers._refused(drill.answer_stores.clicks, s,
                                     {"post_id": posted.post_id, "member_id": 424242}, question, order)
    assert out.reply.plain() == "This question is closed; answers are no longer accepted."
    assert out.post_id == posted.post_id


# ---- personal posts: closing, the card, the quiz summary ----------------------------------


async def test_a_quiz_answer_closes_the_post_finishes_the_quiz_and_schedules_the_card(drill, clock) -> None:
    msg = await one_question_quiz(drill, who(1), "t-mcq-0")
    post_id = post_of(msg)
    async with drill.db.read() as s:
        order = order_of(await s.get(Post, post_id))
    out = await drill.handle_action(who(1), click(Verb.PICK, post_id, order.index(0)))
    assert "**Quiz finished:** 1/1 correct (1 of 1 answered)." in out.reply.plain()
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
        quiz = await s.get(Quiz, post.quiz_id)
        card = await s.scalar(select(SrsCard))
        member_id = await s.scalar(select(Member.id))
    now = clock.now()
    assert post.closed_at.replace(tzinfo=None) == now.replace(tzinfo=None)
    assert quiz.finished_at.replace(tzinfo=None) == now.replace(tzinfo=None)
    expected = srs.next_card(member_id, "t-mcq-0", None, None, Rating.Good, now)
    assert (card.reps, card.state) == (1, expected["state"])


async def test_a_second_answer_continues_the_stored_card(drill, clock) -> None:
    msg = await one_question_quiz(drill, who(1), "t-mcq-0")
    post_id = post_of(msg)
    async with drill.db.read() as s:
        order = order_of(await s.get(Post, post_id))
    await drill.handle_action(who(1), click(Verb.PICK, post_id, order.index(1)))  # wrong: Again
    async with drill.db.read() as s:
        first = await s.scalar(select(SrsCard))
        member_id = first.member_id
        first_state = first.state
    clock.advance(days=3)
    msg = await one_question_quiz(drill, who(1), "t-mcq-0")
    post_id = post_of(msg)
    async with drill.db.read() as s:
        order = order_of(await s.get(Post, post_id))
    await drill.handle_action(who(1), click(Verb.PICK, post_id, order.index(0)))  # right: Good
    async with drill.db.read() as s:
        card = await s.scalar(select(SrsCard))
    expected = srs.next_card(member_id, "t-mcq-0", first_state, 1, Rating.Good, clock.now())
    assert (card.reps, card.state) == (2, expected["state"])


async def test_a_good_self_grade_counts_as_correct_and_earns_no_points(drill, clock) -> None:
    msg = await one_question_quiz(drill, who(1), "t-card-0")
    post_id = post_of(msg)
    shown = await drill.handle_action(who(1), click(Verb.SHOW, post_id))
    assert shown.post_id == post_id and shown.reply.title == "Flashcard 0?"
    out = await drill.handle_action(who(1), click(Verb.GRADE, post_id, int(Rating.Good)))
    assert out.reply.plain().splitlines() == [
        "Saved: **Good**. You will see this card again in 10 min.",
        "**Quiz finished:** 1/1 correct (1 of 1 answered).",
    ]
    assert (out.post_id, out.recorded) == (post_id, True)
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
        quiz = await s.get(Quiz, post.quiz_id)
        points = await s.scalar(select(Answer.points))
    assert points == 0
    assert post.closed_at.replace(tzinfo=None) == clock.now().replace(tzinfo=None)
    assert quiz.finished_at.replace(tzinfo=None) == clock.now().replace(tzinfo=None)


# ---- "You will see this card again …" -----------------------------------------------------


def test_next_review_in_words_at_each_boundary() -> None:
    cases = {
        59: "in 1 min", 120: "in 2 min", 3599: "in 59 min", 3600: "in 1 h", 7200: "in 2 h",
        50_000: "in 13 h", 2 * 86400 - 1: "in 47 h", 2 * 86400: "in 2 days", 200_000: "in 2 days",
    }
    assert {s: _in_words(timedelta(seconds=s)) for s in cases} == cases
