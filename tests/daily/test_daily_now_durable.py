"""/daily now records today's claim before the adapter acknowledges: a process killed right
after the acknowledgement leaves a claim that recovery finishes — one post, not zero."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import build_app
from bot.config import Settings
from bot.core.commands.dispatch import Caller
from bot.core.daily.service import CLAIM_LEASE
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.storage.db import migrate
from bot.storage.models import DailyClaim
from tests.conftest import RecordingPublisher

HERE = Where("chat", "w1", "c1", "one")
ADMIN = Caller(Who("chat", "w1", "u1", "Ada"), HERE, is_admin=True)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'd.db'}"
    migrate(url)
    return url


async def test_a_crash_after_the_ack_is_finished_by_recovery(db_url: str) -> None:
    clock = FakeClock(datetime(2026, 3, 4, 10, 0, tzinfo=UTC))
    app = await build_app(Settings(database_url=db_url), clock=clock, with_runner=False)
    publisher = RecordingPublisher()
    app.publisher.register("chat", publisher)
    try:
        await app.commands.prepare_text(ADMIN, "daily", "now")  # the adapter acks here, then dies
        async with app.db.read() as session:
            [claim] = (await session.scalars(select(DailyClaim))).all()
        assert claim.sent_at is None and not publisher.posts
        clock.advance(CLAIM_LEASE.total_seconds() + 1)
        assert len(await app.daily.recover_unsent()) == 1
        assert len(publisher.posts) == 1 and "Daily question" in (publisher.posts[0][1].title or "")
        assert await app.daily.recover_unsent() == []
        again = await app.commands.execute_text(ADMIN, "daily", "now")
        assert "extra" in again.plain().lower()  # today's is out: the truth, then an extra one
    finally:
        await app.close()


async def test_a_member_who_is_not_admin_claims_nothing(db_url: str) -> None:
    app = await build_app(Settings(database_url=db_url), with_runner=False)
    try:
        member = Caller(Who("chat", "w1", "u2", "Bo"), HERE, is_admin=False)
        reply = await (await app.commands.prepare_text(member, "daily", "now")).finish()
        assert "can use /daily now" in reply.plain()
        async with app.db.read() as session:
            assert not (await session.scalars(select(DailyClaim))).all()
    finally:
        await app.close()
