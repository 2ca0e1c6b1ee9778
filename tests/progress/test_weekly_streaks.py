"""Weekly-streak mode, end to end through the fake Discord: an admin sets `/daily streak weekly 2`
in a channel; a week counts when a member answers 2 of its daily questions (right or wrong);
the answer reply, /stats and the streak role all read weeks; a week missed ends the streak.
The rules themselves (freezes covering a missed week, short weeks, late reveals) are checked on
``scoring.settle_week`` directly."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.scoring import (
    MAX_FREEZES,
    WEEKLY_FREEZE_EVERY,
    StreakLine,
    StreakState,
    monday_of,
    settle_week,
    shown_weeks,
    streak_mode_text,
)
from bot.core.weekly.digest import digest_message, weekly_digest
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.models import Channel
from tests.support.discord_fixtures import StartAdapter, correct_position
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of
from tests.support.weekly_streaks import DAYS, RESTART, WEEKS

pytestmark = pytest.mark.platform("discord")

ALICE = User(800_000_000_000_000_001, "alice")
BOB = User(800_000_000_000_000_002, "bob")


def test_a_week_counts_at_enough_answers_and_a_freeze_covers_a_missed_one() -> None:
    w = [date(2026, 3, 2) + timedelta(weeks=i) for i in range(12)]  # Mondays
    posts = {week: 5 for week in w}
    s = settle_week(StreakState(), post_id=1, week=w[0], per_week=3, answered=2, posts=posts)
    assert (s.current, s.week_done) == (0, False)
    s = settle_week(s, post_id=2, week=w[0], per_week=3, answered=3, posts=posts)
    assert (s.current, s.best, s.week_done) == (1, 1, True)
    assert settle_week(s, post_id=3, week=w[0], per_week=3, answered=4, posts=posts) == (
        StreakState(1, 1, 3, week_of=w[0], week_answers=4, week_done=True))  # counted once
    for i in range(1, WEEKLY_FREEZE_EVERY):
        s = settle_week(s, post_id=10 * i, week=w[i], per_week=3, answered=3, posts=posts)
    assert (s.current, s.freezes) == (WEEKLY_FREEZE_EVERY, 1)  # 4 weeks earn a freeze
    s = settle_week(s, post_id=50, week=w[4], per_week=3, answered=1, posts=posts)  # short
    s = settle_week(s, post_id=60, week=w[5], per_week=3, answered=0, posts=posts)
    assert (s.current, s.freezes, s.freezes_used) == (4, 0, 1)  # the freeze covered week 4
    assert settle_week(s, post_id=55, week=w[4], per_week=3, answered=3, posts=posts) == s  # late
    s = settle_week(s, post_id=70, week=w[6], per_week=3, answered=3, posts=posts)
    assert (s.current, s.best) == (1, 4)  # week 5 missed with nothing banked ended it; week 6 counts
    assert settle_week(s, post_id=71, week=w[6], per_week=3, answered=3, posts=posts).current == 1
    # a week with fewer questions than asked for needs all of them; one without any is skipped
    short = {w[7]: 2, w[9]: 5}
    t = settle_week(StreakState(), post_id=80, week=w[7], per_week=3, answered=2, posts=short)
    assert t.current == 0
    t = settle_week(t, post_id=90, week=w[9], per_week=3, answered=3, posts=short)
    assert (t.current, t.freezes_used) == (2, 0)
    assert MAX_FREEZES == 2


def test_the_line_members_read_counts_this_week_ahead_and_a_short_last_week_out() -> None:
    monday = monday_of(date(2026, 3, 12))
    assert monday == date(2026, 3, 9)
    settled = StreakState(2, 2, week_of=date(2026, 3, 2), week_answers=2, week_done=True)
    assert shown_weeks(settled, this_week=monday, answered=1, per_week=2) == 2
    assert shown_weeks(settled, this_week=monday, answered=2, per_week=2) == 3
    short = StreakState(2, 2, week_of=date(2026, 3, 2), week_answers=1)
    assert shown_weeks(short, this_week=monday, answered=1, per_week=2) == 0
    covered = StreakState(2, 2, freezes=1, week_of=date(2026, 3, 2), week_answers=1)
    assert shown_weeks(covered, this_week=monday, answered=1, per_week=2) == 2
    line = StreakLine(3, 5, 2, 1)
    assert line.after_answer() == "🔥 Weekly streak: 3 · 1 of 2 this week"
    assert line.in_stats() == "weekly streak **3** (best 5) · 1 of 2 this week"
    assert line.on_home() == "🔥 Weekly streak: **3** (best 5) · 1 of 2 this week"
    assert StreakLine(7, 7).after_answer() == "🔥 Streak: 7"
    assert StreakLine(1, 1, 2, 2).progress() == "2 of 2 this week ✅"


async def _daily(fake: FakeDiscord, app: App, clock: FakeClock, answers: dict[str, bool]) -> dict[str, str]:
    """Today's daily question; each member answers (right or wrong); the reveal a day later.
    Returns the streak line of each member's private reply."""
    token = await fake.slash("daily", ALICE, admin=True, sub="now")
    assert "Posted today's question" in text_of(await fake.original_of(token))
    [question] = [m for m in fake.in_channel(fake.channel_id)
                  if any(b["custom_id"].startswith("td:a:") for b in buttons_of(m))]
    buttons = buttons_of(question)
    good = await correct_position(app, int(buttons[0]["custom_id"].split(":")[2]))
    lines = {}
    for name, right in answers.items():
        user = {"alice": ALICE, "bob": BOB}[name]
        pick = good if right else (good + 1) % 4
        reply = text_of(await fake.original_of(await fake.click(int(question["id"]), buttons[pick]["custom_id"], user)))
        lines[name] = next(line for line in reply.splitlines() if line.startswith("🔥"))
    clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    return lines


async def _admin(fake: FakeDiscord, user: User = ALICE, **options: object) -> str:
    reply = await fake.original_of(await fake.slash("daily", user, admin=user is ALICE, **options))
    assert reply["flags"] & EPHEMERAL
    return text_of(reply).strip()


async def _stats(fake: FakeDiscord, user: User) -> str:
    return text_of(await fake.original_of(await fake.slash("stats", user)))


async def test_weekly_streaks_through_discord(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    assert "Only members with the **Manage Server** permission can use /daily streak." in await _admin(
        fake, BOB, sub="streak", mode="weekly", per_week=2)
    assert await _admin(fake, sub="streak") == DAYS
    assert await _admin(fake, sub="streak", mode="weekly", per_week=2) == WEEKS + RESTART
    assert await _admin(fake, sub="streak") == WEEKS
    regular = fake.add_role("Regular", position=5)
    assert await _admin(fake, sub="rewards", action="add", streak=2, role=f"<@&{regular}>") == (
        f"Members whose weekly streak here reaches **2** now get <@&{regular}> (and lose it when "
        "the streak ends).")

    # week of Mon 2 March (the clock starts on Wednesday 4th): two answers, one of them wrong
    lines = await _daily(fake, app, discord_clock, {"alice": True, "bob": True})
    assert lines == {"alice": "🔥 Weekly streak: 0 · 1 of 2 this week",
                     "bob": "🔥 Weekly streak: 0 · 1 of 2 this week"}
    lines = await _daily(fake, app, discord_clock, {"alice": False})
    assert lines == {"alice": "🔥 Weekly streak: 1 · 2 of 2 this week ✅"}  # any answer counts
    stats = await _stats(fake, ALICE)
    assert "· weekly streak **1** (best 1) · 2 of 2 this week ✅\n" in stats
    assert "Streak 1 week (best 1)." in stats  # the chart's text alternative
    assert "· weekly streak **0** (best 0) · 1 of 2 this week\n" in await _stats(fake, BOB)

    # the next week: two more answers make two weeks, and the streak:2 role
    discord_clock.set(datetime(2026, 3, 9, 9, 0, tzinfo=UTC))
    assert "· weekly streak **1** (best 1) · 0 of 2 this week\n" in await _stats(fake, ALICE)
    await _daily(fake, app, discord_clock, {"alice": True, "bob": True})
    assert fake.member_roles.get(ALICE.id, set()) == set()
    lines = await _daily(fake, app, discord_clock, {"alice": True})
    assert lines == {"alice": "🔥 Weekly streak: 2 · 2 of 2 this week ✅"}
    assert fake.member_roles[ALICE.id] == {regular}
    assert await _admin(fake, sub="rewards") == (
        f"Role rewards in this channel\n🔥 streak 2 weeks → <@&{regular}> · 1 member")
    async with app.db.read() as session:  # the weekly digest's streak line reads weeks too
        channel_pk = await session.scalar(select(Channel.id).where(Channel.channel_id == str(fake.channel_id)))
        assert channel_pk is not None
        digest = digest_message(await weekly_digest(StoredDigestReads(), session, app.library, channel_pk, "UTC",
                                                    date(2026, 3, 2))).plain()
    assert "🔥 **Longest weekly streaks:** alice 2" in digest

    # a week without her answers ends it (no freeze banked yet): the role goes with it
    discord_clock.set(datetime(2026, 3, 16, 9, 0, tzinfo=UTC))
    await _daily(fake, app, discord_clock, {"bob": True})
    await _daily(fake, app, discord_clock, {"bob": True})
    assert "· weekly streak **1** (best 1) · 2 of 2 this week ✅\n" in await _stats(fake, BOB)
    discord_clock.set(datetime(2026, 3, 23, 9, 0, tzinfo=UTC))
    assert "· weekly streak **0** (best 2) · 0 of 2 this week\n" in await _stats(fake, ALICE)
    lines = await _daily(fake, app, discord_clock, {"alice": True})
    assert lines == {"alice": "🔥 Weekly streak: 0 · 1 of 2 this week"}
    assert fake.member_roles[ALICE.id] == set()

    # back to daily streaks: they start again from 0
    assert await _admin(fake, sub="streak", mode="daily") == DAYS + RESTART
    assert "· streak **0** (best 0)\n" in await _stats(fake, BOB)
    assert streak_mode_text(None) == DAYS
    # weekly asks for no more answers than the schedule has days
    await _admin(fake, sub="schedule", time="09:00", weekdays="mon,wed,fri")
    assert await _admin(fake, sub="streak", mode="weekly", per_week=4) == (
        "The daily schedule here posts on 3 days a week: ask for at most 3 answers a week.")
    assert await _admin(fake, sub="streak", mode="weekly") == (
        WEEKS.replace("**2**", "**3**") + RESTART)  # 3 a week unless told


async def test_the_weekly_line_on_the_raw_click_path(drill, publisher, clock) -> None:
    """SQLite and PostgreSQL raw clicks: a weekly-mode daily post reads the member's week after
    the write, so its click takes the session from the start (one answer, the line right)."""
    from sqlalchemy import func, update

    from bot.core.domain.actions import Action, Verb
    from bot.core.domain.identity import Where, Who
    from bot.storage.models import Answer

    here = Where("slack", "T1", "C1", "drills")
    ann, bo = Who("slack", "T1", "U1", "ann"), Who("slack", "T1", "U2", "bo")
    before = await drill.ask(here, publisher, kind="daily", local_date=clock.now().date())
    for member in (ann, bo):  # known members: their next clicks take the raw path
        await drill.handle_action(member, Action(Verb.PICK, before.post_id, 0).encode())
    async with drill.db.write() as session:
        await session.execute(update(Channel).values(streak_per_week=2))
    clock.advance(days=1)
    posted = await drill.ask(here, publisher, kind="daily", local_date=clock.now().date())
    replies = [await drill.handle_action(ann, Action(Verb.PICK, posted.post_id, 0).encode()) for _ in range(2)]
    assert "🔥 Weekly streak: 1 · 2 of 2 this week ✅" in replies[0].reply.plain().splitlines()
    assert "You already answered this one" in replies[1].reply.plain()  # a repeat
    first = await drill.handle_action(bo, Action(Verb.PICK, posted.post_id, 1).encode())
    assert "🔥 Weekly streak: 1 · 2 of 2 this week ✅" in first.reply.plain().splitlines()
    async with drill.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Answer)) == 4
