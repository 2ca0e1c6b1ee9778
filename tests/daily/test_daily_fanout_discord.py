"""Many channels at the same minute against a fake Discord that rate-limits like Discord: the
global budget pushes back with 429s and every channel still gets its question exactly once."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.daily_fanout import fire_dailies, sweep_until_settled
from tests.support.discord_fixtures import StartAdapter, discord_channels_due_at_nine
from tests.support.fake_discord import FakeDiscord, buttons_of

pytestmark = pytest.mark.platform("discord")

CHANNELS = 24
SWEEPS = 10


async def test_a_global_limit_below_our_pace_delays_posts_and_loses_none(
    app: App, fake: FakeDiscord, start_adapter: StartAdapter, discord_clock: FakeClock
) -> None:
    fake.global_per_s = 6  # tighter than the bot's own pace: Discord answers 429 (global)
    async with discord_channels_due_at_nine(app, fake, start_adapter, discord_clock, CHANNELS) as channels:
        await fire_dailies(app, "discord", 120)
        await sweep_until_settled(app, SWEEPS, 120)
    assert any(is_global for _, _, is_global in fake.throttled)
    questions = {c: [m for m in fake.in_channel(c) if buttons_of(m)] for c in channels}
    assert {c: len(q) for c, q in questions.items()} == dict.fromkeys(channels, 1)
    assert app.scheduler.detail()["missed"] == 0
