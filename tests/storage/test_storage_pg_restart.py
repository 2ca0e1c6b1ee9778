"""A PostgreSQL restart during a burst of clicks loses none of them: transient errors
(connection lost, cannot connect now, admin shutdown) retry the whole transaction.

The restart is of a private cluster (initdb in a temporary directory, its own port), so the
shared server other tests use is never touched.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError

from bot.app import build_drill
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.storage.db import Database, is_transient, migrate
from bot.storage.models import Answer
from tests.conftest import RecordingPublisher, make_library
from tests.support.pg_cluster import Cluster, needs_server_binaries, private_cluster

pytestmark = [needs_server_binaries, pytest.mark.not_for_mutation]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    yield from private_cluster()


async def test_restart_during_a_burst_of_clicks_loses_no_click(cluster: Cluster, caplog) -> None:
    await asyncio.to_thread(migrate, cluster.url)
    db = Database(cluster.url)
    drill = build_drill(db, make_library(), rng=random.Random(2))
    where = Where("discord", "g", "c")
    post_id = (await drill.ask(where, RecordingPublisher(), kind="daily")).post_id
    members = [Who("discord", "g", f"u{i}", f"U{i}") for i in range(240)]
    restarted = asyncio.Event()
    errors: list[BaseException] = []
    replies: list[str] = []
    progress: list[int] = []  # clicks answered when the restart began and when it ended

    async def click(who: Who) -> None:
        try:
            outcome = await drill.handle_action(who, Action(Verb.PICK, post_id, 0).encode())
            replies.append(outcome.reply.plain())
        except Exception as exc:  # a lost click
            errors.append(exc)

    async def clicks() -> None:
        queue = list(members)
        async def client() -> None:
            while queue:
                await click(queue.pop())
                await asyncio.sleep(0.005)  # a stream of clicks, before, during and after
        await asyncio.gather(*(client() for _ in range(6)))

    async def restart() -> None:
        await asyncio.sleep(0.15)
        progress.append(len(replies))
        t0 = time.monotonic()
        await asyncio.to_thread(cluster.restart)
        progress.append(len(replies))
        restarted.set()
        assert time.monotonic() - t0 < 30

    await asyncio.wait_for(asyncio.gather(clicks(), restart()), timeout=90)
    assert restarted.is_set()
    assert 0 < progress[0] <= progress[1] < len(members)  # the restart came mid-burst
    assert "retrying the transaction" in caplog.text  # and clicks did meet it
    assert errors == []
    assert len(replies) == len(members) and not any("went wrong" in r for r in replies)
    async with db.read() as s:
        recorded = await s.scalar(select(func.count()).select_from(Answer).where(Answer.post_id == post_id))
    assert recorded == len(members)
    await db.dispose()


async def test_only_transient_errors_are_retried(cluster: Cluster) -> None:
    db = Database(cluster.url)
    calls = 0

    async def broken(session) -> None:
        nonlocal calls
        calls += 1
        raise ValueError("a bug, not the database")

    with pytest.raises(ValueError):
        await db.transaction(broken)
    assert calls == 1
    touched = 0

    async def touch(session) -> None:
        nonlocal touched
        touched += 1
        await session.execute(text("SELECT 1"))

    await db.transaction(touch)  # a pooled connection, then the server goes away
    cluster.stop()
    t0 = time.monotonic()
    with pytest.raises(Exception) as caught:
        await db.transaction(touch, budget_s=0.5)  # the server stays down: bounded
    assert is_transient(caught.value) and time.monotonic() - t0 < 5
    assert 1 < touched < 10  # retried, a bounded number of times
    await db.dispose()
    cluster.start()  # the fixture stops it again
    assert not is_transient(OperationalError("SELECT 1", {}, Exception("syntax error")))


async def test_clicks_work_again_once_the_server_is_back_after_their_first_attempt_failed(
    cluster: Cluster,
) -> None:
    """The raw click writes' pool is made at the first click; made while the server is down,
    it failed, and the next clicks (the server back) must make it again, not fail for ever."""
    await asyncio.to_thread(migrate, cluster.url)
    setup = build_drill(Database(cluster.url), make_library(), rng=random.Random(3))
    where = Where("discord", "g", "c")
    post_id = (await setup.ask(where, RecordingPublisher(), kind="daily")).post_id
    members = [Who("discord", "g", f"u{i}", f"U{i}") for i in range(2)]
    for who in members:  # known members: their next picks take the raw path
        await setup.handle_action(who, Action(Verb.PICK, (await setup.ask(where, RecordingPublisher(),
                                                                          kind="daily")).post_id, 0).encode())
    await setup.db.dispose()

    db = Database(cluster.url)  # a fresh process: no raw pool yet
    drill = build_drill(db, make_library(), rng=random.Random(3))
    cluster.stop()
    with pytest.raises(Exception) as caught:  # after the retry budget (10 s)
        await asyncio.wait_for(drill.handle_action(members[0], Action(Verb.PICK, post_id, 1).encode()), 30)
    assert is_transient(caught.value)
    cluster.start()
    reply = await asyncio.wait_for(drill.handle_action(members[1], Action(Verb.PICK, post_id, 1).encode()), 30)
    assert "went wrong" not in reply.reply.plain() and reply.recorded
    assert db._hot_pool is not None and db._hot_pool.done() and db._hot_pool.exception() is None
    await db.dispose()
