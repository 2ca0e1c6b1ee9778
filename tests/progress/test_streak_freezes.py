"""Streaks that forgive, end to end through the fake Discord: a week of right answers earns a
freeze, a missed daily question spends it and the streak carries on; /stats says so."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.scoring import FREEZE_EVERY, MAX_FREEZES, StreakState, settle_streak
from tests.support.discord_fixtures import StartAdapter, correct_position
from tests.support.fake_discord import FakeDiscord, User, buttons_of, text_of

pytestmark = pytest.mark.platform("discord")

ALICE = User(800_000_000_000_000_001, "alice")
BOB = User(800_000_000_000_000_002, "bob")


def test_freezes_are_earned_banked_spent_on_absence_only() -> None:
    s = StreakState()
    for post in range(1, 2 * FREEZE_EVERY + 1):
        s = settle_streak(s, post_id=post, previous_post_id=post - 1 or None, correct=True)
    assert (s.current, s.freezes) == (14, 2)
    for post in range(15, 15 + FREEZE_EVERY):
        s = settle_streak(s, post_id=post, previous_post_id=post - 1, correct=True)
    assert s.freezes == MAX_FREEZES  # never more banked
    missed = settle_streak(s, post_id=22, previous_post_id=21, correct=False, missed=True)
    assert (missed.current, missed.last_post_id, missed.freezes, missed.freezes_used) == (21, 22, 1, 1)
    nxt = settle_streak(missed, post_id=23, previous_post_id=22, correct=True)
    assert (nxt.current, nxt.best) == (22, 22)
    wrong = settle_streak(nxt, post_id=24, previous_post_id=23, correct=False)  # answered wrong
    assert (wrong.current, wrong.freezes, wrong.freezes_used) == (0, 1, 1)
    empty = StreakState(current=3, best=3, last_post_id=5)
    assert settle_streak(empty, post_id=6, previous_post_id=5, correct=False, missed=True).current == 0


async def _day(fake: FakeDiscord, app: App, clock: FakeClock, answer: bool) -> None:
    """One day: the daily question, Alice answers it right (or not at all), Bob answers, reveal."""
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    assert "Posted today's question" in text_of(await fake.original_of(token))
    [question] = [m for m in fake.in_channel(fake.channel_id)  # open ones: a revealed post keeps only 🚩
                  if any(b["custom_id"].startswith("td:a:") for b in buttons_of(m))]
    buttons = buttons_of(question)
    right = await correct_position(app, int(buttons[0]["custom_id"].split(":")[2]))
    members = [ALICE, BOB] if answer else [BOB]
    for user in members:
        token = await fake.click(int(question["id"]), buttons[right]["custom_id"], user)
        assert "Correct" in text_of(await fake.original_of(token))
    clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1


async def stats_text(fake: FakeDiscord, user: User) -> str:
    token = await fake.slash("stats", user)
    return text_of(await fake.original_of(token))


async def test_a_week_earns_a_freeze_that_covers_a_missed_day(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    for _ in range(FREEZE_EVERY - 1):
        await _day(fake, app, discord_clock, answer=True)
    assert "streak **6** (best 6) ·" not in await stats_text(fake, ALICE)  # nothing earned yet
    await _day(fake, app, discord_clock, answer=True)
    assert "streak **7** (best 7) · 🧊 1 freeze banked\n" in await stats_text(fake, ALICE)
    await _day(fake, app, discord_clock, answer=False)  # Alice misses a day: the freeze covers it
    assert "streak **7** (best 7) · 🧊 0 freezes banked, 1 used\n" in await stats_text(fake, ALICE)
    await _day(fake, app, discord_clock, answer=True)
    assert "streak **8** (best 8) · 🧊 0 freezes banked, 1 used\n" in await stats_text(fake, ALICE)
    await _day(fake, app, discord_clock, answer=False)  # nothing banked: the streak ends
    assert "streak **0** (best 8) · 🧊 0 freezes banked, 1 used\n" in await stats_text(fake, ALICE)
    assert "streak **10** (best 10) · 🧊 1 freeze banked\n" in await stats_text(fake, BOB)
