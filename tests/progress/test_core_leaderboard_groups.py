"""Leaderboards by scope and period, tie-breaks, ranks, and study groups."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.domain.actions import Action, Verb
from bot.core.domain.periods import Period, period_start
from bot.core.reveal.posts import order_of
from bot.storage.identity import channel_row
from bot.storage.models import Post
from tests.support.group_boards import answer_post, names
from tests.support.reveal import C1, C2, who


async def test_channel_board_orders_by_points_then_accuracy_then_first(drill, publisher):
    d1 = await answer_post(drill, publisher, C1, {1: True, 2: True, 3: False})
    # players 1 and 2 tie on points; player 2 also answers one wrong -> lower accuracy
    await answer_post(drill, publisher, C1, {2: False})
    board = await drill.boards.leaderboard(who(1), C1)
    assert names(board) == ["Player 1", "Player 2", "Player 3"]
    assert f"{10 * d1} pts" in board.blocks[0].text.splitlines()[0]


async def test_tie_on_points_and_accuracy_goes_to_who_got_there_first(drill, publisher):
    posted = await drill.ask(C1, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        right = order_of(post).index(drill.library[post.question_id].answer_index)
    for n in (5, 3, 4):
        drill.clock.advance(1)
        await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, right).encode())
    await drill.reveal_post(posted.post_id, C1, publisher)
    for period in ("week", "all"):
        board = await drill.boards.leaderboard(who(1), C1, period=period)
        assert names(board) == ["Player 5", "Player 3", "Player 4"], period


async def test_scopes_channel_workspace_group(drill, publisher):
    await answer_post(drill, publisher, C1, {1: True})
    await answer_post(drill, publisher, C2, {2: True, 3: True})
    assert names(await drill.boards.leaderboard(who(1), C1)) == ["Player 1"]
    assert set(names(await drill.boards.leaderboard(who(1), C1, scope="server"))) == {
        "Player 1", "Player 2", "Player 3"
    }
    assert "Created" in (await drill.boards.group(who(1), "create", "Night Owls")).plain()
    assert "joined" in (await drill.boards.group(who(3), "join", "night owls")).plain()
    assert "already in" in (await drill.boards.group(who(3), "join", "Night Owls")).plain()
    board = await drill.boards.leaderboard(who(1), C1, scope="group", group="Night Owls")
    assert set(names(board)) == {"Player 1", "Player 3"}
    assert "left" in (await drill.boards.group(who(3), "leave", "Night Owls")).plain()
    assert names(await drill.boards.leaderboard(who(1), C1, group="Night Owls")) == ["Player 1"]
    listing = (await drill.boards.group(who(2), "list")).plain()
    assert "Night Owls (1 members)" in listing
    assert "no study group called" in (await drill.boards.group(who(2), "join", "nope")).plain()
    assert "already exists" in (await drill.boards.group(who(2), "create", "NIGHT owls")).plain()
    assert "group names are" in (await drill.boards.group(who(2), "create", "!!")).plain()
    assert "unknown scope" in (await drill.boards.leaderboard(who(1), C1, scope="galaxy")).plain()


async def test_week_uses_channel_timezone_and_rank_beyond_top(drill, publisher, clock):
    async with drill.db.write() as s:
        (await channel_row(s, C1)).timezone = "America/Los_Angeles"
    # Monday 2026-03-02 06:00 UTC is still Sunday evening in Los Angeles (previous ISO week)
    clock.set(datetime(2026, 3, 2, 6, 0, tzinfo=UTC))
    await answer_post(drill, publisher, C1, {1: True})
    clock.set(datetime(2026, 3, 4, 12, 0, tzinfo=UTC))
    await answer_post(drill, publisher, C1, {n: True for n in range(2, 14)})
    week = await drill.boards.leaderboard(who(1), C1, period="week")
    assert "Player 1" not in names(week) and len(names(week)) == 10
    assert week.footer == "You are not on this board yet."
    assert "Player 1" in names(await drill.boards.leaderboard(who(1), C1, period="month", limit=20))
    alltime = await drill.boards.leaderboard(who(13), C1, period="all")
    assert alltime.footer and alltime.footer.startswith("You: #")


def test_period_start_is_local_monday_midnight() -> None:
    now = datetime(2026, 3, 29, 12, 0, tzinfo=UTC)  # Sunday; DST started in Berlin that morning
    start = period_start(Period.WEEK, now, "Europe/Berlin")
    assert start == datetime(2026, 3, 22, 23, 0, tzinfo=UTC)  # Monday 00:00 CET
    assert period_start(Period.MONTH, now, "Europe/Berlin") == datetime(2026, 2, 28, 23, 0, tzinfo=UTC)
    assert period_start(Period.ALL, now, "UTC") is None
