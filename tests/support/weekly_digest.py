"""Two weeks of answers in a channel, for the weekly digest."""

from __future__ import annotations

from bot.core.domain.identity import Where
from tests.support.reveal import ask_and_pick, question_of

HERE = Where("discord", "g1", "c1", "general")


async def ask(drill, publisher, picks: dict[int, bool], *, reveal: bool = True) -> tuple[int, str]:
    """A daily question in HERE answered right/wrong by members; (post id, question id)."""
    post_id = await ask_and_pick(drill, publisher, HERE, picks)
    question_id = await question_of(drill, post_id)
    if reveal:
        await drill.reveal_post(post_id, HERE, publisher)
    return post_id, question_id


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
