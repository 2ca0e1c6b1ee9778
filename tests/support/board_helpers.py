"""A daily question answered by numbered players, a second apart: the boards' and charts' tests."""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.drill.service import Drill
from bot.core.reveal.posts import order_of
from bot.storage.models import Post


def player(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


async def answer_daily(
    drill: Drill, publisher: object, picks: dict[int, bool], where: Where, *, reveal: bool = True
) -> tuple[int, int]:
    """Players answer in the order given (True: the right choice); (post id, points of a right
    answer)."""
    posted = await drill.ask(where, publisher, kind="daily")  # type: ignore[arg-type]
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        assert post is not None
        q = drill.library[post.question_id]
        right = order_of(post).index(q.answer_index)
    for n, ok in picks.items():
        drill.clock.advance(1)  # type: ignore[attr-defined]
        await drill.handle_action(player(n), Action(Verb.PICK, posted.post_id, right if ok else (right + 1) % 4).encode())
    if reveal:
        await drill.reveal_post(posted.post_id, where, publisher)  # type: ignore[arg-type]
    return posted.post_id, 10 * q.difficulty
