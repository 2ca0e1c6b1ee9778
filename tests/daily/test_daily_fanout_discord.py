"""Many channels at the same minute against a fake Discord that rate-limits like Discord: the
global budget pushes back with 429s and every channel still gets its question exactly once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import FakeDiscord, buttons_of

pytestmark = pytest.mark.platform("discord")

CHANNELS = 24
SWEEPS = 10


async def test_a_global_limit_below_our_pace_delays_posts_and_loses_none(
    app: App, fake: FakeDiscord, start_adapter: StartAdapter, discord_clock: FakeClock
) -> None:
    fake.global_per_s = 6  # tighter than the bot's own pace: Discord answers 429 (global)
    discord_clock.set(datetime(2026, 3, 4, 8, 59, tzinfo=UTC))
    channels = [fake.channel_id + i for i in range(CHANNELS)]
    fake.channels.update(channels)
    for i, channel in enumerate(channels):
        await app.daily.set_schedule(Where("discord", str(fake.guild_id), str(channel), f"room-{i}"),
                                     at="09:00", timezone="UTC", weekdays="daily")
    await start_adapter()
    await app.start()
    try:
        discord_clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
        pks = [v.channel_pk for v in await _schedules(app)]
        for pk in pks:  # what each channel's cron job does at 09:00
            await app.scheduler.fire_daily(pk, "discord")
        await app.scheduler.queue.drained(120)
        for _ in range(SWEEPS):  # the periodic sweep: what a 429 cost is queued again
            await app.scheduler.sweep()
            if not app.scheduler.queue.pending():
                break
            await app.scheduler.queue.drained(120)
    finally:
        await app.close()
    assert any(is_global for _, _, is_global in fake.throttled)
    questions = {c: [m for m in fake.in_channel(c) if buttons_of(m)] for c in channels}
    assert {c: len(q) for c, q in questions.items()} == dict.fromkeys(channels, 1)
    assert app.scheduler.detail()["missed"] == 0


async def _schedules(app: App):
    return await app.daily.schedules.all()
