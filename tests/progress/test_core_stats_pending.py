"""A member's own stats count an open question's answer as pending, never as right or wrong."""

from __future__ import annotations

from bot.core.progress.stats import member_stats
from bot.storage.identity import channel_row, member_row
from tests.support.reveal import C1, ask_and_pick, who


async def test_open_answers_are_pending_until_the_reveal(drill, publisher):
    first = await ask_and_pick(drill, publisher, C1, {1: True})
    await drill.reveal_post(first, C1, publisher)
    open_id = await ask_and_pick(drill, publisher, C1, {1: False}, kind="round")
    async with drill.db.write() as s:
        member = await member_row(s, who(1), drill.clock)
        channel = await channel_row(s, C1)
        st = await member_stats(drill.practice.reads, s, drill.library, member.id, channel.id)
        accuracy = await drill.practice.reads.member_topic_accuracy(s, member.id)
    assert (st.answered, st.correct, st.pending) == (1, 1, 1)
    assert sum(n for _, n in accuracy.values()) == 1
    await drill.reveal_post(open_id, C1, publisher)
    async with drill.db.read() as s:
        st = await member_stats(drill.practice.reads, s, drill.library, member.id, channel.id)
    assert (st.answered, st.correct, st.pending) == (2, 1, 0)
    assert sum(t.answered for t in st.topics) == 2
