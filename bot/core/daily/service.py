"""Daily questions: per-channel schedules, and the daily question as a posting policy.

Exactly once is bot.core.posting's job (fenced claims, keyed sends, look before re-send,
take-over, recovery): this module says what the daily question is (a claim per channel and
local date, its post chosen and stored with the claim the first time, reused on a retry) and
when it is due. ``recover_unsent`` finishes every unsent claim whose lease expired. Its rows
live behind the ports of ``bot.core.daily.ports`` (schedules, channel settings, role rewards,
today's post) and bot.core.posting's ``ClaimStore`` (the claims); ``bot.app`` builds them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.answers.recording import forget_channel
from bot.core.content.bank import Kind
from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.daily.ports import DailyKey, DailyStore, ScheduleSettings, ScheduleStore
from bot.core.daily.schedules import (
    CATCH_UP_GRACE,
    DEFAULT_REVEAL,
    WEEKDAYS,
    Due,
    ScheduleError,
    ScheduleView,
    adhoc_view,
    describe,
    parse_time,
    parse_weekdays,
    view_of,
)
from bot.core.domain import scoring
from bot.core.domain.clock import as_utc
from bot.core.domain.identity import Where, check_timezone
from bot.core.domain.kinds import PostKind
from bot.core.domain.messages import Message
from bot.core.domain.topics import normalize_topic
from bot.core.drill.selection import next_for_channel, pool, pool_key_of
from bot.core.posting.claims import (
    CLAIM_LEASE,
    INSTANCE_ID,
    LOOKBACK_MARGIN,
    PUBLISH_DEADLINE_S,
    RENEW_EVERY_S,
    ClaimLostError,
    ClaimStore,
    Outcome,
    Sent,
    attempt_of,
    token_for,
)
from bot.core.posting.poster import Lost, Poster, PosterSetting, Prepared, Words
from bot.core.progress import rewards
from bot.core.publisher import Delivery, Publisher, RolePublisher
from bot.core.render.notices import notice
from bot.core.reveal.posts import PostLike, create_post, is_closed, public_view

if TYPE_CHECKING:
    from bot.core.drill.service import Drill
    from bot.core.stores import Tx

log = logging.getLogger(__name__)

__all__ = [  # what other modules and tests import from here (schedules and claims vocabulary)
    "CATCH_UP_GRACE", "CLAIM_LEASE", "DEFAULT_REVEAL", "INSTANCE_ID", "LOOKBACK_MARGIN",
    "PUBLISH_DEADLINE_S", "RENEW_EVERY_S", "WEEKDAYS", "ClaimLostError", "Due", "Outcome",
    "ScheduleError", "ScheduleView", "Sent", "adhoc_view", "attempt_of", "describe",
    "parse_time", "parse_weekdays", "token_for", "view_of",
]

DAILY_WORDS = Words(
    log=log,
    lost_while_sending="daily post {id}: claim taken over by another process while sending",
    taken_after_send=("daily post {id} sent, but the claim was taken over; its new owner finds the "
                      "message before re-sending"),
    cannot_check=("daily post {id} may already be in channel {channel}, but I cannot check ({why}); "
                  "not sending it again, to never post twice"),
    found="daily post {id} was already in channel {channel}; recorded without re-sending",
)

# What /daily now answers: only what really reached the channel.
EXTRA_POSTED = "Today's question was already posted, so I posted an extra one (#{post_id})."
BEING_POSTED = "Today's question is being posted right now; it will appear here in a moment."
SEND_FAILED = (
    "I could not post today's question yet ({reason}). It is queued: I retry it automatically "
    "within a minute, or run /daily now again."
)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


@dataclass(frozen=True)
class Claim:
    """A claim we hold under ``token`` (until a takeover replaces it)."""

    view: ScheduleView
    local_date: date
    token: str

    @property
    def key(self) -> DailyKey:
        return (self.view.channel_pk, self.local_date)


NOW_REPLIES = {
    Outcome.POSTED: "Posted today's question.",
    Outcome.FOUND: "Today's question was already in the channel (an earlier try got through); "
                   "it is recorded now.",
    Outcome.UNCHECKABLE: "An earlier try may already have posted today's question, and I cannot "
                         "check the channel's history, so I did not post it again.",
    Outcome.LOST: BEING_POSTED,
}


@dataclass(frozen=True)
class NowClaim:
    """What /daily now found or recorded before its acknowledgement."""

    view: ScheduleView
    local_date: date
    claim: Claim | None  # ours to send; None when the claim was already taken
    already_sent: bool = False


@dataclass(frozen=True)
class TodaysPost:
    post_id: int
    platform_ref: str | None
    closed: bool


class DailyPosting:
    """Schedule administration and posting, on top of a Drill (for db, library, clock, rng) and
    the daily ports (``bot.core.daily.ports``, the claims: ``ClaimStore``)."""

    lease = PosterSetting[timedelta]("lease")
    renew_every_s = PosterSetting[float]("renew_every_s")
    publish_deadline_s = PosterSetting[float]("publish_deadline_s")

    def __init__(
        self, drill: Drill, publisher: Publisher, *, schedules: ScheduleStore, store: DailyStore,
        claims: ClaimStore[DailyKey, DailyKey],
        on_change: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.drill = drill
        self.db = drill.db  # the transactions (and the post cache) the drill shares
        self.publisher = publisher  # routes by platform when several adapters run
        self.on_change = on_change  # awaited after a schedule changes (the scheduler rebuilds)
        self.schedules = schedules
        self.store = store
        self.poster = Poster(claims, lambda: self.drill.clock.now(), DAILY_WORDS)

    async def changed(self) -> None:
        """Tell the scheduler that a schedule changed (weekly options included)."""
        if self.on_change is not None:
            await self.on_change()

    # ---- admin commands ------------------------------------------------------------------
    async def set_schedule(
        self, where: Where, *, at: str, timezone: str = "UTC", weekdays: str | None = None,
        topic: str | None = None, reveal_after_hours: float | None = None,
        source: str | None = None,
    ) -> Message:
        source = source or DEFAULT_BANK_SOURCE
        try:
            time_of_day = parse_time(at)
            tz = check_timezone(timezone).key
            days = parse_weekdays(weekdays)
            topic_slug = normalize_topic(topic) if topic else None
            if topic_slug or source != DEFAULT_BANK_SOURCE:
                async with self.db.read() as session:
                    await self.drill.shelf.refresh(session)
                pool(self.drill.library, topic=topic_slug, kinds=[Kind.MCQ], community=where.community,
                     source=source)
            hours = DEFAULT_REVEAL.total_seconds() / 3600 if reveal_after_hours is None else reveal_after_hours
            if not 0.25 <= hours <= 72:
                raise ScheduleError(f"invalid reveal delay {reveal_after_hours!r} h: use 0.25 to 72 hours")
        except (ValueError, LookupError) as exc:
            return notice(str(exc))
        now = self.drill.clock.now()
        channel_pk = await self.schedules.save(where, ScheduleSettings(
            time_of_day=time_of_day, timezone=tz, weekdays=",".join(days), topic=topic_slug,
            reveal_after_minutes=int(hours * 60),
            bank_source=None if source == DEFAULT_BANK_SOURCE else source,
        ), now)
        forget_channel(self.db.post_cache, channel_pk)  # "closes at" in the new timezone at once
        await self.changed()
        view = await self.schedules.of(channel_pk)
        assert view is not None
        return Message(title="Daily question scheduled").text(describe(view, now))

    async def set_paused(self, where: Where, paused: bool) -> Message:
        if not await self.schedules.set_paused(where, paused, self.drill.clock.now()):
            return notice("This channel has no daily schedule yet. Set one with /daily schedule.")
        await self.changed()
        return notice("Daily questions paused." if paused else "Daily questions resumed.")

    async def streak_mode(self, where: Where, mode: str | None, per_week: int | None) -> Message:
        """``/daily streak``: show, or switch between daily streaks and weekly ones (at least
        ``per_week`` of the week's daily questions answered; ``progress.scoring``). A switch
        of unit starts the channel's streaks again from 0; a new ``per_week`` keeps them."""
        async with self.db.write() as tx:
            channel_pk, before = await self.store.streak_mode(tx, where)
            if mode is None:
                return notice(scoring.streak_mode_text(before))
            wanted = None
            if mode == "weekly":
                scheduled = await self.store.scheduled_days(tx, channel_pk)
                days = scoring.MAX_PER_WEEK if scheduled is None else scheduled
                wanted = per_week or min(3, days)
                if wanted > days:
                    return notice(scoring.bad_per_week(days))
            changed = (before is None) != (wanted is None)
            await self.store.set_streak_mode(tx, channel_pk, wanted, restart=changed)
        forget_channel(self.db.post_cache, channel_pk)  # the click replies read the mode
        if changed:
            await self.drill.sync_rewards(channel_pk, where, self.publisher)  # streak roles follow
        return notice(scoring.streak_mode_text(wanted, changed))

    async def rewards(self, where: Where, who_id: str, action: str, streak: int | None,
                      role: str | None, *, solved: int | None = None, readiness: int | None = None,
                      topic: str | None = None) -> Message:
        """``/daily rewards``: list, add or remove the channel's milestone roles (``progress.rewards``)."""
        if not (isinstance(self.publisher, RolePublisher) and self.publisher.has_roles(where)):
            return notice(rewards.NO_ROLES)
        store = self.store
        async with self.db.write() as tx:
            channel_pk, per_week = await store.streak_mode(tx, where)
            weekly = per_week is not None
            if action == "list":
                return Message(title="Role rewards in this channel", ephemeral=True).text(
                    rewards.listing(await store.reward_lines(tx, channel_pk), weekly=weekly))
            role_id = rewards.parse_role(role or "")
            if role_id is None:
                return notice(rewards.bad_role(role or ""))
            found = await store.reward_for_role(tx, channel_pk, role_id)
            if action == "remove":
                if found is not None:
                    await store.remove_reward(tx, found)
                return notice(rewards.removed(role_id, found is not None))
            given = [(k, v) for k, v in (("streak", streak), ("solved", solved),
                                         ("readiness", readiness)) if v is not None]
            if len(given) != 1 or (given[0][0] == "readiness") != (topic is not None):
                return notice(rewards.need_milestone())
            [(kind, threshold)] = given
            if found is None:
                if await store.reward_count(tx, channel_pk) >= rewards.MAX_REWARDS_PER_CHANNEL:
                    return notice(rewards.too_many())
                await store.add_reward(tx, channel_pk, role_id=role_id, kind=kind, threshold=threshold,
                                       topic=topic, created_by=who_id, now=self.drill.clock.now())
            else:
                await store.change_reward(tx, found, kind=kind, threshold=threshold, topic=topic)
        problem = await self.publisher.role_problem(where, role_id)  # before asking Discord
        await self.drill.sync_rewards(channel_pk, where, self.publisher)  # who already has it
        return notice(rewards.added(threshold, role_id, kind, topic,
                                           rewards.refusal(role_id, problem) if problem else None,
                                           weekly=weekly))

    async def status(self, where: Where) -> Message:
        view = await self.schedules.of(await self.store.channel_pk(where))
        if view is None:
            return notice(
                "No daily question here yet. Example: /daily schedule time:09:00 timezone:Europe/Berlin weekdays:mon-fri"
            )
        return notice(describe(view, self.drill.clock.now()))

    # ---- /daily now ----------------------------------------------------------------------
    async def post_now(self, where: Where) -> Message:
        """Post today's question now; if today's is already out, post an extra one."""
        return await self.finish_now(await self.claim_now(where))

    async def claim_now(self, where: Where) -> NowClaim:
        """The durable half of /daily now: today's claim is recorded before the adapter
        acknowledges, so a crash after the acknowledgement is finished by recovery."""
        channel_pk = await self.store.channel_pk(where)
        view = await self.schedules.of(channel_pk) or adhoc_view(channel_pk, where)
        local_date = self.drill.clock.now().astimezone(ZoneInfo(view.timezone)).date()
        claim = await self._insert_claim(view, local_date)
        if claim is not None:
            return NowClaim(view, local_date, claim)
        state = await self.poster.store.get((channel_pk, local_date))
        return NowClaim(view, local_date, None, already_sent=state is not None and state.sent_at is not None)

    async def finish_now(self, now_claim: NowClaim) -> Message:
        """Send what ``claim_now`` claimed; every reply says what really reached the channel."""
        view, claim = now_claim.view, now_claim.claim
        if claim is None and now_claim.already_sent:
            now = self.drill.clock.now()
            extra = await self.drill.ask(
                view.where, self.publisher, kind=PostKind.NOW, topic=view.topic, source=view.bank_source,
                reveal_after=view.reveal_at(now) - now,
            )
            return notice(EXTRA_POSTED.format(post_id=extra.post_id))
        if claim is None:
            claim = await self._take_over(view, now_claim.local_date)
            if claim is None:
                return notice(BEING_POSTED)
        try:
            sent = await self._send(claim)
        except Exception as exc:
            log.warning("/daily now could not post in %s: %s", view.where.channel_id, _reason(exc))
            return notice(SEND_FAILED.format(reason=_reason(exc)))
        return notice(NOW_REPLIES[sent.outcome])

    async def todays_post(self, where: Where) -> TodaysPost | None:
        """The post that won today's daily claim of the channel (local date of its schedule)."""
        channel_pk = await self.store.channel_pk(where)
        view = await self.schedules.of(channel_pk)
        now = self.drill.clock.now()
        today = now.astimezone(ZoneInfo(view.timezone if view else "UTC")).date()
        async with self.db.read() as tx:
            post = await self.store.post_of_day(tx, (channel_pk, today))
            if post is None:
                return None
            return TodaysPost(post.id, post.platform_ref, is_closed(post, now))

    async def today_in(self, tx: Tx, view: ScheduleView, member_id: int,
                       now: datetime) -> tuple[PostLike | None, bool]:
        """Today's post of a scheduled channel (its local date), and whether the member answered
        it (the dashboard's "today's question"), in the caller's transaction."""
        today = now.astimezone(ZoneInfo(view.timezone)).date()
        post = await self.store.post_of_day(tx, (view.channel_pk, today))
        if post is None:
            return None, False
        return post, await self.store.answered(tx, post.id, member_id)

    # ---- fenced claims -------------------------------------------------------------------
    async def post_for(self, view: ScheduleView, fire_time: datetime) -> int | None:
        """Claim and post the daily question of ``fire_time``'s local date.

        None if another process holds the claim (or lost it to a takeover meanwhile)."""
        local_date = fire_time.astimezone(ZoneInfo(view.timezone)).date()
        claim = await self._insert_claim(view, local_date)
        if claim is None:
            return None
        sent = await self._send(claim)
        return sent.post_id if sent.outcome in (Outcome.POSTED, Outcome.FOUND) else None

    async def _insert_claim(self, view: ScheduleView, local_date: date) -> Claim | None:
        won = await self.poster.claim((view.channel_pk, local_date))
        return None if won is None else Claim(view, local_date, won[1])

    async def _take_over(self, view: ScheduleView, local_date: date) -> Claim | None:
        """Take an unsent claim whose lease expired; the new token fences the old owner out."""
        token = await self.poster.take_over((view.channel_pk, local_date))
        return None if token is None else Claim(view, local_date, token)

    async def _send(self, claim: Claim) -> Sent:
        """Publish the claim's post once (bot.core.posting); records only under our token."""
        return await self.poster.send(claim, await self._prepare(claim), self.publisher)

    async def _prepare(self, claim: Claim) -> Prepared | Lost:
        """The claim's post: chosen and stored with the claim the first time; a post an earlier
        attempt created is reused, and its send is then a retry (it may be in the channel)."""
        drill, view, store = self.drill, claim.view, self.store
        async with self.db.write() as session:
            row = await store.claim_row(session, claim.key)
            if row is None or row.holder != claim.token or row.sent:
                return Lost(row.post_id if row else None)
            post = await store.post(session, row.post_id) if row.post_id else None
            retry = post is not None  # an earlier attempt got as far as publishing
            if post is None:
                now = drill.clock.now()
                await drill.shelf.refresh(session)
                candidates = pool(drill.library, topic=view.topic, kinds=[Kind.MCQ],
                                  community=view.where.community, source=view.bank_source)
                pool_key = pool_key_of(view.topic, view.bank_source)
                question = await next_for_channel(drill.served, session, view.channel_pk, candidates, pool_key, drill.rng)
                post = await create_post(
                    drill.posts, session, question, kind=PostKind.DAILY, now=now, channel_id=view.channel_pk,
                    closes_at=view.reveal_at(now), local_date=claim.local_date, rng=drill.rng,
                )
                await store.record_post(session, claim.key, post.id)
            message = await public_view(drill.posts, session, drill.library, post, answered=0 if not retry else None)
            delivery = Delivery(post.id, as_utc(post.opened_at) - LOOKBACK_MARGIN)
        return Prepared(post.id, view.where, message, delivery, retry)

    async def recover_unsent(self) -> list[int]:
        """Finish every unsent claim whose lease expired, scheduled channel or not."""
        sent = []
        for channel_pk, local_date in await self.stale_claims():
            post_id = await self.recover_one(channel_pk, local_date)
            if post_id is not None:
                sent.append(post_id)
        return sent

    async def stale_claims(self) -> list[tuple[int, date]]:
        """(channel, local date) of every unsent claim whose lease expired."""
        return await self.poster.stale()

    async def recover_one(self, channel_pk: int, local_date: date) -> int | None:
        """Take over one stale claim and finish it; None if another process holds it now or
        the send failed (its lease is expired again: the next sweep retries)."""
        view = await self.schedules.of(channel_pk) or adhoc_view(channel_pk, await self.store.where_of(channel_pk))
        claim = await self._take_over(view, local_date)
        if claim is None:
            return None  # another replica took it over first
        try:
            result = await self._send(claim)
        except Exception as exc:
            log.warning("daily post of channel %s not sent yet (will retry): %s",
                        view.where.channel_id, _reason(exc))
            return None
        ok = result.outcome in (Outcome.POSTED, Outcome.FOUND)
        return result.post_id if ok else None

    async def missing_posts(self, now: datetime, grace: timedelta = CATCH_UP_GRACE) -> list[Due]:
        """Every active schedule whose last fire time is past, within ``grace``, and whose post for
        that local day has no claim: a fire that failed (or never ran) before claiming."""
        return await self.unclaimed_fires(now, now - grace)

    async def unclaimed_fires(self, now: datetime, oldest: datetime,
                              views: list[ScheduleView] | None = None) -> list[Due]:
        """Active schedules whose last fire time lies in [oldest, now] with no claim for its day
        (``views``: every schedule, when the caller has read them already this tick)."""
        views = [v for v in (await self.schedules.all() if views is None else views) if not v.paused]
        claimed = await self.schedules.claimed_since((oldest - timedelta(days=1)).date())
        due = []
        for view in views:
            last = view.last_fire_at_or_before(now)
            if last is None or last < oldest:
                continue
            item = Due(view, last)
            if (view.channel_pk, item.local_date) not in claimed:
                due.append(item)
        return due

    async def catch_up(self) -> list[int]:
        """Post what a restart missed: a fire time within the grace window with no claim yet."""
        posted = []
        for due in await self.missing_posts(self.drill.clock.now()):
            post_id = await self.post_for(due.view, due.fire_time)
            if post_id is not None:
                posted.append(post_id)
        return posted

    async def fire(self, channel_pk: int) -> int | None:
        """Reveal what is due, then post this channel's question (one channel, at once)."""
        view = await self.schedules.of(channel_pk)
        if view is None or view.paused:
            return None
        await self.drill.reveal_due(self.publisher)
        return await self.post_for(view, self.drill.clock.now())

    async def post_due(self, channel_pk: int, fire_time: datetime) -> int | None:
        """Post the question of ``fire_time``'s local day unless paused or unscheduled (what a
        posting worker runs for a fire; reveals are swept apart, once for many fires)."""
        view = await self.schedules.of(channel_pk)
        if view is None or view.paused:
            return None
        return await self.post_for(view, fire_time)

