"""Personal quizzes and reviews: a private sequence of questions, one post at a time.

Both are adaptive: after due cards (reviews) and before questions already seen (quizzes), they
serve questions whose predicted success for the member lies in a target band, widening it step
by step when the pool runs out (``bot.core.learning.adaptive``). Channel questions, live rounds
and daily posts do not come through here and keep their own rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.core.content.bank import Library, Question
from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.domain.kinds import PostKind
from bot.core.domain.messages import Message
from bot.core.drill.selection import pool, without_twins
from bot.core.learning.adaptive import DEFAULT_BAND, predicted_success, quiz_order, ring
from bot.core.progress import srs
from bot.core.render.buttons import nav_buttons
from bot.core.render.notices import notice
from bot.core.render.questions import question_message
from bot.core.reveal.posts import PostLike, create_post, order_of, question_of

if TYPE_CHECKING:
    from bot.core.learning.online import OnlineCalibrator
    from bot.core.progress.srs import CardStore
    from bot.core.reveal.ports import PostStore
    from bot.core.stores import Identities, Tx


class QuizError(ValueError):
    pass


class QuizRow(Protocol):
    """A stored quiz or review, as the sequence reads it."""

    @property
    def id(self) -> int: ...

    @property
    def member_id(self) -> int: ...

    @property
    def mode(self) -> str: ...

    @property
    def question_ids(self) -> str:
        """Comma separated, in order."""
        ...

    @property
    def finished_at(self) -> datetime | None: ...


class QuizStore(Protocol):
    """The members' quizzes and reviews (``bot.storage.quizzes.StoredQuizzes``), read and
    written inside the caller's transaction."""

    @property
    def posts(self) -> PostStore:
        """Where the sequence's posts are made (``bot.core.reveal.ports``)."""
        ...

    async def seen_ids(self, tx: Tx, member_id: int) -> set[str]:
        """The questions the member ever answered."""
        ...

    async def topic_accuracy(self, tx: Tx, member_id: int) -> dict[str, tuple[float, int]]:
        """The member's (share right, answers) per topic, over their revealed answers."""
        ...

    async def calibrator(self, tx: Tx, library: Library, member_id: int) -> OnlineCalibrator:
        """The member's stored estimates and those of the questions of their workspace."""
        ...

    async def create(self, tx: Tx, *, member_id: int, mode: str, question_ids: str,
                     topic: str | None, started_at: datetime) -> QuizRow:
        """A new quiz at position 0, its id assigned."""
        ...

    async def get(self, tx: Tx, quiz_id: int) -> QuizRow | None: ...

    async def post(self, tx: Tx, post_id: int) -> PostLike | None: ...

    async def latest_post(self, tx: Tx, quiz_id: int) -> PostLike | None:
        """The quiz's last post served."""
        ...

    async def index_of(self, tx: Tx, quiz_id: int, post_id: int) -> int:
        """How many of the quiz's posts came before ``post_id``."""
        ...

    async def tally(self, tx: Tx, quiz_id: int) -> tuple[int, int]:
        """(answered, correct) of the quiz's posts."""
        ...

    async def move_to(self, tx: Tx, quiz: QuizRow, position: int) -> None: ...

    async def finish(self, tx: Tx, quiz: QuizRow, when: datetime | None, *, flush: bool) -> None:
        """Mark the quiz finished at ``when`` unless it already is (``flush``: write it now)."""
        ...


def _ids(quiz: QuizRow) -> list[str]:
    return [x for x in quiz.question_ids.split(",") if x]


async def _post_question(
    store: QuizStore, session: Tx, library: Library, clock: Clock, quiz: QuizRow, index: int
) -> Message:
    ids = _ids(quiz)
    question = library[ids[index]]
    post = await create_post(
        store.posts, session, question, kind=quiz.mode, now=clock.now(), member_id=quiz.member_id, quiz_id=quiz.id
    )
    return question_message(
        post.id, question, order_of(post), kind=quiz.mode, progress=f"{index + 1}/{len(ids)}",
        ephemeral=True,
    )


async def _ring_of(store: QuizStore, session: Tx, library: Library, member_id: int,
                   band: tuple[float, float]) -> Callable[[Question], int]:
    """How far each question's predicted success for the member lies from ``band``, in steps,
    from the stored estimates (the member's abilities, the questions' difficulties as everyone's
    revealed answers calibrated them; no replay of the member's history)."""
    calibrator = await store.calibrator(session, library, member_id)
    member = str(member_id)

    def of(q: Question) -> int:
        return ring(predicted_success(calibrator, member, q.id, q.topic), band)

    return of


ring_of = _ring_of  # /mock picks its MCQs at the same edge (bot.storage.mocks)


async def _start(
    store: QuizStore, identities: Identities, session: Tx, library: Library, clock: Clock, who: Who,
    mode: str, questions: list[Question], topic: str | None,
) -> Message:
    member = await identities.member(session, who)
    quiz = await store.create(session, member_id=member.id, mode=mode,
                              question_ids=",".join(q.id for q in questions), topic=topic,
                              started_at=clock.now())
    return await _post_question(store, session, library, clock, quiz, 0)


async def start_quiz(
    store: QuizStore,
    identities: Identities,
    session: Tx,
    library: Library,
    clock: Clock,
    who: Who,
    *,
    topic: str | None,
    count: int,
    difficulty: int | None,
    rng: random.Random | None = None,
    source: str = DEFAULT_BANK_SOURCE,
    band: tuple[float, float] = DEFAULT_BAND,
) -> Message:
    """Options arrive validated against the command catalogue (count and difficulty ranges);
    community questions come from the member's own server or workspace only. Nearest the
    success band first, a question already seen one ring further out, at random within a ring."""
    candidates = pool(library, topic=topic, difficulty=difficulty, community=who.community, source=source)
    member = await identities.member(session, who)
    seen = await store.seen_ids(session, member.id)
    rng = rng or random.Random()
    ring_of = await _ring_of(store, session, library, member.id, band)
    ordered = quiz_order(candidates, lambda q: q.id in seen, ring_of, rng)
    chosen = without_twins(ordered)[:count]  # never two versions of one question
    return await _start(store, identities, session, library, clock, who, PostKind.QUIZ, chosen, topic)


async def start_review(
    store: QuizStore, identities: Identities, cards: CardStore, session: Tx, library: Library,
    clock: Clock, who: Who, *, count: int, band: tuple[float, float] = DEFAULT_BAND,
) -> Message:
    """Due cards first (most overdue first), then questions never seen: nearest the success
    band first, the weakest topics first within a ring."""
    member = await identities.member(session, who)
    now = clock.now()
    allowance = srs.review_allowance(await srs.reviewed_today(cards, session, member.id, now))
    waiting = await cards.due_count(session, member.id, now)
    if waiting and not allowance:
        return notice(srs.done_for_today(waiting))
    due = [qid for qid in await cards.due_ids(session, member.id, now, min(count, allowance))
           if qid in library]
    backlog = waiting - len(due)
    if backlog > 0 and due:  # catching up: no new cards on top of a backlog
        message = await _start(store, identities, session, library, clock, who, PostKind.REVIEW,
                               [library[qid] for qid in due], None)
        message.footer = " · ".join(x for x in (message.footer, srs.backlog_note(backlog)) if x)
        return message
    known = await cards.known_ids(session, member.id)
    accuracy = await store.topic_accuracy(session, member.id)
    unseen = [q for q in library.offered_to(who.community) if q.id not in known]
    ring_of = await _ring_of(store, session, library, member.id, band)
    # within a ring, weakest topics first: low accuracy, then topics never tried, then the rest
    unseen.sort(key=lambda q: (ring_of(q), accuracy.get(q.topic, (0.5, 0))[0], q.difficulty, q.id))
    chosen_ids = due + [q.id for q in unseen if q.id not in due]
    chosen = [library[qid] for qid in chosen_ids[:count]]
    if not chosen:
        return notice("Nothing to review right now; every card is scheduled for later.")
    return await _start(store, identities, session, library, clock, who, PostKind.REVIEW, chosen, None)


async def _summary(store: QuizStore, session: Tx, quiz: QuizRow) -> str:
    answered, correct = await store.tally(session, quiz.id)
    total = len(_ids(quiz))
    what = "Quiz" if quiz.mode == PostKind.QUIZ else "Review"
    return f"**{what} finished:** {correct}/{answered} correct ({answered} of {total} answered)."


async def after_answer(store: QuizStore, session: Tx, post: PostLike, reply: Message) -> None:
    """Attach Next/Stop buttons, or the final summary when this was the last question."""
    assert post.quiz_id is not None
    quiz = await store.get(session, post.quiz_id)
    if quiz is None:
        return
    index = await store.index_of(session, quiz.id, post.id)
    has_next = index + 1 < len(_ids(quiz))
    if has_next:
        reply.buttons = nav_buttons(post.id, True)
    else:
        await store.finish(session, quiz, post.closed_at, flush=True)
        reply.text(await _summary(store, session, quiz))


async def _own_quiz(
    store: QuizStore, identities: Identities, session: Tx, who: Who, post_id: int
) -> tuple[PostLike, QuizRow] | Message:
    """The post and quiz behind a Next/Stop button, if they belong to the member clicking."""
    post = await store.post(session, post_id)
    if post is None or post.quiz_id is None:
        return notice("That quiz no longer exists. Start a new one with /quiz.")
    member = await identities.member(session, who)
    if post.member_id != member.id:
        return notice("This is someone else's quiz. Start your own with /quiz.")
    quiz = await store.get(session, post.quiz_id)
    assert quiz is not None
    return post, quiz


async def next_question(
    store: QuizStore, identities: Identities, session: Tx, library: Library, clock: Clock, who: Who,
    post_id: int,
) -> Message:
    owned = await _own_quiz(store, identities, session, who, post_id)
    if isinstance(owned, Message):
        return owned
    post, quiz = owned
    if quiz.finished_at is not None:
        return notice(await _summary(store, session, quiz))
    index = await store.index_of(session, quiz.id, post.id)
    latest = await store.latest_post(session, quiz.id)
    if latest is not None and latest.id != post.id:
        # a double click on Next: show the question already served instead of skipping one
        question = question_of(library, latest)
        return question_message(
            latest.id, question, order_of(latest), kind=quiz.mode,
            progress=f"{index + 2}/{len(_ids(quiz))}", ephemeral=True,
        )
    if index + 1 >= len(_ids(quiz)):
        await store.finish(session, quiz, clock.now(), flush=False)
        return notice(await _summary(store, session, quiz))
    await store.move_to(session, quiz, index + 1)
    return await _post_question(store, session, library, clock, quiz, index + 1)


async def stop(
    store: QuizStore, identities: Identities, session: Tx, clock: Clock, who: Who, post_id: int
) -> Message:
    owned = await _own_quiz(store, identities, session, who, post_id)
    if isinstance(owned, Message):
        return owned
    _post, quiz = owned
    await store.finish(session, quiz, clock.now(), flush=False)
    return notice(await _summary(store, session, quiz))
