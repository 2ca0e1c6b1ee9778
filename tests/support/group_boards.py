"""Two channels, members and answered posts: the leaderboard and study-group tests."""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

C1 = Where("discord", "g1", "c1", "one")
C2 = Where("discord", "g1", "c2", "two")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


async def answer_post(drill, publisher, where, picks, *, reveal=True):
    """picks: {member: True/False}; reveals the post (boards count revealed posts only);
    returns the question difficulty."""
    posted = await drill.ask(where, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        q = drill.library[post.question_id]
        order = order_of(post)
    right = order.index(q.answer_index)
    for n, ok in picks.items():
        drill.clock.advance(1)
        pos = right if ok else (right + 1) % 4
        await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, pos).encode())
    if reveal:
        await drill.reveal_post(posted.post_id, where, publisher)
    return q.difficulty


def names(msg) -> list[str]:
    return [line.split("**")[1] for line in msg.blocks[0].text.splitlines()]
