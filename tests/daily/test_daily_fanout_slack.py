"""Many channels at the same minute against a fake Slack that rate-limits like Slack: 429s
with Retry-After beyond the client's own retries, and still one question per channel."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.adapters.slack.app import SlackAdapter
from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where
from tests.support.daily_fanout import fire_dailies, sweep_until_settled
from tests.support.fake_slack import FakeSlack, buttons_of

pytestmark = pytest.mark.platform("slack")

CHANNELS = 10
SWEEPS = 10


async def test_429s_past_the_clients_retries_lose_no_post(
    app: App, fake: FakeSlack, adapter: SlackAdapter, slack_clock: FakeClock
) -> None:
    slack_clock.set(datetime(2026, 3, 4, 8, 59, tzinfo=UTC))
    channels = [f"C{i:04d}" for i in range(CHANNELS)]
    for channel in channels:
        await app.daily.set_schedule(Where("slack", fake.team_id, channel, channel.lower()),
                                     at="09:00", timezone="UTC", weekdays="daily")
    await app.start()
    fake.rate_limits["chat.postMessage"] = [1] * 6  # Slack pushes back: more 429s than retries
    try:
        slack_clock.set(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
        await fire_dailies(app, "slack", 60)
        await sweep_until_settled(app, SWEEPS, 60)
    finally:
        await app.close()
    assert fake.rate_limits["chat.postMessage"] == []  # every forced 429 was met
    questions = {c: [m for m in fake.in_channel(c) if buttons_of(m)] for c in channels}
    assert {c: len(q) for c, q in questions.items()} == dict.fromkeys(channels, 1)
