"""Boards never reveal an open question, and the all-time totals equal the raw computation."""

from __future__ import annotations

import asyncio
import random

import pytest
from sqlalchemy import select

from bot.core.domain.actions import Action, Verb
from bot.core.domain.periods import Scope
from bot.core.reveal.posts import order_of
from bot.storage import scores
from bot.storage.db import Database, alembic_config, migrate
from bot.storage.models import Answer, Channel, ChannelScore, GroupMember, Member, Post, StudyGroup
from bot.storage.scores import rebuild_totals
from tests.support.reveal import C1, C2, ask_and_pick, who


def board_text(msg) -> str:
    return msg.blocks[0].text


async def test_open_daily_question_is_on_no_board_until_its_reveal(drill, publisher):
    first = await ask_and_pick(drill, publisher, C1, {1: True})
    await drill.reveal_post(first, C1, publisher)
    open_id = await ask_and_pick(drill, publisher, C1, {1: False, 2: True})
    await drill.boards.group(who(2), "create", "Owls")
    views = [
        dict(period=period, scope=scope, group="Owls" if scope == "group" else None)
        for period in ("week", "month", "all") for scope in ("channel", "server", "group")
    ]
    for view in views:
        board = await drill.boards.leaderboard(who(2), C1, **view)
        text = board_text(board)
        assert "Player 2" not in text, view  # right answer of the open question: hidden
        if view["scope"] == "group":  # only player 2 is in Owls
            assert "Nobody has scored yet" in text, view
        else:  # player 1's wrong pick on the open question is not counted either
            assert "Player 1" in text and "100% of 1" in text, (view, text)
            assert board.footer == "You are not on this board yet.", view
    await drill.reveal_post(open_id, C1, publisher)
    for view in views:
        text = board_text(await drill.boards.leaderboard(who(2), C1, **view))
        assert "Player 2" in text, view
        if view["scope"] != "group":
            assert "50% of 2" in text, (view, text)


async def test_round_points_appear_question_by_question(drill, publisher):
    q1 = await ask_and_pick(drill, publisher, C1, {3: True}, kind="round")
    assert "Player 3" not in board_text(await drill.boards.leaderboard(who(3), C1, period="all"))
    await drill.reveal_post(q1, C1, publisher)
    board = await drill.boards.leaderboard(who(3), C1, period="all")
    assert "Player 3" in board_text(board) and board.footer is None  # on the board itself
    q2 = await ask_and_pick(drill, publisher, C1, {4: True, 3: True}, kind="round")
    board = board_text(await drill.boards.leaderboard(who(3), C1, period="all"))
    assert "Player 4" not in board and "100% of 1" in board
    await drill.reveal_post(q2, C1, publisher)
    await drill.reveal_post(q2, C1, publisher)  # a second reveal credits nothing again
    board = board_text(await drill.boards.leaderboard(who(3), C1, period="all"))
    assert "Player 4" in board and "100% of 2" in board and "100% of 3" not in board


def expected_board(answers, open_posts, *, channel=None, workspace=None, members=None):
    """The ranking computed in Python from the answer rows: the definition of a board."""
    totals: dict[int, list] = {}
    for a in answers:
        if a.post_id in open_posts or a.channel_id is None:
            continue
        if channel is not None and a.channel_id != channel:
            continue
        if workspace is not None and a.workspace_id != workspace:
            continue
        if members is not None and a.member_id not in members:
            continue
        t = totals.setdefault(a.member_id, [0, 0, 0, None])
        t[0] += a.points
        t[1] += int(a.correct)
        t[2] += 1
        if a.points > 0 and (t[3] is None or a.answered_at > t[3]):
            t[3] = a.answered_at
    far = max((a.answered_at for a in answers), default=None)
    order = sorted(
        totals.items(),
        key=lambda kv: (-kv[1][0], -kv[1][1] / kv[1][2], (kv[1][3] is None, kv[1][3] or far), kv[0]),
    )
    return [(m, t[0], t[1], t[2]) for m, t in order]


async def test_totals_match_the_raw_computation_for_every_scope(drill, publisher, clock):
    rng = random.Random(11)
    post_ids = []
    for i in range(8):
        where = (C1, C2)[i % 2]
        picks = {n: rng.random() < 0.6 for n in rng.sample(range(1, 13), 7)}
        post_ids.append(await ask_and_pick(drill, publisher, where, picks, kind=rng.choice(["daily", "round"])))
        clock.advance(3600)
    for post_id in post_ids[:6]:
        await drill.reveal_post(post_id, (C1, C2)[post_ids.index(post_id) % 2], publisher)
    for n in (1, 4, 5, 9):
        await drill.boards.group(who(n), "join" if n != 1 else "create", "Owls")
    async with drill.db.read() as s:
        answers = (await s.execute(select(Answer))).scalars().all()
        open_posts = set((await s.execute(select(Post.id).where(Post.closed_at.is_(None)))).scalars())
        channels = {c.channel_id: c.id for c in (await s.execute(select(Channel))).scalars()}
        workspace = (await s.execute(select(Member.workspace_id))).scalars().first()
        group = (await s.execute(select(StudyGroup))).scalars().one()
    assert open_posts and len(answers) > 40
    async with drill.db.read() as s:
        owls = set((await s.execute(select(GroupMember.member_id))).scalars())
    cases = [
        (Scope.CHANNEL, channels["c1"], None, dict(channel=channels["c1"])),
        (Scope.CHANNEL, channels["c2"], None, dict(channel=channels["c2"])),
        (Scope.WORKSPACE, workspace, None, dict(workspace=workspace)),
        (Scope.GROUP, group.id, workspace, dict(workspace=workspace, members=owls)),
    ]
    async with drill.db.read() as s:
        for scope, scope_id, ws, filt in cases:
            want = expected_board(answers, open_posts, **filt)
            for raw in (False, True):
                got = await scores.top(s, scope, scope_id, None, limit=50, workspace_id=ws, raw=raw)
                assert [(r.member_id, r.points, r.correct, r.answered) for r in got] == want, (scope, raw)
                assert [r.rank for r in got] == list(range(1, len(want) + 1))
                for rank, (member_id, *_rest) in enumerate(want, start=1):
                    mine = await scores.rank_of(s, scope, scope_id, None, member_id, workspace_id=ws, raw=raw)
                    assert mine is not None and mine.rank == rank
            since = min(a.answered_at for a in answers)
            got = await scores.top(s, scope, scope_id, since, limit=50, workspace_id=ws)
            assert [(r.member_id, r.points, r.correct, r.answered) for r in got] == want, scope
    async with drill.db.write() as s:  # recomputing from scratch gives the same totals
        before = (await s.execute(select(ChannelScore))).scalars().all()
        snapshot = sorted((c.channel_id, c.member_id, c.points, c.correct, c.answered) for c in before)
        await rebuild_totals(await s.connection())
    async with drill.db.read() as s:
        after = (await s.execute(select(ChannelScore))).scalars().all()
        assert sorted((c.channel_id, c.member_id, c.points, c.correct, c.answered) for c in after) == snapshot


async def test_upgrade_backfills_totals_from_revealed_posts(tmp_path, library, clock, publisher):
    from alembic import command

    from bot.app import build_drill

    url = f"sqlite+aiosqlite:///{tmp_path / 'backfill.db'}"
    await asyncio.to_thread(migrate, url)
    db = Database(url)
    drill = build_drill(db, library, clock, rng=random.Random(5))
    revealed = await ask_and_pick(drill, publisher, C1, {1: True, 2: False, 3: True})
    await drill.reveal_post(revealed, C1, publisher)
    await ask_and_pick(drill, publisher, C1, {2: True})  # still open
    before = board_text(await drill.boards.leaderboard(who(1), C1, period="all"))
    await db.dispose()
    await asyncio.to_thread(command.downgrade, alembic_config(url), "0001")
    await asyncio.to_thread(migrate, url)
    db = Database(url)
    drill = build_drill(db, library, clock, rng=random.Random(5))
    after = board_text(await drill.boards.leaderboard(who(1), C1, period="all"))
    assert after == before and "Player 1" in after and "Player 3" in after
    assert "0% of 1" in after  # player 2's wrong pick counted, the open right one not
    await db.dispose()


@pytest.mark.postgres
async def test_a_click_racing_the_reveal_is_refused_not_lost_from_the_board(pg_url, library, clock, publisher):
    """The reveal holds the post row; a click arriving meanwhile waits for it, then finds the
    post closed: it is told so and never lands uncounted after the totals were credited."""
    from sqlalchemy import text

    from bot.app import build_drill
    from bot.core.reveal.posts import reveal

    db = Database(pg_url)
    async with db.engine.begin() as conn:
        await conn.exec_driver_sql("TRUNCATE workspaces, channels, members, posts, answers RESTART IDENTITY CASCADE")
    drill = build_drill(db, library, clock, rng=random.Random(3))
    post_id = await ask_and_pick(drill, publisher, C1, {1: True})
    async with drill.db.read() as s:
        post = await s.get(Post, post_id)
        right = order_of(post).index(drill.library[post.question_id].answer_index)
    await drill.handle_action(who(2), Action(Verb.PICK, post_id, (right + 1) % 4).encode())  # member exists
    async with db.write() as session:
        await reveal(drill.posts, session, library, clock, post_id)  # not committed yet: holds the row
        late = asyncio.create_task(drill.handle_action(who(3), Action(Verb.PICK, post_id, right).encode()))
        for _ in range(200):  # until the click waits on the reveal's lock (bounded)
            async with db.engine.connect() as probe:
                waiting = await probe.scalar(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                ))
            if waiting or late.done():
                break
            await asyncio.sleep(0.01)
        assert waiting == 1 and not late.done()
    outcome = await asyncio.wait_for(late, timeout=10)
    assert "closed" in outcome.reply.plain().lower() and not outcome.recorded
    async with db.read() as s:
        n = len((await s.execute(select(Answer).where(Answer.post_id == post_id))).scalars().all())
        board = await scores.top(s, Scope.CHANNEL, post.channel_id, None)
        raw = await scores.top(s, Scope.CHANNEL, post.channel_id, None, raw=True)
    assert n == 2 and board == raw and [r.name for r in board] == ["Player 1", "Player 2"]
    await db.dispose()
