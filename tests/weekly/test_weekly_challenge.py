"""The weekly challenge post: admin option, exactly once per channel and week (races, crashes
before and after the platform accepted), members take it with /challenge week, and its thread
names who solved it during its week when the next one goes out."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from bot.app import build_daily, build_services, challenge_desk, weekly_posting
from bot.core.domain.identity import Where, Who
from bot.core.drill.delivery import WEEKLY_PREFIX
from bot.core.weekly.service import WeeklyKind, WeeklyPosting, parse_weekly, week_start
from bot.scheduler import DailyScheduler
from bot.storage.models import WeeklyClaim
from tests.support.weekly_platform import BANK, Platform

HERE = Where("discord", "g1", "c1", "general")
ELSEWHERE = Where("discord", "g2", "c9", "other server")


@pytest.fixture
def platform() -> Platform:
    return Platform()


@pytest.fixture
def weekly(drill, platform) -> WeeklyPosting:
    return weekly_posting(drill.db, drill.clock, platform, bank=BANK)


async def _schedule(drill, platform, where=HERE, challenge="wed 10:00") -> None:
    daily = build_daily(drill, platform)
    await daily.set_schedule(where, at="09:00", timezone="Europe/Berlin")
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    await weekly.set_weekly(where, WeeklyKind.CHALLENGE, challenge.split()[0], challenge.split()[1])


async def _claims(db) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(WeeklyClaim)) or 0)


def test_parse_weekly_accepts_days_and_off_and_names_bad_values() -> None:
    assert parse_weekly("Monday", "9") == "mon 09:00"
    assert parse_weekly("sun", "17:30") == "sun 17:30"
    assert parse_weekly("off", None) is None
    with pytest.raises(ValueError, match="invalid day 'someday'"):
        parse_weekly("someday", "09:00")
    with pytest.raises(ValueError, match="give a time too"):
        parse_weekly("mon", None)


async def test_weekly_option_needs_a_daily_schedule_and_shows_in_status(drill, weekly, platform):
    refused = await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "wed", "10:00")
    assert "Set this channel's daily schedule first" in refused.plain()
    daily = build_daily(drill, platform)
    await daily.set_schedule(HERE, at="09:00", timezone="Europe/Berlin")
    ok = await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "wed", "10:00")
    # clock: Wed 2026-03-04 09:00 UTC = 10:00 CET, so this week's slot is now; next is a week on
    assert "Weekly challenge: wed 10:00 Europe/Berlin" in ok.plain()
    assert "Weekly challenge: wed 10:00 Europe/Berlin" in (await daily.status(HERE)).plain()
    assert "invalid day" in (await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "caturday", "1")).plain()
    off = await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "off", None)
    assert "turned off" in off.plain()
    assert "Weekly challenge" not in (await daily.status(HERE)).plain()
    assert await weekly.fire(await _channel_pk(drill)) is None  # off: nothing posts


async def _channel_pk(drill) -> int:
    from bot.storage.identity import channel_row

    async with drill.db.write() as session:
        return (await channel_row(session, HERE)).id


async def test_two_replicas_racing_post_once_and_members_read_the_problem(drill, platform):
    await _schedule(drill, platform)
    pk = await _channel_pk(drill)
    a = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    b = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    results = await asyncio.gather(a.fire(pk), b.fire(pk), a.fire(pk))
    assert sum(r is not None for r in results) == 1
    posts = platform.posts()
    assert len(posts) == 1 and await _claims(drill.db) == 1
    first = min(BANK.challenges, key=lambda c: (c.difficulty, c.id))
    assert f"Weekly challenge: {first.title}" in posts[0]
    assert first.stub.strip().splitlines()[0] in posts[0]
    assert "Take it with `/challenge week`, then `/submit`" in posts[0]
    assert "closes Wed 11 Mar 10:00 CET" in posts[0]
    key = platform.messages[0][2]
    assert key is not None and key.startswith(WEEKLY_PREFIX)


async def test_a_crash_after_the_platform_accepted_is_recorded_not_resent(drill, platform, weekly):
    await _schedule(drill, platform)
    pk = await _channel_pk(drill)
    platform.die_after_accept = True
    with pytest.raises(TimeoutError):
        await weekly.fire(pk)
    assert len(platform.posts()) == 1
    drill.clock.advance(minutes=6)  # past the lease: another replica recovers the claim
    other = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    assert len(await other.recover_unsent()) == 1
    assert len(platform.posts()) == 1  # found in the channel, not sent again
    async with drill.db.read() as session:
        row = await session.scalar(select(WeeklyClaim))
        assert row is not None and row.sent_at is not None and row.platform_ref == "m1"
    assert await other.recover_unsent() == []


async def test_a_crash_before_the_platform_accepted_is_sent_once_by_recovery(drill, platform, weekly):
    await _schedule(drill, platform)
    pk = await _channel_pk(drill)
    platform.fail_before_accept = True
    with pytest.raises(ConnectionError):
        await weekly.fire(pk)
    assert platform.posts() == []
    assert await weekly.fire(pk) is None  # this week's claim exists: the cron job does not repeat
    drill.clock.advance(seconds=1)
    assert len(await weekly.recover_unsent()) == 1  # a failed send expires its own lease at once
    assert len(platform.posts()) == 1


async def test_members_take_it_and_its_thread_names_this_weeks_solvers(drill, platform, weekly):
    await _schedule(drill, platform)
    await _schedule(drill, platform, where=ELSEWHERE)
    pk = await _channel_pk(drill)
    desk = challenge_desk(drill.db, drill.clock, BANK)
    ada, bob, cy = (Who("discord", "g1", u, n) for u, n in (("1", "Ada"), ("2", "Bob"), ("3", "Cy")))
    stranger = Who("discord", "g2", "9", "Stranger")
    nothing_yet = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    assert await nothing_yet.current_item(HERE) is None
    first = min(BANK.challenges, key=lambda c: (c.difficulty, c.id))
    await desk.record(cy, first, solved=True)  # solved before the post: not this week's solver
    drill.clock.advance(minutes=1)
    await weekly.fire(pk)
    assert await weekly.current_item(HERE) == first.id
    opened = await desk.open_id(ada, first.id, "submit")
    assert first.title in opened.plain() and opened.ephemeral
    assert (await desk.current(ada)).id == first.id  # /submit now judges against it
    drill.clock.advance(hours=1)
    await desk.record(bob, first, solved=True)
    drill.clock.advance(hours=1)
    await desk.record(ada, first, solved=True)
    await desk.record(stranger, first, solved=True)  # another server
    drill.clock.advance(days=7)  # next Wednesday 10:00 CET: the next one goes out
    await weekly.fire(pk)
    posts = platform.posts()
    assert len(posts) == 2 and first.title not in posts[1].split("\n")[0]
    closing = [(m.plain(), thread) for _, m, key, thread in platform.messages if thread]
    assert closing == [(f"**🏁 Weekly challenge closed: {first.title}**\n"
                        "Solved by 2 members, in order: Bob, Ada", "m1")]
    assert await weekly.close_due() == []  # closed once
    assert await weekly.current_item(HERE) != first.id


async def test_nobody_solved_and_a_week_passing_closes_it_once(drill, platform, weekly):
    await _schedule(drill, platform)
    await weekly.fire(await _channel_pk(drill))
    drill.clock.advance(days=6, hours=23)
    assert await weekly.close_due() == []
    drill.clock.advance(hours=1)
    assert len(await weekly.close_due()) == 1
    closing = [m.plain() for _, m, _, thread in platform.messages if thread]
    assert len(closing) == 1 and "Nobody solved it this week" in closing[0]
    assert await weekly.current_item(HERE) is None


async def test_week_boundaries_follow_the_schedule_timezone(drill) -> None:
    # Sun 2026-03-08 23:30 UTC is already Monday 00:30 in Berlin: a new local week
    from datetime import UTC, datetime

    assert str(week_start(datetime(2026, 3, 8, 23, 30, tzinfo=UTC), "Europe/Berlin")) == "2026-03-09"
    assert str(week_start(datetime(2026, 3, 8, 23, 30, tzinfo=UTC), "UTC")) == "2026-03-02"


async def test_scheduler_runs_a_weekly_job_and_drops_it_when_turned_off(drill, platform):
    await _schedule(drill, platform)
    daily = build_daily(drill, platform)
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    scheduler = DailyScheduler(daily, weekly=weekly)
    await scheduler.rebuild()
    job = scheduler.scheduler.get_job(f"weekly:challenge:{await _channel_pk(drill)}")
    assert job is not None and str(job.trigger).startswith("cron[day_of_week='wed', hour='10', minute='0'")
    await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "off", None)
    await scheduler.rebuild()
    assert scheduler.scheduler.get_job(f"weekly:challenge:{await _channel_pk(drill)}") is None


async def test_catch_up_after_a_late_restart_posts_this_weeks_once(drill, platform):
    await _schedule(drill, platform)
    drill.clock.advance(hours=1)  # the process was down at 10:00 CET
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK)
    assert len(await weekly.catch_up()) == 1
    assert await weekly.catch_up() == []
    assert len(platform.posts()) == 1


def test_the_weekly_post_and_its_closing_word_for_word() -> None:
    from datetime import UTC, datetime

    from bot.core.domain.actions import Action, Verb, decode
    from bot.core.domain.messages import ButtonStyle
    from bot.core.domain.topics import TOPICS
    from bot.core.render.questions import stars
    from bot.core.weekly.service import closing_message, weekly_message

    challenge = BANK.challenges[0]
    msg = weekly_message(77, challenge, datetime(2026, 3, 11, 9, 0, tzinfo=UTC), "Europe/Berlin")
    assert msg.title == (f"🧩 Weekly challenge: {challenge.title} · {stars(challenge.difficulty)} · "
                         f"{TOPICS[challenge.topic]}")
    assert [getattr(b, "text", None) or b.code for b in msg.blocks] == [  # type: ignore[union-attr]
        challenge.statement.strip(), challenge.stub.rstrip()]
    assert msg.footer == (f"Take it with `/challenge week`, then `/submit` your solution · {challenge.points} "
                          "points for a first solve · closes Wed 11 Mar 10:00 CET")
    assert [(decode(b.action_id), b.label, b.style) for b in msg.buttons] == [
        (Action(Verb.TAKE, 77), "Take this challenge", ButtonStyle.PRIMARY)]
    assert closing_message(challenge, ["Ada"]).plain() == (
        f"**🏁 Weekly challenge closed: {challenge.title}**\nSolved by 1 member, in order: Ada")
    assert closing_message(challenge, []).plain() == (
        f"**🏁 Weekly challenge closed: {challenge.title}**\n"
        "Nobody solved it this week. It stays open to everyone with /challenge.")


async def test_the_weekly_buttons_open_the_challenge_and_show_progress(drill, platform):
    """Pressed in the channel: Take opens this week's problem privately for whoever presses it
    (any member); an unknown claim says there is none; My progress is the member's /stats."""
    from bot.core.challenges.desk import challenge_message
    from bot.core.commands.dispatch import CommandDesk
    from bot.core.domain.actions import Action, Verb

    class NoRunner:
        def desk(self) -> None:
            return None

        def unavailable(self) -> str:
            return "no runner"

    await _schedule(drill, platform)
    desk = CommandDesk(build_services(drill, build_daily(drill, platform), platform, NoRunner()))  # type: ignore[arg-type]
    await desk.services.weekly.fire(await _channel_pk(drill))
    take = next(m for _, m, key, _ in platform.messages if key).buttons[0].action_id
    ada = Who("discord", "g1", "1", "Ada")
    opened = (await desk.press(ada, take)).reply
    item = await desk.services.weekly.current_item(HERE)
    expected = challenge_message(BANK.get(item), "`/submit` to submit your solution; `/challenge hint` for a hint")
    assert (opened.title, opened.plain(), opened.ephemeral) == (expected.title, expected.plain(), True)
    assert (await desk.services.challenges.current(ada)).id == item
    nothing = (await desk.press(ada, Action(Verb.TAKE, 987654).encode())).reply
    assert nothing.plain() == "This channel has no weekly challenge this week. Admins start one with /daily challenge."
    progress = (await desk.press(ada, Action(Verb.PROGRESS, 1).encode())).reply
    stats = await desk.stats_of(ada, None)
    assert progress.ephemeral and progress.plain() == stats.plain()
    assert (await desk.press(ada, "not-a-button")).reply.plain() == (
        (await drill.handle_action(ada, "not-a-button")).reply.plain())
