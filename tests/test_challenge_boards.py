"""Challenge points on /leaderboard: a first solve counts on the server/workspace and group
boards (week, month, all time), never on a channel's board, never twice, and a solver with
no answered question shows as such."""

from __future__ import annotations

import re

from bot.core.content.challenges import load_challenges
from bot.core.play.challenge_desk import ChallengeDesk
from tests.test_core_leaderboard_groups import C1, answer_post, names, who

BANK = load_challenges()


def lines(msg) -> list[str]:
    return [line for line in msg.blocks[0].text.splitlines() if re.match(r"^\S+ \*\*", line)]


async def test_first_solves_count_on_workspace_and_group_boards_only(drill, publisher):
    desk = ChallengeDesk(drill.db, drill.clock, BANK)
    await answer_post(drill, publisher, C1, {1: True, 2: True})
    question_points = int(re.search(r"— (\d+) pts", lines(await drill.boards.leaderboard(who(1), C1))[0]).group(1))
    hard = max(BANK.challenges, key=lambda c: c.points)
    easy = min(BANK.challenges, key=lambda c: c.points)
    drill.clock.advance(60)
    assert await desk.record(who(3), hard, solved=True) == hard.points
    assert await desk.record(who(3), hard, solved=True) == 0  # a resubmission earns nothing
    await desk.record(who(2), easy, solved=True)
    await desk.record(who(1), easy, solved=False)  # a failed attempt earns nothing
    totals = {"Player 1": question_points, "Player 2": question_points + easy.points,
              "Player 3": hard.points}
    # points, then accuracy (Player 3 answered nothing: last on a tie), then who got there first
    expected = sorted(totals, key=lambda n: (-totals[n], n == "Player 3", n != "Player 1"))
    for period in ("week", "month", "all"):
        board = await drill.boards.leaderboard(who(1), C1, scope="server", period=period)
        rows = dict(zip(names(board), lines(board), strict=True))
        assert names(board) == expected, period
        assert rows["Player 3"].endswith(f"— {hard.points} pts · coding challenges"), rows
        assert rows["Player 2"].endswith(f"— {question_points + easy.points} pts · 100% of 1"), rows
        assert rows["Player 1"].endswith(f"— {question_points} pts · 100% of 1"), rows
        channel = await drill.boards.leaderboard(who(1), C1, period=period)
        assert names(channel) == ["Player 1", "Player 2"], period  # solves are not channel work
    charted = await drill.boards.leaderboard(who(1), C1, scope="server", period="all", chart=True)
    [chart] = charted.attachments
    assert f"Player 3 {hard.points} pts" in chart.description  # the chart adds up like the board
    assert f"Player 2 {question_points + easy.points} pts" in chart.description
    await drill.boards.group(who(3), "create", "Solvers")
    await drill.boards.group(who(1), "join", "Solvers")
    group = await drill.boards.leaderboard(who(1), C1, scope="group", group="Solvers")
    assert names(group) == [n for n in expected if n != "Player 2"]
    drill.clock.advance(days=8)  # a new week: last week's solves leave the week board
    week = await drill.boards.leaderboard(who(1), C1, scope="server", period="week")
    assert "Nobody has scored yet" in week.plain()
    alltime = await drill.boards.leaderboard(who(1), C1, scope="server", period="all")
    assert names(alltime) == expected
