"""Members' answered posts in two channels: the leaderboard and study-group tests (the
channels and members are tests/support/reveal.py's)."""

from __future__ import annotations

from tests.support.reveal import ask_and_pick, question_of


async def answer_post(drill, publisher, where, picks, *, reveal=True):
    """picks: {member: True/False}; reveals the post (boards count revealed posts only);
    returns the question difficulty."""
    post_id = await ask_and_pick(drill, publisher, where, picks)
    difficulty = drill.library[await question_of(drill, post_id)].difficulty
    if reveal:
        await drill.reveal_post(post_id, where, publisher)
    return difficulty


def names(msg) -> list[str]:
    return [line.split("**")[1] for line in msg.blocks[0].text.splitlines()]
