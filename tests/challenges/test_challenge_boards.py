"""Challenge points on /leaderboard: a first solve counts on the server/workspace and group
boards (week, month, all time), never on a channel's board, never twice, and a solver with
no answered question shows as such."""

from __future__ import annotations

import re

from bot.app import challenge_desk
from tests.support.challenge_bank import BANK
from tests.support.group_boards import answer_post, names
from tests.support.reveal import C1, who


def lines(msg) -> list[str]:
    return [line for line in msg.blocks[0].text.splitlines() if re.match(r"^\S+ \*\*", line)]


async def test_first_solves_count_on_workspace_and_group_boards_only(drill, publisher):
    desk = challenge_desk(drill.db, drill.clock, BANK)
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


async def test_challenge_desk_open_hint_board_and_mine_as_members_read_them(drill):
    """The /challenge replies in the core: a filter that matches nothing, unsolved problems
    first, hints one more at a time, the board (points, then who solved first; this
    workspace only) and a member's own tally."""
    from bot.core.domain.identity import Who
    from bot.core.domain.topics import TOPICS

    desk = challenge_desk(drill.db, drill.clock, BANK)
    how = "`/submit` to submit"
    assert (await desk.hint(who(1), "/challenge")).plain() == "You have no open challenge. Start one with /challenge."
    nothing = await desk.open(who(1), "no-such-topic", 3, how)
    assert nothing.plain() == "No challenge matches topic no-such-topic and difficulty 3."
    assert (await desk.open(who(1), None, 9, how)).plain() == "No challenge matches difficulty 9."
    topic = BANK.challenges[0].topic
    in_topic = [c for c in BANK.challenges if c.topic == topic]
    assert len(in_topic) >= 2  # the bank has several problems per topic
    for c in in_topic[1:]:
        await desk.record(who(1), c, solved=True)
    opened = await desk.open(who(1), topic, None, how)  # the one left unsolved comes first
    assert opened.title.startswith(f"🧩 {in_topic[0].title} · ") and opened.ephemeral
    challenge = in_topic[0]
    for shown in range(1, len(challenge.hints) + 2):  # one past the last: stays at the last
        hint = await desk.hint(who(1), "/challenge")
        n = min(shown, len(challenge.hints))
        assert hint.title == f"💡 Hint {n}/{len(challenge.hints)}: {challenge.title}" and hint.ephemeral
        assert [b.text for b in hint.blocks] == [f"{i}. {h}" for i, h in enumerate(challenge.hints[:n], 1)]
        assert hint.footer == ("That was the last hint." if n == len(challenge.hints) else None)
    drill.clock.advance(60)
    await desk.record(who(2), challenge, solved=True)
    drill.clock.advance(60)
    await desk.record(who(3), challenge, solved=True)
    await desk.record(Who("discord", "g2", "x", "Elsewhere"), challenge, solved=True)
    board = (await desk.board("discord", "g1", "server")).plain().splitlines()
    ranked = sorted([("Player 1", sum(c.points for c in in_topic[1:]), len(in_topic) - 1, 0),
                     ("Player 2", challenge.points, 1, 1), ("Player 3", challenge.points, 1, 2)],
                    key=lambda r: (-r[1], r[3]))
    assert board == ["**🧩 Challenges board · this server**"] + [
        f"{i}. {name} — {pts} pts · {solved} solved" for i, (name, pts, solved, _) in enumerate(ranked, 1)]
    assert (await desk.board("discord", "g9", "server")).plain() == (
        "**🧩 Challenges board · this server**\nNo solves yet. Be the first: /challenge")
    mine = await desk.mine(who(2))
    totals: dict[str, int] = {}
    for c in BANK.challenges:
        totals[c.topic] = totals.get(c.topic, 0) + 1
    assert mine.ephemeral and mine.plain().splitlines() == [
        "**🧩 Your challenges**", f"Solved 1 of {len(BANK.challenges)}."] + [
        f"{TOPICS[t]}: {1 if t == topic else 0}/{n}" for t, n in sorted(totals.items())]
