"""Two weeks of answers in a channel, for the weekly digest."""

from __future__ import annotations

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

HERE = Where("discord", "g1", "c1", "general")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"Player {n}")


async def ask(drill, publisher, picks: dict[int, bool], *, reveal: bool = True) -> tuple[int, str]:
    """A daily question in HERE answered right/wrong by members; (post id, question id)."""
    posted = await drill.ask(HERE, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        right = order_of(post).index(drill.library[post.question_id].answer_index)
        question_id = post.question_id
    for n, ok in picks.items():
        drill.clock.advance(1)
        position = right if ok else (right + 1) % 4
        await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, position).encode())
    if reveal:
        await drill.reveal_post(posted.post_id, HERE, publisher)
    return posted.post_id, question_id


async def two_weeks(drill, publisher) -> dict[str, str]:
    """Week of Mon 2 Mar: A. Week of Mon 9 Mar: B, C revealed, D still open."""
    _, a = await ask(drill, publisher, {1: True, 2: True, 3: False})  # Wed 4 Mar
    drill.clock.advance(days=5, hours=1)  # Mon 9 Mar 10:00 UTC
    _, b = await ask(drill, publisher, {1: False, 2: True, 3: True})
    drill.clock.advance(hours=1)
    _, c = await ask(drill, publisher, {2: False, 3: True, 4: False})
    drill.clock.advance(hours=1)
    _, d = await ask(drill, publisher, {1: True, 4: True}, reveal=False)
    return {"a": a, "b": b, "c": c, "d": d}
