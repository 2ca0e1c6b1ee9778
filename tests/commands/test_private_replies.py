"""Private replies stay private and say exactly this (issue 21 survivors of the whole-tree run).

A reply that leaks into the channel would show a member's pick to everyone; each click's reply
is checked for ``ephemeral`` as well as for its words: the flashcard's answer with its grade
buttons, "already graded", the quiz's Next/Stop buttons, and /daily pause, resume and status.
"""

from __future__ import annotations

from fsrs import Rating

from bot.app import build_daily
from bot.core.content.bank import Kind, Question, Snippet
from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.messages import ButtonStyle
from bot.core.render.answers import already_answered, flashcard_answer
from bot.core.render.buttons import nav_buttons
from bot.core.render.questions import shown_code
from tests.support.clicks import WHERE, channel_post, click, one_question_quiz, post_of, who


async def test_every_reply_to_a_click_is_private(drill, publisher, clock) -> None:
    posted, _question, _order, right, wrong = await channel_post(drill, publisher)
    picked = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    again = await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, wrong))
    clock.advance(hours=12)
    late = await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, right))
    assert late.reply.plain() == "This question is closed; answers are no longer accepted."
    card = post_of(await one_question_quiz(drill, who(3), "t-card-1"))
    shown = await drill.handle_action(who(3), click(Verb.SHOW, card))
    graded = await drill.handle_action(who(3), click(Verb.GRADE, card, int(Rating.Hard)))
    twice = await drill.handle_action(who(3), click(Verb.GRADE, card, int(Rating.Easy)))
    assert twice.reply.plain() == "You already graded this card: **Hard**."
    for out in (picked, again, late, shown, graded, twice):
        assert out.reply.ephemeral is True, out.reply.plain()
    assert picked.public is not None and picked.public.ephemeral is False  # the count, for everyone


def test_the_flashcard_answer_shows_three_snippets_and_the_four_grades() -> None:
    card = Question(
        id="card-x", bank="b", kind=Kind.FLASHCARD, topic="autograd", difficulty=1, prompt="What is a leaf?",
        answer="A tensor created by the user.", explanation="Only leaves keep `.grad`.",
        code=[Snippet(code=f"print({n})\n") for n in range(4)],
    )
    msg = flashcard_answer(42, card)
    assert (msg.title, msg.ephemeral) == ("What is a leaf?", True)
    assert msg.plain().splitlines()[1:] == [
        "A tensor created by the user.",
        "```python", "print(0)", "```", "```python", "print(1)", "```", "```python", "print(2)", "```",
        "**Key point:** Only leaves keep `.grad`.",
        "How well did you know it?",
        "[Again] [Hard] [Good] [Easy]",
    ]
    assert [(b.label, b.style) for b in msg.buttons] == [
        ("Again", ButtonStyle.DANGER), ("Hard", ButtonStyle.SECONDARY),
        ("Good", ButtonStyle.PRIMARY), ("Easy", ButtonStyle.SUCCESS)]
    assert [decode(b.action_id) for b in msg.buttons] == [Action(Verb.GRADE, 42, int(r)) for r in Rating]


def test_a_grade_outside_the_labels_is_quoted_as_its_number() -> None:
    card = Question(id="card-x", bank="b", kind=Kind.FLASHCARD, topic="autograd", difficulty=1, prompt="P?",
                    answer="A.", explanation="E.")
    assert already_answered(card, [], 7, Kind.FLASHCARD).plain() == "You already graded this card: **7**."


def test_quiz_navigation_buttons() -> None:
    assert [(b.label, b.style, decode(b.action_id)) for b in nav_buttons(9, True)] == [
        ("Next question", ButtonStyle.PRIMARY, Action(Verb.NEXT, 9)),
        ("Stop", ButtonStyle.SECONDARY, Action(Verb.STOP, 9)),
    ]
    assert nav_buttons(9, False) == []


async def test_daily_pause_resume_and_status_say_so(drill, publisher) -> None:
    daily = build_daily(drill, publisher)
    none_yet = "This channel has no daily schedule yet. Set one with /daily schedule."
    assert (await daily.set_paused(WHERE, True)).plain() == none_yet
    assert (await daily.status(WHERE)).plain() == (
        "No daily question here yet. Example: /daily schedule time:09:00 timezone:Europe/Berlin weekdays:mon-fri")
    await daily.set_schedule(WHERE, at="09:00")
    paused = await daily.set_paused(WHERE, True)
    assert (paused.plain(), paused.ephemeral) == ("Daily questions paused.", True)
    assert "paused" in (await daily.status(WHERE)).plain().lower()
    assert (await daily.set_paused(WHERE, False)).plain() == "Daily questions resumed."


class WherePublisher:
    """Remembers where each edit and thread post went; one channel can be made to fail."""

    def __init__(self, broken: str | None = None) -> None:
        self.edits: list[tuple[object, str]] = []
        self.threads: list[tuple[object, str | None]] = []
        self.broken = broken

    async def publish(self, where, message, *, thread_of=None) -> str:
        if where.channel_id == self.broken:
            raise ConnectionError("that channel is gone")
        self.threads.append((where, thread_of))
        return f"t{len(self.threads)}"

    async def update(self, where, ref, message) -> None:
        if where.channel_id == self.broken:
            raise ConnectionError("that channel is gone")
        self.edits.append((where, ref))


async def test_due_reveals_go_to_each_posts_own_channel_and_one_failure_stops_none(drill, clock, caplog) -> None:
    from bot.core.domain.identity import Where

    slack = Where("slack", "T1", "C7", "random")
    broken = Where("discord", "g2", "c-gone", "old")
    publisher = WherePublisher(broken="c-gone")
    posted = {}
    for where in (WHERE, broken, slack):
        posted[where.channel_id] = await drill.ask(where, RefPublisher(where.channel_id), kind="daily")
    clock.advance(hours=13)
    assert await drill.reveal_due(publisher) == 3
    # reveals due together run concurrently: where each went matters, not their order
    assert sorted(publisher.edits, key=repr) == sorted([(WHERE, "ref-c1"), (slack, "ref-C7")], key=repr)
    assert sorted(publisher.threads, key=repr) == sorted([(WHERE, "ref-c1"), (slack, "ref-C7")], key=repr)
    assert f"reveal of post {posted['c-gone'].post_id} failed" in caplog.text


class RefPublisher:
    def __init__(self, channel: str) -> None:
        self.ref = f"ref-{channel}"

    async def publish(self, where, message, *, thread_of=None) -> str:
        return self.ref

    async def update(self, where, ref, message) -> None:
        pass


async def test_a_private_note_is_sent_where_the_platform_can_and_a_failure_is_logged(caplog) -> None:
    """The fate of a suggestion is told by direct message: False (and a warning naming the
    member, with the error) where that cannot happen; the decision stands either way."""
    from bot.core.domain.identity import Who
    from bot.core.domain.messages import Message
    from bot.core.drill.delivery import tell_privately

    mia, note = Who("discord", "g1", "u-mia", "mia"), Message().text("approved")

    class Tells:
        def __init__(self, answer: object) -> None:
            self.answer, self.told = answer, []

        async def tell(self, who, message) -> object:
            if isinstance(self.answer, Exception):
                raise self.answer
            self.told.append((who, message))
            return self.answer

    class Silent:  # a publisher with no way to write privately
        pass

    accepting = Tells(True)
    assert await tell_privately(accepting, mia, note) is True and accepting.told == [(mia, note)]
    assert await tell_privately(Tells(None), mia, note) is False  # the member does not take DMs
    assert await tell_privately(Silent(), mia, note) is False
    caplog.clear()
    assert await tell_privately(Tells(ConnectionError("down")), mia, note) is False
    [record] = [r for r in caplog.records if r.name == "bot.core.drill.delivery"]
    assert (record.getMessage(), record.levelname) == ("could not tell u-mia privately", "WARNING")
    assert record.exc_info is not None and isinstance(record.exc_info[1], ConnectionError)


def test_a_raises_at_question_numbers_its_shown_lines() -> None:
    from bot.core.content.bank import Check

    snippet = Snippet(code="\nimport torch\nx = torch.ones(2)\nx.view(3)\n\n")
    q = Question(id="lines-q", bank="b", kind=Kind.MCQ, topic="tensors", difficulty=1, prompt="Which line raises?",
                 choices=["Line 1", "Line 2", "Line 3", "It runs without an error"], answer="Line 3",
                 explanation="E.", code=[snippet], check=Check.RAISES_AT,
                 why_not={"Line 1": "n", "Line 2": "n", "It runs without an error": "n"})
    assert shown_code(q) == "1  import torch\n2  x = torch.ones(2)\n3  x.view(3)"  # no trailing blanks
    plain = q.model_copy(update={"check": None, "code": []})
    assert shown_code(plain) == ""
