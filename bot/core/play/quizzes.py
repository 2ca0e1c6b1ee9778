"""Personal quizzes and reviews: a private sequence of questions, one post at a time."""

from __future__ import annotations

import random

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core import render
from bot.core.content.bank import Library, Question
from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.model.clock import Clock
from bot.core.model.identity import Who, member_row
from bot.core.model.kinds import PostKind
from bot.core.model.messages import Message
from bot.core.play.posts import PostLike, create_post, order_of, question_of
from bot.core.play.selection import pool, without_twins
from bot.core.progress import srs
from bot.storage.models import Answer, Post, Quiz


class QuizError(ValueError):
    pass


def _ids(quiz: Quiz) -> list[str]:
    return [x for x in quiz.question_ids.split(",") if x]


async def _post_question(
    session: AsyncSession, library: Library, clock: Clock, quiz: Quiz, index: int
) -> Message:
    ids = _ids(quiz)
    question = library[ids[index]]
    post = await create_post(
        session, question, kind=quiz.mode, now=clock.now(), member_id=quiz.member_id, quiz_id=quiz.id
    )
    return render.question_message(
        post.id, question, order_of(post), kind=quiz.mode, progress=f"{index + 1}/{len(ids)}",
        ephemeral=True,
    )


async def _start(
    session: AsyncSession, library: Library, clock: Clock, who: Who, mode: str,
    questions: list[Question], topic: str | None,
) -> Message:
    member = await member_row(session, who, clock)
    quiz = Quiz(
        member_id=member.id,
        mode=mode,
        question_ids=",".join(q.id for q in questions),
        position=0,
        topic=topic,
        started_at=clock.now(),
    )
    session.add(quiz)
    await session.flush()
    return await _post_question(session, library, clock, quiz, 0)


async def start_quiz(
    session: AsyncSession,
    library: Library,
    clock: Clock,
    who: Who,
    *,
    topic: str | None,
    count: int,
    difficulty: int | None,
    rng: random.Random | None = None,
    source: str = DEFAULT_BANK_SOURCE,
) -> Message:
    """Options arrive validated against the command catalogue (count and difficulty ranges);
    community questions come from the member's own server or workspace only."""
    candidates = pool(library, topic=topic, difficulty=difficulty, community=who.community, source=source)
    member = await member_row(session, who, clock)
    seen = set(
        await session.scalars(select(Answer.question_id).where(Answer.member_id == member.id).distinct())
    )
    rng = rng or random.Random()
    fresh = [q for q in candidates if q.id not in seen]
    old = [q for q in candidates if q.id in seen]
    rng.shuffle(fresh)
    rng.shuffle(old)
    chosen = without_twins(fresh + old)[:count]  # never two versions of one question
    return await _start(session, library, clock, who, PostKind.QUIZ, chosen, topic)


async def start_review(
    session: AsyncSession, library: Library, clock: Clock, who: Who, *, count: int
) -> Message:
    """Due cards first (most overdue first), then questions never seen, from the weakest topics."""
    from bot.core.progress.stats import topic_accuracy

    member = await member_row(session, who, clock)
    now = clock.now()
    due = [qid for qid in await srs.due_question_ids(session, member.id, now, count) if qid in library]
    known = await srs.known_question_ids(session, member.id)
    accuracy = await topic_accuracy(session, member.id)
    unseen = [q for q in library.offered_to(who.community) if q.id not in known]
    # weakest topics first: low accuracy, then topics never tried, then the rest
    unseen.sort(key=lambda q: (accuracy.get(q.topic, (0.5, 0))[0], q.difficulty, q.id))
    chosen_ids = due + [q.id for q in unseen if q.id not in due]
    chosen = [library[qid] for qid in chosen_ids[:count]]
    if not chosen:
        return render.notice("Nothing to review right now; every card is scheduled for later.")
    return await _start(session, library, clock, who, PostKind.REVIEW, chosen, None)


async def _index_of(session: AsyncSession, post: PostLike) -> int:
    return (
        await session.scalar(
            select(func.count()).where(Post.quiz_id == post.quiz_id, Post.id < post.id)
        )
        or 0
    )


async def _summary(session: AsyncSession, quiz: Quiz) -> str:
    row = (
        await session.execute(
            select(func.count(), func.sum(case((Answer.correct, 1), else_=0)))
            .join(Post, Post.id == Answer.post_id)
            .where(Post.quiz_id == quiz.id)
        )
    ).first()
    answered, correct = (row[0] or 0, int(row[1] or 0)) if row else (0, 0)
    total = len(_ids(quiz))
    what = "Quiz" if quiz.mode == PostKind.QUIZ else "Review"
    return f"**{what} finished:** {correct}/{answered} correct ({answered} of {total} answered)."


async def after_answer(session: AsyncSession, post: PostLike, reply: Message) -> None:
    """Attach Next/Stop buttons, or the final summary when this was the last question."""
    quiz = await session.get(Quiz, post.quiz_id)
    if quiz is None:
        return
    index = await _index_of(session, post)
    has_next = index + 1 < len(_ids(quiz))
    if has_next:
        reply.buttons = render.nav_buttons(post.id, True)
    else:
        quiz.finished_at = quiz.finished_at or post.closed_at
        await session.flush()
        reply.text(await _summary(session, quiz))


async def _own_quiz(
    session: AsyncSession, clock: Clock, who: Who, post_id: int
) -> tuple[Post, Quiz] | Message:
    """The post and quiz behind a Next/Stop button, if they belong to the member clicking."""
    post = await session.get(Post, post_id)
    if post is None or post.quiz_id is None:
        return render.notice("That quiz no longer exists. Start a new one with /quiz.")
    member = await member_row(session, who, clock)
    if post.member_id != member.id:
        return render.notice("This is someone else's quiz. Start your own with /quiz.")
    quiz = await session.get(Quiz, post.quiz_id)
    assert quiz is not None
    return post, quiz


async def next_question(
    session: AsyncSession, library: Library, clock: Clock, who: Who, post_id: int
) -> Message:
    owned = await _own_quiz(session, clock, who, post_id)
    if isinstance(owned, Message):
        return owned
    post, quiz = owned
    if quiz.finished_at is not None:
        return render.notice(await _summary(session, quiz))
    index = await _index_of(session, post)
    latest = await session.scalar(
        select(Post).where(Post.quiz_id == quiz.id).order_by(Post.id.desc()).limit(1)
    )
    if latest is not None and latest.id != post.id:
        # a double click on Next: show the question already served instead of skipping one
        question = question_of(library, latest)
        return render.question_message(
            latest.id, question, order_of(latest), kind=quiz.mode,
            progress=f"{index + 2}/{len(_ids(quiz))}", ephemeral=True,
        )
    if index + 1 >= len(_ids(quiz)):
        quiz.finished_at = clock.now()
        return render.notice(await _summary(session, quiz))
    quiz.position = index + 1
    return await _post_question(session, library, clock, quiz, index + 1)


async def stop(session: AsyncSession, clock: Clock, who: Who, post_id: int) -> Message:
    owned = await _own_quiz(session, clock, who, post_id)
    if isinstance(owned, Message):
        return owned
    _post, quiz = owned
    quiz.finished_at = quiz.finished_at or clock.now()
    return render.notice(await _summary(session, quiz))
