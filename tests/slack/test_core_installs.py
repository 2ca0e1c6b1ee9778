"""A workspace that removes the bot, in the core (issue 21: mutation survivors of
bot/core/drill/installs.py, reached before only by the Slack OAuth and CLI tests that the
mutation selection leaves out): removal pauses exactly that workspace's running schedules and
says so once; a purge deletes exactly that workspace and counts what it removed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from bot.app import build_daily
from bot.core.domain.identity import Where, Who
from bot.core.drill.installs import Purged, stop_workspace
from bot.storage.db import Database
from bot.storage.identity import member_ref
from bot.storage.models import Answer, Channel, Member, Schedule, Workspace
from bot.storage.workspaces import StoredWorkspaces, purge_workspace
from tests.support.group_boards import answer_post
from tests.support.reveal import C1, C2

T1 = [Where("slack", "T1", f"C{i}", f"c{i}") for i in range(1, 4)]
OTHER_TEAM = Where("slack", "T2", "C1", "c1")
OTHER_PLATFORM = Where("discord", "T1", "C1", "c1")  # same external id, another platform


def test_what_a_purge_says() -> None:
    assert Purged("T9", 0, 0, 0).describe() == "nothing stored for workspace T9"
    assert Purged("T1", 3, 2, 7, existed=True).describe() == (
        "purged workspace T1: 3 members, 2 channels, 7 answers")
    assert Purged("T1", 0, 0, 0, existed=True).describe() == (
        "purged workspace T1: 0 members, 0 channels, 0 answers")


async def _paused(db: Database) -> dict[tuple[str, str, str], tuple[bool, datetime]]:
    async with db.read() as session:
        found = await session.execute(
            select(Workspace.platform, Workspace.external_id, Channel.channel_id, Schedule.paused,
                   Schedule.updated_at)
            .join(Channel, Channel.id == Schedule.channel_id).join(Workspace, Workspace.id == Channel.workspace_id))
        return {(p, w, c): (paused, at.replace(tzinfo=None)) for p, w, c, paused, at in found}


async def test_removal_pauses_that_workspaces_running_schedules_once(drill, publisher) -> None:
    changes: list[int] = []

    async def changed() -> None:
        changes.append(1)

    daily = build_daily(drill, publisher, on_change=changed)
    for where in (*T1, OTHER_TEAM, OTHER_PLATFORM):
        await daily.set_schedule(where, at="09:00")
    await daily.set_paused(T1[2], True)
    set_up = drill.clock.now().replace(tzinfo=None)
    changes.clear()
    drill.clock.advance(3600)
    removed = drill.clock.now().replace(tzinfo=None)
    assert await stop_workspace(StoredWorkspaces(drill.db), daily, "slack", "T1") == 2
    assert changes == [1]  # the scheduler rebuilds once
    assert await _paused(drill.db) == {
        ("slack", "T1", "C1"): (True, removed), ("slack", "T1", "C2"): (True, removed),
        ("slack", "T1", "C3"): (True, set_up),  # paused before: left as it was
        ("slack", "T2", "C1"): (False, set_up), ("discord", "T1", "C1"): (False, set_up)}
    assert await stop_workspace(StoredWorkspaces(drill.db), daily, "slack", "T1") == 0  # nothing running any more
    assert await stop_workspace(StoredWorkspaces(drill.db), daily, "slack", "T404") == 0
    assert changes == [1]


async def _count(db: Database, model: type) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def test_a_purge_deletes_exactly_that_workspace_and_counts_it(drill, publisher) -> None:
    await answer_post(drill, publisher, C1, {1: True, 2: False})
    await answer_post(drill, publisher, C2, {1: True, 3: True})
    elsewhere = Where("discord", "g2", "c9", "other")
    await answer_post(drill, publisher, elsewhere, {})
    async with drill.db.write() as session:  # same external id on another platform
        await member_ref(session, Who("slack", "g1", "u1", "Sam"), drill.clock)
    before = [await _count(drill.db, m) for m in (Workspace, Member, Channel, Answer)]
    assert before == [3, 4, 3, 4]
    unknown = await purge_workspace(drill.db, "discord", "g404")
    assert unknown == Purged("g404", 0, 0, 0, existed=False)
    quiet = await purge_workspace(drill.db, "slack", "g1")  # a member, nothing else
    assert quiet == Purged("g1", 1, 0, 0, existed=True)
    assert quiet.describe() == "purged workspace g1: 1 member, 0 channels, 0 answers"
    assert [await _count(drill.db, m) for m in (Workspace, Member, Channel, Answer)] == [2, 3, 3, 4]
    purged = await purge_workspace(drill.db, "discord", "g1")
    assert purged == Purged("g1", 3, 2, 4, existed=True)
    assert purged.describe() == "purged workspace g1: 3 members, 2 channels, 4 answers"
    assert [await _count(drill.db, m) for m in (Workspace, Member, Channel, Answer)] == [1, 0, 1, 0]
    async with drill.db.read() as session:
        left = (await session.execute(select(Workspace.platform, Workspace.external_id))).all()
    assert [tuple(r) for r in left] == [("discord", "g2")]
    again = await purge_workspace(drill.db, "discord", "g1")
    assert again.describe() == "nothing stored for workspace g1"
