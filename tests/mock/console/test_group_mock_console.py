"""Group mocks in the console playground, on the app ``build_app`` wires (as ``serve`` does),
with a fake clock: an admin schedules, lists and cancels; the scheduler's tick posts the
announcement once at its time; two members press Start and get the same questions, timed by
the group's close; at the close their reports go to them and the board is posted once, into
the announcement's thread, names inert. Exact texts throughout."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.commands.dispatch import Caller
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.reveal.posts import order_of
from bot.storage.db import migrate
from bot.storage.models import GroupMockClaim, MockItem, MockSession, Post
from tests.conftest import _in_thread
from tests.support.console_fixtures import Term
from tests.support.mock_console import START, console_of, flat, letter, make_app, say

BEA = Who("console", "playground", "bea", "@everyone <@1> Bea")


@pytest.fixture
async def app(content: Path, tmp_path: Path) -> AsyncIterator[App]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'group.db'}"
    _in_thread(migrate, url)
    built = await make_app(url, content, FakeClock(START))
    yield built
    await built.close()


HOW = ("Say when: mock schedule HH:MM [track] [minutes] (the next HH:MM), or mock schedule YYYY-MM-DD "
       "HH:MM …; times are in the channel's timezone unless you add timezone:Europe/Berlin.")


async def items_of(app: App) -> list[list[tuple[str, str]]]:
    async with app.db.read() as s:
        sessions = list(await s.scalars(select(MockSession).order_by(MockSession.id)))
        return [[(i.kind, i.ref) for i in await s.scalars(
            select(MockItem).where(MockItem.mock_id == m.id).order_by(MockItem.idx))] for m in sessions]


async def press_right(app: App, who: Who, mock_id: int, index: int, right: bool) -> str:
    async with app.db.read() as s:
        item = await s.get(MockItem, (mock_id, index))
        assert item is not None and item.post_id is not None
        post = await s.get(Post, item.post_id)
        assert post is not None
        keyed = order_of(post).index(app.library[post.question_id].answer_index)
    pick = keyed if right else (keyed + 1) % 4
    return (await app.commands.press(who, Action(Verb.MOCK, mock_id, index * 100 + pick).encode())).reply.plain()


async def test_a_group_mock_from_schedule_to_board(app: App, tmp_path: Path) -> None:
    clock = app.drill.clock
    assert isinstance(clock, FakeClock)
    term = Term()
    console = console_of(app, term, tmp_path)
    assert await say(console, term, "mock schedule") == "No group mocks are scheduled in this channel. " + HOW
    assert await say(console, term, "mock schedule 10:30 ml 20") == (
        "Group mock #1 scheduled: ML engineer · 20 min · Wed 04 Mar 10:30 UTC. At that time I post it here "
        "with a Start button; everyone who presses it gets the same 11 questions (8 MCQs, 2 explain-it "
        "questions (self-graded), 1 coding challenge), and the board goes up when it closes at Wed 04 Mar "
        "10:50 UTC. mock cancel 1 cancels it.")
    assert (await say(console, term, "mock schedule 2026-03-05 09:00 research timezone:Europe/Berlin")).startswith(
        "Group mock #2 scheduled: Research engineer · 30 min · Thu 05 Mar 09:00 CET.")
    assert await say(console, term, "mock schedule 9:00 infra 45") == (
        "Group mock #3 scheduled: Training/infra engineer · 45 min · Thu 05 Mar 09:00 UTC. At that time I "
        "post it here with a Start button; everyone who presses it gets the same 11 questions (8 MCQs, "
        "2 explain-it questions (self-graded), 1 coding challenge), and the board goes up when it closes at "
        "Thu 05 Mar 09:45 UTC. mock cancel 3 cancels it.")
    assert await say(console, term, "mock schedule") == (
        "Group mocks in this channel #1 · Wed 04 Mar 10:30 UTC · ML engineer · 20 min · scheduled "
        "#2 · Thu 05 Mar 09:00 CET · Research engineer · 30 min · scheduled "
        "#3 · Thu 05 Mar 09:00 UTC · Training/infra engineer · 45 min · scheduled "
        "mock cancel ID cancels one before it starts.")
    assert await say(console, term, "mock cancel 2") == (
        "Group mock #2 (Thu 05 Mar 09:00 CET) is cancelled; nothing will be posted.")
    assert await say(console, term, "mock cancel 2") == (
        "There is no group mock #2 in this channel; mock schedule lists them.")
    assert await say(console, term, "mock cancel") == (
        "Name the group mock to cancel: mock cancel ID (mock schedule lists them).")
    assert await say(console, term, "mock schedule 10:45 nope") == (
        "There is no track 'nope'. Tracks here: ml (ML engineer), research (Research engineer), "
        "infra (Training/infra engineer).")
    assert await say(console, term, "mock schedule ml") == HOW
    assert await say(console, term, "mock schedule 25:00") == (
        "invalid time '25:00': hours go to 23 and minutes to 59 " + HOW)
    assert await say(console, term, "mock schedule 2026-03-04 09:00") == (
        "Wed 04 Mar 09:00 UTC has passed; pick a time ahead.")
    assert await say(console, term, "mock schedule 2026-05-04 09:00") == (
        "Mon 04 May 09:00 UTC is more than 30 days ahead; schedule it nearer the day.")
    assert await say(console, term, "mock cancel 3") == (
        "Group mock #3 (Thu 05 Mar 09:00 UTC) is cancelled; nothing will be posted.")

    await app.scheduler.tick()  # 10:00: nothing is due
    assert term.take() == ""
    clock.advance(30 * 60)
    await app.scheduler.tick()
    await app.scheduler.tick()  # posted once
    posted = flat(term.take())
    assert posted.startswith("╭─ 🎤 Group mock #1 · ML engineer · 20 min ─")
    assert flat(posted.replace("│", " ")).endswith(
        "Everyone gets the same 11 questions: 8 MCQs, 2 explain-it questions (self-graded), 1 coding "
        "challenge. Press Start for your own private session; every session ends at Wed 04 Mar 10:50 UTC. "
        "The board of this mock appears in this post's thread when it closes. Type start (or 1) "
        + posted.split()[-1])
    assert await say(console, term, "mock cancel 1") == "Group mock #1 has started; it can no longer be cancelled."
    assert await say(console, term, "mock schedule") == (
        "Group mocks in this channel #1 · Wed 04 Mar 10:30 UTC · ML engineer · 20 min · running · "
        "0 members joined mock cancel ID cancels one before it starts.")

    ana = await say(console, term, "start")  # the post's Start, pressed in the playground
    assert ana.startswith("Mock · MCQ 1/8 · Autograd · ★★☆ Which is right about autograd (2)?")
    assert ana.endswith("⏱ 20:00 left · ends 10:50 UTC · item 1/11 · ML engineer")
    clock.advance(60)
    bea = (await app.commands.press(BEA, Action(Verb.JOIN, 1).encode())).reply.plain()
    assert bea.startswith("**Mock · MCQ 1/8 · Autograd · ★★☆**\nWhich is right about autograd (2)?")
    assert bea.endswith("_⏱ 19:00 left · ends 10:50 UTC · item 1/11 · ML engineer_")
    [ana_items, bea_items] = await items_of(app)
    assert ana_items == bea_items and len(ana_items) == 11  # the same questions, in the same order
    again = (await app.commands.press(BEA, Action(Verb.JOIN, 1).encode())).reply.plain()
    assert again.startswith("**Mock · MCQ 1/8 · Autograd · ★★☆**\nYou are in this group mock; here is where you are.\n")

    for _ in range(3):  # ana: 3 right, a minute each
        clock.advance(60)
        await say(console, term, await letter(app, console, right=True))
    for n in range(2):  # bea: 1 right, 1 wrong, then ends early
        clock.advance(30)
        await press_right(app, BEA, 2, n, right=n == 0)
    bea_end = await app.commands.execute_text(Caller(BEA, console.where), "mock", "end")
    assert bea_end.title == "📋 Mock interview report · ML engineer · 20 min"
    late = Who("console", "playground", "cy", "Cy")
    clock.advance(20 * 60)  # 10:54: closed
    assert (await app.commands.press(late, Action(Verb.JOIN, 1).encode())).reply.plain() == (
        "Group mock #1 has closed; its board is in the thread of its post.")
    await app.scheduler.tick()
    told = flat(term.take())
    assert told.startswith("✉ direct message to ana 📋 Mock interview report · ML engineer · 20 min "
                           "⏰ Time ran out at 10:50 UTC. Score: 3/11 (27%) · MCQs 3/8")
    assert flat("""╭─ 🏁 Group mock #1 closed · ML engineer · 20 min""") in told
    assert ("2 members took part · ranked by score, then time: │ │ 🥇 ana — 3/11 (27%) · 20 min │ "
            "│ 🥈 @\u200beveryone <\u200b@1> Bea — 1/11 (9%) · 4 min │") in told
    await app.scheduler.tick()  # the board is posted once
    assert term.take() == ""
    async with app.db.read() as s:
        claims = sorted((c.group_mock_id, c.kind, c.sent_at is not None) for c in await s.scalars(select(GroupMockClaim)))
    assert claims == [(1, "board", True), (1, "post", True)]


TRACKS_FILE = b"""tracks:
  - slug: basics
    name: Fundamentals first
    difficulty: 1
    weights: {tensors: 3, autograd: 1}
    challenges: [one-hot]
"""


async def test_a_community_track_by_name_in_the_playground(app: App, tmp_path: Path) -> None:
    """/bank upload of a tracks file adds the community's track; /mock takes it by name; an
    unknown track lists the built-in and the community's; a broken file says line N."""
    term = Term()
    console = console_of(app, term, tmp_path)
    broken = tmp_path / "broken-tracks.yaml"
    broken.write_bytes(b"tracks:\n  - slug: infra\n    name: x\n    weights: {tensors: 11}\n    challenges: [one-hot]\n")
    assert await say(console, term, f"bank upload {broken}") == (
        "broken-tracks.yaml was not stored: fix these and upload it again line 2: slug: 'infra' is taken "
        "(a built-in track, or a word /mock reads) line 4: weights: tensors's weight must be a whole number "
        "from 1 to 10")
    good = tmp_path / "tracks.yaml"
    good.write_bytes(TRACKS_FILE)
    assert await say(console, term, f"bank upload {good}") == (
        "Tracks stored: 1 of this community's own Members can now take them with /mock (their names show in "
        "its track list); uploading a tracks file again replaces them: basics Fundamentals first · "
        "Tensors 3, Autograd 1")
    assert await say(console, term, "mock frobnicate") == (
        "There is no track 'frobnicate'. Tracks here: ml (ML engineer), research (Research engineer), "
        "infra (Training/infra engineer), basics (Fundamentals first).")
    started = await say(console, term, "mock basics 20")
    assert started.startswith("Mock · MCQ 1/8 · ")
    assert started.endswith("⏱ 20:00 left · ends 10:20 UTC · item 1/11 · Fundamentals first")
    [items] = await items_of(app)
    in_track = [ref for kind, ref in items if kind == "mcq" and app.library[ref].topic in ("tensors", "autograd")]
    assert sorted(in_track) == ["m1-autograd", "m1-tensors", "m2-autograd", "m2-tensors"]  # all the bank has
    assert items[-1] == ("code", "one-hot")


async def test_a_tracks_file_is_refused_when_too_big_a_bomb_or_too_many(app: App) -> None:
    """A stranger's tracks file: at most 200,000 bytes, aliases counted as expanded, at most 20
    tracks; nothing is stored then."""
    from bot.core.domain.messages import Upload

    who = Who("console", "playground", "ana", "ana")
    mocks = app.services.mocks

    async def upload(data: bytes) -> str:
        return (await mocks.upload_tracks(who, Upload("tracks.yaml", data))).plain()

    assert await upload(b"tracks:\n" + b"#" * 200_001) == (
        "**tracks.yaml was not stored: fix these and upload it again**\n```text\n"
        "line 1: The file is 200,009 bytes; an upload may be at most 200,000.\n```")
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{k}: &{k} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n".encode()
        for p, k in zip("abcde", "bcdef", strict=True)) + b"tracks: []\n"
    assert await upload(bomb) == (
        "**tracks.yaml was not stored: fix these and upload it again**\n```text\nline 5: expands to more "
        "than 50,000 values (anchors and aliases multiply); write the questions out\n```")
    many = b"tracks:\n" + b"".join(
        f"  - {{slug: t{n}, name: T{n}, weights: {{tensors: 1}}, challenges: [one-hot]}}\n".encode()
        for n in range(21))
    assert await upload(many) == (
        "**tracks.yaml was not stored: fix these and upload it again**\n```text\n"
        "line 1: 21 tracks; a community may have at most 20\n```")
    assert await mocks.community_track_list(who) == []
