"""Weekly-streak mode in the console: `daily streak weekly 2`, then the streak line after an
answer to today's question."""

from __future__ import annotations

import pytest

from tests.support.console_fixtures import Term, say

pytestmark = pytest.mark.platform("console")


async def test_weekly_streaks_in_the_console(console, term: Term) -> None:
    shown = await say(console, term, "daily streak weekly 2")
    assert "Streaks here count weeks: a week counts when a member answers at least 2 of its" in shown
    await say(console, term, "today")
    shown = await say(console, term, "a")
    assert "🔥 Weekly streak: 0 · 1 of 2 this week" in shown
    shown = await say(console, term, "daily streak")
    assert "Streaks here count weeks" in shown and "start again" not in shown
