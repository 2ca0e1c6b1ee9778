"""The weekly digest survives a restart like the challenge post: a claim taken and the process
dead before the platform accepted gives one digest after recovery; dead after it accepted, the
digest is found in the channel, not posted twice."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.app import build_daily, weekly_posting
from bot.core.weekly.service import WeeklyKind
from bot.storage.identity import channel_row
from bot.storage.models import WeeklyClaim
from tests.support.weekly_digest import HERE, two_weeks
from tests.support.weekly_platform import BANK, Platform


async def _digest_week(drill, publisher, platform: Platform) -> int:
    """Two weeks of answers, a digest on Mondays 09:00 UTC, the clock on Mon 16 Mar 10:00."""
    await two_weeks(drill, publisher)
    await build_daily(drill, platform).set_schedule(HERE, at="09:00", timezone="UTC")
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "mon", "09:00")
    drill.clock.advance(days=6, hours=20)
    async with drill.db.write() as session:
        return (await channel_row(session, HERE)).id


def _digests(platform: Platform) -> list[str]:
    return [text for text in platform.posts() if "Weekly digest · week of Mon 09 Mar" in text]


async def test_a_crash_before_the_digest_was_accepted_gives_one_digest_after_recovery(drill, publisher):
    platform = Platform()
    pk = await _digest_week(drill, publisher, platform)
    first = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    platform.fail_before_accept = True
    with pytest.raises(ConnectionError):
        await first.fire(pk, WeeklyKind.DIGEST)
    assert platform.posts() == []
    restarted = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    assert await restarted.fire(pk, WeeklyKind.DIGEST) is None  # the week's claim stands
    assert await restarted.catch_up() == []  # nor does a restart's catch-up claim it again
    drill.clock.advance(seconds=1)
    assert len(await restarted.recover_unsent()) == 1
    [text] = _digests(platform)
    assert "🔥 **Longest streaks:** Player 3 2" in text
    assert len(platform.messages[0][1].attachments) == 1  # the chart came with it
    assert await restarted.recover_unsent() == []
    assert len(platform.posts()) == 1


async def test_a_crash_after_the_digest_was_accepted_is_found_not_reposted(drill, publisher):
    platform = Platform()
    pk = await _digest_week(drill, publisher, platform)
    first = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    platform.die_after_accept = True
    with pytest.raises(TimeoutError):
        await first.fire(pk, WeeklyKind.DIGEST)
    assert len(_digests(platform)) == 1
    drill.clock.advance(minutes=6)  # past the lease: another replica recovers the claim
    other = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    assert len(await other.recover_unsent()) == 1
    assert len(_digests(platform)) == 1 and len(platform.posts()) == 1
    async with drill.db.read() as session:
        row = await session.scalar(select(WeeklyClaim).where(WeeklyClaim.kind == WeeklyKind.DIGEST.value))
        assert row is not None and row.sent_at is not None and row.platform_ref == "m1"
