"""Two channels, members and a daily question they answer: the reveal, stats, board and digest
tests (tests/support/group_boards.py and weekly_digest.py build on it)."""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

C1 = Where("discord", "g1", "c1", "one")
C2 = Where("discord", "g1", "c2", "two")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


async def ask_and_pick(drill, publisher, where, picks, kind="daily"):
    """Ask a question in ``where``; picks: {member: True/False}, each member picking the right
    choice or a wrong one, a second apart. Returns the post id."""
    posted = await drill.ask(where, publisher, kind=kind)
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        right = order_of(post).index(drill.library[post.question_id].answer_index)
    for n, ok in picks.items():
        drill.clock.advance(1)
        pos = right if ok else (right + 1) % 4
        await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, pos).encode())
    return posted.post_id


async def question_of(drill, post_id: int) -> str:
    """The id of the question a post asked, read back from the database."""
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
        return str(post.question_id)
