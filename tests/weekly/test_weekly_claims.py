"""Weekly challenge claims across channels, retries and replicas (issue 21, survivors of a scoped
mutation run of bot/core/weekly/service.py on 2026-12-04): each post lands in its own channel with
the problem first chosen, a retry looks before it re-sends (a platform without Discord's nonce
dedup, like Slack), recovery takes only expired claims and goes on past a failing channel, and
closing touches only the claim that is due, listing only that week's solvers of that problem."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from bot.app import build_daily, challenge_desk, weekly_posting
from bot.core.content.challenges import ChallengeBank
from bot.core.daily.service import CLAIM_LEASE
from bot.core.domain.clock import as_utc
from bot.core.domain.identity import Where, Who
from bot.core.weekly.service import NEEDS_DAILY, Held, WeeklyKind, WeeklyPosting
from bot.storage.models import Schedule, WeeklyClaim
from bot.storage.schedules import schedule_of
from tests.support.weekly_claims import EASIEST, HERE, Channels, schedule, title, weekly_off
from tests.support.weekly_platform import BANK

THERE = Where("discord", "g1", "c2", "random")


@pytest.fixture
def channels(drill) -> Channels:
    return Channels(drill.clock)


@pytest.fixture
def weekly(drill, channels) -> WeeklyPosting:
    return weekly_posting(drill.db, drill.clock, channels, bank=BANK)


async def claim(drill, claim_id: int) -> WeeklyClaim:
    async with drill.db.read() as session:
        row = await session.get(WeeklyClaim, claim_id)
        assert row is not None
        return row


def recover_during_send(channels: Channels, replica: WeeklyPosting) -> list[list[int]]:
    """While the next keyed send is in flight, another replica runs its recovery once."""
    recovered: list[list[int]] = []

    async def meanwhile() -> None:
        channels.during_send = None
        recovered.append(await replica.recover_unsent())

    channels.during_send = meanwhile
    return recovered


async def fail_first_send(weekly: WeeklyPosting, channels: Channels, channel_pk: int, channel_id: str) -> None:
    """The platform is unreachable for this channel's first try (nothing lands)."""
    channels.fail_in.add(channel_id)
    with pytest.raises(ConnectionError):
        await weekly.fire(channel_pk)
    channels.fail_in.discard(channel_id)


async def test_each_channel_gets_its_own_post_and_the_easiest_problem_it_has_not_had(drill, channels, weekly):
    here, there = await schedule(drill, channels, HERE), await schedule(drill, channels, THERE)
    assert await weekly.fire(here) is not None
    assert await weekly.fire(there) is not None
    # the other channel's post does not count as "had": both start with the easiest problem
    assert channels.posts("c1") == channels.posts("c2") == [title(EASIEST[0])]
    assert await weekly.current_item(HERE) == await weekly.current_item(THERE) == EASIEST[0].id
    assert await weekly.current_item(Where("discord", "g1", "c3", "quiet")) is None


async def test_every_problem_is_had_once_before_any_repeats(drill, channels) -> None:
    two = ChallengeBank(challenges=EASIEST[:2], problems=[])
    weekly = weekly_posting(drill.db, drill.clock, channels, bank=two)
    here = await schedule(drill, channels, HERE)
    for _ in range(3):
        await weekly.fire(here)
        drill.clock.advance(days=7)
    assert channels.posts() == [title(EASIEST[0]), title(EASIEST[1]), title(EASIEST[0])]


async def test_a_retry_after_the_platform_accepted_finds_the_post_instead_of_resending(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    channels.die_after_accept = True
    with pytest.raises(TimeoutError):
        await weekly.fire(here)
    assert channels.lookups == 0  # the first try does not look
    [claim_id] = await weekly.recover_unsent()  # the failed send expired its own lease
    assert channels.lookups == 1 and channels.posts() == [title(EASIEST[0])]
    assert (await claim(drill, claim_id)).platform_ref == "m1"


async def test_a_retry_looks_back_from_the_first_try_and_sends_the_same_problem(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await fail_first_send(weekly, channels, here, "c1")
    first = await claim(drill, 1)
    assert first.item == EASIEST[0].id and first.sent_at is None
    assert await weekly.current_item(HERE) is None  # not out yet: /challenge week has nothing
    drill.clock.advance(minutes=30)
    [claim_id] = await weekly.recover_unsent()
    assert channels.posts() == [title(EASIEST[0])]  # the problem chosen the first time
    # and a later retry still finds the post made right at the first try's time
    async with drill.db.write() as session:
        await session.execute(update(WeeklyClaim).values(sent_at=None, claimed_at=drill.clock.now() - CLAIM_LEASE))
    channels.messages[0]["at"] = as_utc(first.opened_at)
    assert await weekly.recover_unsent() == [claim_id]
    assert len(channels.posts()) == 1


async def test_a_problem_gone_from_the_bank_is_replaced_on_retry(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await fail_first_send(weekly, channels, here, "c1")
    without = ChallengeBank(challenges=EASIEST[1:], problems=[])
    assert await weekly_posting(drill.db, drill.clock, channels, bank=without).recover_unsent() == [1]
    assert channels.posts() == [title(EASIEST[1])]


async def test_a_send_that_never_answers_fails_at_its_deadline_and_is_retried(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    weekly.publish_deadline_s = 0.05

    async def stall() -> None:
        await asyncio.Event().wait()

    channels.during_send = stall
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(weekly.fire(here), 10)
    channels.during_send = None
    assert await weekly.recover_unsent() == [1]  # found where the stalled send left it
    assert len(channels.posts()) == 1


async def test_recovery_leaves_a_claim_whose_owner_is_still_sending(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    recovered = recover_during_send(channels, weekly_posting(drill.db, drill.clock, channels, bank=BANK))
    assert await weekly.fire(here) == 1
    assert recovered == [[]] and len(channels.posts()) == 1


async def test_a_taken_over_claim_is_not_taken_again_while_its_new_owner_sends(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await fail_first_send(weekly, channels, here, "c1")
    drill.clock.advance(minutes=10)
    recovered = recover_during_send(channels, weekly_posting(drill.db, drill.clock, channels, bank=BANK))
    assert await weekly_posting(drill.db, drill.clock, channels, bank=BANK).recover_unsent() == [1]
    assert recovered == [[]] and len(channels.posts()) == 1


async def test_recovery_takes_a_claim_exactly_one_lease_old_and_every_channel(drill, channels, weekly):
    here, there = await schedule(drill, channels, HERE), await schedule(drill, channels, THERE)
    for pk, channel_id in ((here, "c1"), (there, "c2")):
        await fail_first_send(weekly, channels, pk, channel_id)  # both: this instance's first token
    # the failed sends set their leases exactly one lease back: due now, not a second later
    assert sorted(await weekly.recover_unsent()) == [1, 2]
    assert channels.posts("c1") == channels.posts("c2") == [title(EASIEST[0])]


async def test_recovery_goes_on_past_a_channel_that_fails_or_lost_its_schedule(drill, channels, weekly):
    here, there = await schedule(drill, channels, HERE), await schedule(drill, channels, THERE)
    for pk, channel_id in ((here, "c1"), (there, "c2")):
        await fail_first_send(weekly, channels, pk, channel_id)
    channels.fail_in = {"c1"}  # still unreachable: logged, retried later
    assert await weekly.recover_unsent() == [2]
    assert channels.posts("c2") == [title(EASIEST[0])] and channels.posts("c1") == []
    async with drill.db.write() as session:  # the first channel's schedule is removed
        await session.execute(Schedule.__table__.delete().where(Schedule.channel_id == here))
    fresh = await schedule(drill, channels, Where("discord", "g1", "c3", "new"))
    channels.fail_in.clear()
    await fail_first_send(weekly, channels, fresh, "c3")
    drill.clock.advance(minutes=10)
    assert await weekly.recover_unsent() == [3]  # claim 1 has no schedule: skipped, not a stop


async def test_a_stale_or_unknown_token_sends_nothing(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await fail_first_send(weekly, channels, here, "c1")
    row = await claim(drill, 1)
    view = await schedule_of(drill.db, here)
    assert view is not None
    assert await weekly._send(Held(1, view, "7@elsewhere")) is None
    assert await weekly._send(Held(99, view, row.claimed_by)) is None
    assert channels.posts() == []


async def test_a_week_passing_closes_it_by_itself_exactly_at_seven_days(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    claim_id = await weekly.fire(here)
    await weekly_off(drill, here)  # no next post will replace it: only the week closes it
    drill.clock.advance(days=6, hours=23, minutes=59)
    assert await weekly.close_due() == []
    drill.clock.advance(minutes=1)
    assert await weekly.close_due() == [claim_id]
    assert [(c, t) for c, t, _ in channels.closings()] == [("c1", "m1")]


async def test_this_weeks_post_time_closes_last_weeks_exactly_on_time(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)  # Wed 10:00 CET
    claim_id = await weekly.fire(here)
    await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "mon", "10:00")
    drill.clock.advance(days=4, hours=23, minutes=59)  # Mon 09:59 CET
    assert await weekly.close_due() == []
    drill.clock.advance(minutes=1)  # Mon 10:00: this week's post is due, last week's closes
    assert await weekly.close_due() == [claim_id]


async def test_closing_one_channels_challenge_leaves_the_others_open(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    there = await schedule(drill, channels, THERE, "mon 10:00")
    await weekly.fire(here)  # Wed 4 Mar 10:00 CET
    drill.clock.advance(days=5)  # Mon 9 Mar: a newer week's post elsewhere, not here
    await weekly.fire(there)
    assert await weekly.close_due() == []
    drill.clock.advance(days=2)  # Wed 11 Mar 10:00: the first one's week is over
    assert await weekly.close_due() == [1]
    assert await weekly.current_item(THERE) == EASIEST[0].id
    assert await weekly.current_item(HERE) is None
    assert [(c, t) for c, t, _ in channels.closings()] == [("c1", "m1")]


async def test_an_older_post_replaced_by_a_newer_one_closes_even_with_the_weekly_off(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    first = await weekly.fire(here)
    drill.clock.advance(days=6)  # Tue 10 Mar: a newer post is out (a replica that did not close)
    async with drill.db.write() as session:
        newer = WeeklyClaim(channel_id=here, kind="challenge", week_start=(await claim(drill, first)).week_start
                            + timedelta(days=7), claimed_at=drill.clock.now(), claimed_by="1@x",
                            item=EASIEST[1].id, opened_at=drill.clock.now(), sent_at=drill.clock.now(),
                            platform_ref="m9")
        session.add(newer)
    await weekly_off(drill, here)
    assert await weekly.close_due() == [first]


async def test_digests_are_not_closed_and_closing_twice_posts_once(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "wed", "10:00")
    challenge = await weekly.fire(here)
    digest = await weekly.fire(here, WeeklyKind.DIGEST)
    assert (challenge, digest) == (1, 2)
    await weekly_off(drill, here)
    drill.clock.advance(days=8)
    row = await weekly.store.claim(challenge)  # as it was before closing
    assert row is not None
    assert await weekly.close_due() == [challenge]
    assert (await claim(drill, digest)).closed_at is None
    assert await weekly._close(row, drill.clock.now()) is False  # already closed: nothing posted
    assert len(channels.closings()) == 1


async def test_a_problem_gone_from_the_bank_still_closes_without_a_summary(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    claim_id = await weekly.fire(here)
    await weekly_off(drill, here)
    drill.clock.advance(days=7)
    without = ChallengeBank(challenges=EASIEST[1:], problems=[])
    assert await weekly_posting(drill.db, drill.clock, channels, bank=without).close_due() == [claim_id]
    assert channels.closings() == []
    assert (await claim(drill, claim_id)).closed_at is not None


async def test_the_summary_names_only_this_problems_solvers_within_its_week(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    desk = challenge_desk(drill.db, drill.clock, BANK)
    ada, bob, cy, dan = (Who("discord", "g1", u, n) for u, n in
                         (("1", "Ada"), ("2", "Bob"), ("3", "Cy"), ("4", "Dan")))
    await weekly.fire(here)
    await desk.record(ada, EASIEST[0], solved=True)  # the moment it went out: counts
    await desk.record(dan, EASIEST[1], solved=True)  # another problem: does not
    drill.clock.advance(days=7)  # the last moment of its week: counts
    await desk.record(bob, EASIEST[0], solved=True)
    drill.clock.advance(seconds=1)  # after its week: does not
    await desk.record(cy, EASIEST[0], solved=True)
    await weekly_off(drill, here)
    assert len(await weekly.close_due()) == 1
    [(_, _, text)] = channels.closings()
    assert text.endswith("Solved by 2 members, in order: Ada, Bob")


async def test_nothing_is_posted_for_a_paused_channel(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    await build_daily(drill, channels).set_paused(HERE, True)
    assert await weekly.fire(here) is None
    async with drill.db.read() as session:
        assert list(await session.scalars(select(WeeklyClaim))) == []


async def test_catch_up_posts_up_to_the_last_moment_of_its_grace(drill, channels, weekly):
    await schedule(drill, channels, HERE)  # Wed 10:00 CET, the clock's moment now
    drill.clock.advance(hours=3)  # CATCH_UP_GRACE after the fire time: still this week's post
    assert await weekly.catch_up() == [1]
    assert channels.posts() == [title(EASIEST[0])]


async def test_a_weekly_time_keeps_its_minutes_and_a_missing_time_is_named(drill, channels, weekly):
    await build_daily(drill, channels).set_schedule(HERE, at="09:00", timezone="Europe/Berlin")
    reply = await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "wed", "10:30")  # now: Wed 10:00 CET
    assert reply.plain() == "Weekly challenge: wed 10:30 Europe/Berlin. Next: Wed 04 Mar 10:30 CET."
    missing = await weekly.set_weekly(HERE, WeeklyKind.CHALLENGE, "wed", None)
    assert missing.plain() == "give a time too, e.g. time:09:00"


async def test_digest_now_posts_in_the_channel_without_buttons_and_needs_a_schedule(drill, channels, weekly):
    nowhere = await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "now", None)
    assert nowhere.plain() == NEEDS_DAILY and channels.messages == []
    await schedule(drill, channels, HERE)
    done = await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "now", None)
    assert done.plain() == "Posted last week's digest."
    [posted] = channels.messages
    assert posted["channel"] == "c1" and posted["message"].buttons == []


async def test_solvers_at_the_same_moment_are_listed_in_the_order_they_joined(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    desk = challenge_desk(drill.db, drill.clock, BANK)
    ada, bob = Who("discord", "g1", "1", "Ada"), Who("discord", "g1", "2", "Bob")
    await desk.record(ada, EASIEST[1], solved=False)  # Ada is known first
    drill.clock.advance(minutes=1)
    await weekly.fire(here)
    drill.clock.advance(hours=1)
    await desk.record(bob, EASIEST[0], solved=True)  # the same moment, Bob's row first
    await desk.record(ada, EASIEST[0], solved=True)
    await weekly_off(drill, here)
    drill.clock.advance(days=7)
    await weekly.close_due()
    [(_, _, text)] = channels.closings()
    assert text.endswith("Solved by 2 members, in order: Ada, Bob")


async def test_a_channel_whose_schedule_is_gone_closes_without_a_summary(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)
    claim_id = await weekly.fire(here)
    async with drill.db.write() as session:
        await session.execute(Schedule.__table__.delete().where(Schedule.channel_id == here))
    drill.clock.advance(days=7)
    assert await weekly.close_due() == [claim_id]
    assert channels.closings() == []


async def test_the_open_challenge_is_found_behind_a_newer_digest(drill, channels, weekly):
    here = await schedule(drill, channels, HERE)  # challenge: Wed 10:00 CET
    await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "mon", "10:00")
    await weekly.fire(here)
    drill.clock.advance(days=5)  # Mon 9 Mar 10:00: next week's digest goes out first
    assert await weekly.fire(here, WeeklyKind.DIGEST) is not None
    assert await weekly.current_item(HERE) == EASIEST[0].id
