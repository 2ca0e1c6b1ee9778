"""A PostgreSQL restart during a burst of clicks loses none of them: transient errors
(connection lost, cannot connect now, admin shutdown) retry the whole transaction.

The restart is of a private cluster (initdb in a temporary directory, its own port), so the
shared server other tests use is never touched.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from bot.core.actions import Action, Verb
from bot.core.identity import Where, Who
from bot.core.service import Drill
from bot.storage.db import Database, is_transient, migrate
from bot.storage.models import Answer
from tests.conftest import RecordingPublisher, make_library

BIN = Path("/usr/lib/postgresql/15/bin")
pytestmark = pytest.mark.skipif(
    not (BIN / "pg_ctl").exists() or shutil.which("runuser") is None or os.geteuid() != 0,
    reason="needs PostgreSQL 15 server binaries and root (to run them as postgres)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, root: Path) -> None:
        self.data = root / "data"
        self.port = _free_port()
        self.url = f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str, timeout: float = 30) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(BIN / "pg_ctl"), "-D", str(self.data), "-w",
             "-t", "20", *args],
            check=True, capture_output=True, timeout=timeout,
        )

    def init(self) -> None:
        self.data.parent.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.data.parent, "postgres")
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(BIN / "initdb"), "-D", str(self.data),
             "-A", "trust", "-U", "postgres", "--no-sync"],
            check=True, capture_output=True, timeout=60,
        )
        self.start()

    def start(self) -> None:
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data} -c fsync=off"
        self._ctl("-o", opts, "-l", str(self.data / "log"), "start")

    def restart(self) -> None:
        self._ctl("-m", "fast", "-l", str(self.data / "log"), "restart")

    def stop(self) -> None:
        self._ctl("-m", "immediate", "stop")


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = Path("/tmp") / f"td-pg-{os.getpid()}-{random.randrange(10**6)}"
    c = Cluster(root)
    try:
        c.init()
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"cannot start a private PostgreSQL cluster: {exc}")
    try:
        yield c
    finally:
        try:
            c.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


async def test_restart_during_a_burst_of_clicks_loses_no_click(cluster: Cluster, caplog) -> None:
    await asyncio.to_thread(migrate, cluster.url)
    db = Database(cluster.url)
    drill = Drill(db, make_library(), rng=random.Random(2))
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
    cluster.stop()
    t0 = time.monotonic()
    with pytest.raises(Exception) as caught:
        await db.transaction(broken, budget_s=0.5)  # the server stays down: bounded
    assert is_transient(caught.value) and time.monotonic() - t0 < 5 and calls == 1
    await db.dispose()
    cluster.start()  # the fixture stops it again
    assert not is_transient(OperationalError("SELECT 1", {}, Exception("syntax error")))
