"""An interview date (`mock date 2027-01-15`) in the console playground, on the app
``build_app`` wires, with a fake clock: the replies, the countdown in /stats and the mock
report, the suggested next mock, and reviews due after the date brought to its eve (at once,
and by the scheduler's tick for cards reviewed later)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from sqlalchemy import select

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.mock.interview import eve, next_mock
from bot.storage.models import Member, SrsCard
from tests.support.console_fixtures import Term
from tests.support.mock_console import console_of, quiz_all_right, say


async def mature(app: App, question_id: str, due: datetime) -> None:
    """A card FSRS scheduled far out (a mature card), without weeks of fake reviews."""
    async with app.drill.db.write() as s:
        member_id = await s.scalar(select(Member.id).where(Member.user_id == "ana"))
        card = await s.get(SrsCard, (member_id, question_id))
        assert card is not None
        card.due = due


async def dues(app: App) -> list[datetime]:
    async with app.drill.db.read() as s:
        return [c.due.replace(tzinfo=UTC) for c in await s.scalars(select(SrsCard))]


def test_the_next_mock_is_weekly_then_every_three_days_and_before_the_day() -> None:
    d = datetime(2026, 3, 4).date
    assert next_mock(d(), datetime(2026, 4, 4).date(), None) == d()
    assert next_mock(d(), datetime(2026, 4, 4).date(), datetime(2026, 3, 1).date()) == datetime(2026, 3, 8).date()
    assert next_mock(d(), datetime(2026, 3, 14).date(), datetime(2026, 3, 3).date()) == datetime(2026, 3, 6).date()
    assert next_mock(d(), datetime(2026, 3, 6).date(), datetime(2026, 3, 4).date()) == datetime(2026, 3, 5).date()
    assert next_mock(d(), datetime(2026, 3, 5).date(), None) == d()
    assert next_mock(d(), d(), None) is None


async def test_an_interview_date_counts_down_and_brings_reviews_before_it(
    app: App, clock: FakeClock, tmp_path: Path
) -> None:
    term = Term()
    console = console_of(app, term, tmp_path)
    how = "Give the date as YYYY-MM-DD, e.g. mock date 2027-01-15 (or mock date clear)."
    assert await say(console, term, "mock date") == f"You have no interview date set. {how}"
    assert await say(console, term, "mock date 2026-02-30") == f"'2026-02-30' is not a date. {how}"
    assert await say(console, term, "mock date 2026-03-04") == f"2026-03-04 is not in the future. {how}"
    assert await say(console, term, "mock date 2030-01-01") == f"2030-01-01 is more than two years away. {how}"
    await quiz_all_right(app, console, term, clock, 6)
    await mature(app, "m1-autograd", datetime(2026, 4, 1, tzinfo=UTC))  # a card FSRS put weeks out
    assert await say(console, term, "mock date 2026-03-14") == (
        "📅 Interview date set: Sat 14 Mar 2026. Reviews due after it are brought to the day before, so "
        "what you know peaks on the day; /stats and your mock reports count down. "
        "📅 Interview in 10 days (Sat 14 Mar 2026). Suggested next mock: today (mock).")
    day_before = eve(date(2026, 3, 14))
    assert day_before == datetime(2026, 3, 13, tzinfo=UTC)
    assert max(await dues(app)) == day_before  # brought to the eve at once
    await mature(app, "m2-losses", datetime(2026, 5, 1, tzinfo=UTC))  # a review after the date was set
    await app.scheduler.tick()  # the tick brings it in line too
    assert max(await dues(app)) == day_before
    assert await say(console, term, "mock date") == f"📅 Interview in 10 days (Sat 14 Mar 2026). {how}"
    assert "Streak 0 (best 0). 📅 Interview in 10 days (Sat 14 Mar 2026). Suggested next mock: today (mock). " \
           "attached: stats.png" in await say(console, term, "stats")
    await say(console, term, "mock ml 10")
    report = await say(console, term, "mock end")
    assert ("Readiness (expected share right on a difficulty-3 question): too little data before → too little "
            "data after 📅 Interview in 10 days (Sat 14 Mar 2026). Next steps: review brings back the 9 misses "
            "(now in your spaced-repetition deck); drill your weakest topics: Autograd, Datasets and DataLoader "
            "(quiz autograd); suggested next mock: Sat 7 Mar 2026 (mock).") in report
    clock.advance(7 * 86400)  # the last days: every three days, and missed ones now
    assert "📅 Interview in 3 days (Sat 14 Mar 2026). Suggested next mock: today (mock)." in (
        await say(console, term, "stats"))
    await mature(app, "m1-losses", datetime(2026, 5, 1, tzinfo=UTC))
    clock.advance(2 * 86400)  # the eve: reviews are scheduled as usual from here
    await app.scheduler.tick()
    assert max(await dues(app)) == datetime(2026, 5, 1, tzinfo=UTC)
    clock.advance(86400)
    assert "Streak 0 (best 0). 📅 Your interview is today (Sat 14 Mar 2026). Good luck! 🎤 Mock interviews" in (
        await say(console, term, "stats"))
    assert await say(console, term, "mock date clear") == (
        "📅 Interview date cleared; reviews are scheduled as usual again.")
    assert "📅" not in await say(console, term, "stats")
