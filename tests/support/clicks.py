"""A member clicking a choice of a channel post, through the drill: who clicks, where, and the
post.
"""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.identity import Where, Who
from bot.core.domain.kinds import PostKind
from bot.core.quizzes import sequence as quizzes
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

WHERE = Where("discord", "g1", "c1", "general")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"User {n}")


def click(verb: Verb, post_id: int, arg: int | None = None) -> str:
    return Action(verb, post_id, arg).encode() if arg is not None else Action(verb, post_id).encode()


async def channel_post(drill, publisher, kind: str = "daily"):
    """A channel post: (posted, question, order, keyed position, a wrong position)."""
    posted = await drill.ask(WHERE, publisher, kind=kind)
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        order = order_of(post)
        question = drill.library[post.question_id]
    right = order.index(question.answer_index)
    return posted, question, order, right, (right + 1) % len(order)


async def one_question_quiz(drill, member: Who, question_id: str):
    """A personal quiz of exactly one question (the first message the member sees)."""
    async with drill.db.write() as s:
        return await quizzes._start(
            drill.quiz_store, drill.identities, s, drill.library, drill.clock, member, PostKind.QUIZ, [drill.library[question_id]], None
        )


def post_of(msg) -> int:
    return decode(msg.buttons[0].action_id).post_id
