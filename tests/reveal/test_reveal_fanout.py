"""Reveals due at the same moment against a fake Discord that rate-limits like Discord: they run
concurrently but bounded, each post is revealed exactly once (even with two sweeps at once), and
a 429 loses none."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.posting.fanout import REVEAL_WORKERS
from tests.support.daily_fanout import fire_dailies
from tests.support.discord_fixtures import NINE, StartAdapter, discord_channels_due_at_nine
from tests.support.fake_discord import FakeDiscord, buttons_of, text_of

pytestmark = pytest.mark.platform("discord")

CHANNELS = 20


async def test_reveals_due_at_once_run_bounded_and_each_post_is_revealed_once_despite_429s(
    app: App, fake: FakeDiscord, start_adapter: StartAdapter, discord_clock: FakeClock
) -> None:
    async with discord_channels_due_at_nine(app, fake, start_adapter, discord_clock, CHANNELS) as channels:
        await fire_dailies(app, "discord", 60)
        questions = {c: [m for m in fake.in_channel(c) if buttons_of(m)] for c in channels}
        assert {c: len(q) for c, q in questions.items()} == dict.fromkeys(channels, 1)

        fake.global_per_s = 10  # below the reveals' own pace: Discord answers 429 (global)
        discord_clock.set(NINE + timedelta(hours=13))
        drill, publisher = app.daily.drill, app.daily.publisher
        # two sweeps at the same moment (a tick and a posting worker): still one reveal each
        counts = await asyncio.wait_for(
            asyncio.gather(drill.reveal_due(publisher), drill.reveal_due(publisher)), 60)
    assert counts == [CHANNELS, CHANNELS]
    assert any(is_global for _, _, is_global in fake.throttled)
    assert 2 <= drill.reveals.peak <= REVEAL_WORKERS
    for channel in channels:
        question = questions[channel][0]
        mid = int(question["id"])
        assert _accepted(fake, "PATCH", f"/channels/{channel}/messages/{mid}") == 1
        revealed = fake.messages[mid]
        assert [b["label"] for b in buttons_of(revealed)] == ["🚩 Report"]  # the answers' buttons gone
        assert "0 answered · 0% correct" in text_of(revealed)
        assert _accepted(fake, "POST", f"/channels/{channel}/messages/{mid}/threads") == 1
        explanations = fake.in_channel(mid)  # the thread's id is its message's
        assert [text_of(m).startswith("\nExplanation\n**Why:** ") for m in explanations] == [True]


def _accepted(fake: FakeDiscord, method: str, path: str) -> int:
    """Requests to exactly ``path`` that were not answered 429."""
    sent = [r for r in fake.sent(method, path) if r.path.rstrip("/") == path]
    return len(sent) - sum(1 for m, p, _ in fake.throttled if m == method and p.rstrip("/") == path)
