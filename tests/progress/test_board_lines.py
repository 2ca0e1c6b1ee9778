"""Leaderboards as members read them: every line with ties, titles, the member's own rank at
the edge of the board, the chart's figures and the study-group views (issue 21, survivors of
bot/core/progress/boards.py, leaderboard.py and render/boards.py board_message).
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.domain.identity import Where
from bot.storage.identity import channel_row
from tests.support.board_helpers import answer_daily, player

C1 = Where("discord", "g1", "c1", "one")
C2 = Where("discord", "g1", "c2", "two")
WEEK = "week 10, 2026"  # the clock starts on Wednesday 2026-03-04


who = player


async def answer(drill, publisher, picks: dict[int, bool], where: Where = C1, *, reveal: bool = True) -> int:
    """Members answer in the order given, a second apart; returns the points of a right answer."""
    return (await answer_daily(drill, publisher, picks, where, reveal=reveal))[1]


def lines(board) -> list[str]:
    return board.blocks[0].text.splitlines()


async def test_a_tied_board_reads_medals_then_numbers_first_to_score_first(drill, publisher) -> None:
    p = await answer(drill, publisher, {5: True, 3: True, 4: True, 1: True, 2: False})
    board = await drill.boards.leaderboard(who(2), C1)
    assert board.title == f"Leaderboard · this channel · {WEEK}"
    assert lines(board) == [
        f"🥇 **Player 5** — {p} pts · 100% of 1",
        f"🥈 **Player 3** — {p} pts · 100% of 1",
        f"🥉 **Player 4** — {p} pts · 100% of 1",
        f"4. **Player 1** — {p} pts · 100% of 1",
        "5. **Player 2** — 0 pts · 0% of 1",
    ]
    assert board.footer is None


async def test_a_short_board_names_your_rank_only_when_you_are_below_it(drill, publisher) -> None:
    p = await answer(drill, publisher, {5: True, 3: True, 4: True, 1: True})
    at_edge = await drill.boards.leaderboard(who(4), C1, limit=3)
    assert [line.split("**")[1] for line in lines(at_edge)] == ["Player 5", "Player 3", "Player 4"]
    assert at_edge.footer is None  # third on a board of three: already on it
    below = await drill.boards.leaderboard(who(1), C1, limit=3)
    assert len(lines(below)) == 3 and below.footer == f"You: #4 with {p} pts"


async def test_titles_name_the_scope_and_the_default_period_is_this_week(drill, publisher, clock) -> None:
    clock.set(datetime(2026, 2, 25, 9, 0, tzinfo=UTC))  # last week
    await answer(drill, publisher, {1: True})
    clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    p = await answer(drill, publisher, {2: True})
    board = await drill.boards.leaderboard(who(2), C1)
    assert lines(board) == [f"🥇 **Player 2** — {p} pts · 100% of 1"]
    server = await drill.boards.leaderboard(who(2), C1, scope="server")
    assert server.title == f"Leaderboard · this workspace · {WEEK}"
    await drill.boards.group(who(2), "create", "Owls")
    group = await drill.boards.leaderboard(who(2), C1, group="Owls")  # the scope follows from group:
    assert group.title == f"Leaderboard · group Owls · {WEEK}"
    assert lines(group) == [f"🥇 **Player 2** — {p} pts · 100% of 1"]
    assert group.footer is None  # your own rank on a group board


async def test_board_notices_are_exact(drill, publisher) -> None:
    unnamed = await drill.boards.leaderboard(who(1), C1, scope="group")
    assert unnamed.plain() == "Name the study group: /leaderboard scope:group group:<name>"
    missing = await drill.boards.leaderboard(who(1), C1, group="nope")
    assert missing.plain() == "there is no study group called 'nope'; /group list shows them"
    empty = await drill.boards.leaderboard(who(1), C1)
    assert lines(empty) == ["Nobody has scored yet. Answer a daily question to get on the board!"]


async def test_the_board_chart_counts_this_period_and_this_channel_only(drill, publisher, clock) -> None:
    clock.set(datetime(2026, 2, 25, 9, 0, tzinfo=UTC))
    await answer(drill, publisher, {1: True})  # last week
    clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    await answer(drill, publisher, {1: True}, where=C2)  # another channel
    p = await answer(drill, publisher, {1: True, 2: True})
    board = await drill.boards.leaderboard(who(1), C1, chart=True)
    alt = f"Leaderboard · this channel · {WEEK}, points over time: Player 1 {p} pts, Player 2 {p} pts."
    assert board.attachments[0].description == alt
    assert board.plain().splitlines()[-1] == alt


async def test_the_chart_ends_on_the_channels_local_today(drill, publisher, clock) -> None:
    """12:00 UTC is already tomorrow on Kiritimati (UTC+14): today's points are on the chart."""
    async with drill.db.write() as s:
        (await channel_row(s, C1)).timezone = "Pacific/Kiritimati"
    clock.set(datetime(2026, 3, 4, 12, 0, tzinfo=UTC))
    p = await answer(drill, publisher, {1: True})
    board = await drill.boards.leaderboard(who(1), C1, period="all", chart=True)
    assert board.attachments[0].description.endswith(f"points over time: Player 1 {p} pts.")


# ---- study groups -------------------------------------------------------------------------


async def test_group_stats_compare_with_this_channel_topic_by_topic(drill, publisher) -> None:
    await drill.boards.group(who(1), "create", "Owls")
    await answer(drill, publisher, {1: True, 2: False})
    await answer(drill, publisher, {3: False}, where=C2)  # another channel's answers stay out
    await answer(drill, publisher, {2: True})  # a topic only the channel answered (seeded draw)
    msg = await drill.boards.group_stats(who(1), C1, "owls")
    assert (msg.title, msg.ephemeral) == ("Study group Owls", True)
    assert msg.blocks[0].text == (
        "Group Owls: accuracy per topic: Optimizers and schedulers group 100% vs this channel 50%; "
        "Tensors group – vs this channel 100%. Activity over 8 weeks: Player 1 1 answers."
    )


async def test_group_stats_of_a_quiet_group(drill, publisher) -> None:
    await drill.boards.group(who(1), "create", "Owls")
    quiet = await drill.boards.group_stats(who(1), C1, "Owls")
    assert quiet.blocks[0].text == (
        "Group Owls: accuracy per topic: no answers yet. Activity over 8 weeks: Player 1 0 answers."
    )
    assert quiet.attachments == []
    await answer(drill, publisher, {2: True})  # the channel answers, the group does not
    msg = await drill.boards.group_stats(who(1), C1, "Owls")
    assert "group – vs this channel 100%" in msg.blocks[0].text
    assert [a.filename for a in msg.attachments] == ["group.png"]


async def test_group_commands_reply_exactly(drill) -> None:
    assert (await drill.boards.group(who(1), "")).plain() == (
        "No study groups yet. Create one with /group create <name>."
    )
    assert (await drill.boards.group(who(1), "join")).plain() == "/group join needs a group name."
    await drill.boards.group(who(1), "create", "Owls")
    assert (await drill.boards.group(who(9), "leave", "Owls")).plain() == "You were not in **Owls**."
    assert (await drill.boards.group(who(1), "leave", "Owls")).plain() == "You left **Owls**."
    assert (await drill.boards.group(who(1), "dance", "Owls")).plain() == (
        "Unknown /group action 'dance'; use create, join, leave or list."
    )
