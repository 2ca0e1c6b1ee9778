"""Daily questions: per-channel schedules and exactly-once posting.

Exactly once: a post first wins a claim row unique on (channel, local date). The claim's
owner is named by a fencing token ``"<attempt>@<process>"``: the owner renews its lease while
publishing and records the result only if its token still holds; a process that takes over an
expired claim increments the attempt, which fences the old owner out. A post that an earlier
attempt created may already be in the channel (the platform accepted it, then the sender died),
so before any re-send the channel is searched for the post's idempotency key
(bot.core.play.delivery). ``recover_unsent`` finishes every unsent claim whose lease expired.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from bot.core import render
from bot.core.content.bank import Kind
from bot.core.content.community import DEFAULT_BANK_SOURCE, SOURCE_LABELS
from bot.core.model.clock import as_utc
from bot.core.model.identity import Where, channel_row, check_timezone
from bot.core.model.kinds import PostKind
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.model.topics import TOPICS, normalize_topic
from bot.core.play.answers import forget_channel
from bot.core.play.delivery import Delivery, LookupUnavailableError, send_or_find
from bot.core.play.posts import create_post, is_closed, public_view
from bot.core.play.selection import next_for_channel, pool, pool_key_of
from bot.storage.models import Channel, DailyClaim, Post, Schedule, Workspace
from bot.storage.upsert import dialect_insert

if TYPE_CHECKING:
    from bot.core.play.drill import Drill
    from bot.storage.db import Database

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_REVEAL = timedelta(hours=12)
CATCH_UP_GRACE = timedelta(hours=3)  # a restart this long after the hour still posts
# An unsent claim not renewed for this long is taken over. Longer than any retry schedule:
# the owner renews every RENEW_EVERY_S and gives a publish at most PUBLISH_DEADLINE_S.
CLAIM_LEASE = timedelta(minutes=5)
RENEW_EVERY_S = 30.0
PUBLISH_DEADLINE_S = 180.0
LOOKBACK_MARGIN = timedelta(minutes=2)  # clock skew between us and the platform
INSTANCE_ID = f"{uuid.uuid4().hex[:12]}"

log = logging.getLogger(__name__)
T = TypeVar("T")

# What /daily now answers: only what really reached the channel.
EXTRA_POSTED = "Today's question was already posted, so I posted an extra one (#{post_id})."
BEING_POSTED = "Today's question is being posted right now; it will appear here in a moment."
SEND_FAILED = (
    "I could not post today's question yet ({reason}). It is queued: I retry it automatically "
    "within a minute, or run /daily now again."
)


class ScheduleError(ValueError):
    pass


def parse_time(value: str) -> str:
    match = re.fullmatch(r"\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*", value.lower())
    if not match:
        raise ScheduleError(f"invalid time {value!r}: use HH:MM in 24-hour form, e.g. 09:00 or 17:30")
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if match.group(3):
        if not 1 <= hour <= 12:
            raise ScheduleError(f"invalid time {value!r}: the hour must be 1-12 with am/pm")
        hour = hour % 12 + (12 if match.group(3) == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleError(f"invalid time {value!r}: hours go to 23 and minutes to 59")
    return f"{hour:02d}:{minute:02d}"


def parse_weekdays(value: str | None) -> list[str]:
    text = (value or "mon-fri").strip().lower()
    named = {"weekdays": "mon-fri", "workdays": "mon-fri", "daily": "mon-sun", "every day": "mon-sun",
             "all": "mon-sun", "weekends": "sat,sun"}
    text = named.get(text, text)
    days: list[str] = []
    for part in re.split(r"[,\s]+", text):
        if not part:
            continue
        ends = part.split("-")
        if not all(e[:3] in WEEKDAYS for e in ends) or len(ends) > 2:
            raise ScheduleError(
                f"invalid weekdays {value!r}: use e.g. mon-fri, mon,wed,fri, daily or weekends"
            )
        first, last = WEEKDAYS.index(ends[0][:3]), WEEKDAYS.index(ends[-1][:3])
        span = range(first, last + 1) if first <= last else [*range(first, 7), *range(0, last + 1)]
        days.extend(WEEKDAYS[i] for i in span if WEEKDAYS[i] not in days)
    if not days:
        raise ScheduleError(f"invalid weekdays {value!r}: name at least one day")
    return sorted(days, key=WEEKDAYS.index)


@dataclass(frozen=True)
class ScheduleView:
    channel_pk: int
    where: Where
    time_of_day: str
    timezone: str
    weekdays: list[str]
    topic: str | None
    reveal_after: timedelta
    paused: bool
    challenge_at: str | None = None  # the weekly challenge, "mon 09:00" (bot.core.play.weekly)
    digest_at: str | None = None  # the weekly digest, same form
    bank_source: str = DEFAULT_BANK_SOURCE  # built-in banks, the community's, or both

    def fire_time_on(self, day: date) -> datetime:
        hour, minute = map(int, self.time_of_day.split(":"))
        return datetime.combine(day, time(hour, minute), tzinfo=ZoneInfo(self.timezone)).astimezone(
            ZoneInfo("UTC")
        )

    def last_fire_at_or_before(self, now: datetime) -> datetime | None:
        local_today = now.astimezone(ZoneInfo(self.timezone)).date()
        for back in range(8):
            day = local_today - timedelta(days=back)
            if WEEKDAYS[day.weekday()] in self.weekdays and self.fire_time_on(day) <= now:
                return self.fire_time_on(day)
        return None

    def next_fire_after(self, now: datetime) -> datetime | None:
        local_today = now.astimezone(ZoneInfo(self.timezone)).date()
        for ahead in range(9):
            day = local_today + timedelta(days=ahead)
            if WEEKDAYS[day.weekday()] in self.weekdays and self.fire_time_on(day) > now:
                return self.fire_time_on(day)
        return None

    def reveal_at(self, posted_at: datetime) -> datetime:
        """At the next post or after the reveal delay, whichever is sooner."""
        delay = posted_at + self.reveal_after
        nxt = self.next_fire_after(posted_at)
        return min(delay, nxt) if nxt else delay


def _view(sched: Schedule, channel: Channel, ws: Workspace) -> ScheduleView:
    return ScheduleView(
        channel_pk=channel.id,
        where=Where(ws.platform, ws.external_id, channel.channel_id, channel.name),
        time_of_day=sched.time_of_day,
        timezone=sched.timezone,
        weekdays=sched.weekdays.split(","),
        topic=sched.topic,
        reveal_after=timedelta(minutes=sched.reveal_after_minutes),
        paused=sched.paused,
        challenge_at=sched.challenge_at,
        digest_at=sched.digest_at,
        bank_source=sched.bank_source or DEFAULT_BANK_SOURCE,
    )


async def all_schedules(db: Database) -> list[ScheduleView]:
    async with db.read() as session:
        rows = await session.execute(
            select(Schedule, Channel, Workspace)
            .join(Channel, Channel.id == Schedule.channel_id)
            .join(Workspace, Workspace.id == Channel.workspace_id)
        )
        return [_view(s, c, w) for s, c, w in rows]


async def schedule_of(db: Database, channel_pk: int) -> ScheduleView | None:
    return next((s for s in await all_schedules(db) if s.channel_pk == channel_pk), None)


def describe(view: ScheduleView, now: datetime) -> str:
    days = ",".join(view.weekdays)
    topic = TOPICS[view.topic] if view.topic else "all topics"
    state = "⏸ paused" if view.paused else "▶ active"
    banks = "" if view.bank_source == DEFAULT_BANK_SOURCE else f"{SOURCE_LABELS[view.bank_source]} · "
    text = (
        f"{state} · {view.time_of_day} {view.timezone} on {days} · {topic} · {banks}"
        f"reveal after {int(view.reveal_after.total_seconds() // 3600)} h or at the next post"
    )
    nxt = view.next_fire_after(now)
    if nxt and not view.paused:
        local = nxt.astimezone(ZoneInfo(view.timezone))
        text += f"\nNext question: {local:%a %d %b %H:%M} {local.tzname()}"
    if view.challenge_at:
        day, hhmm = view.challenge_at.split()
        text += f"\nWeekly challenge: {day} {hhmm} {view.timezone}"
    if view.digest_at:
        day, hhmm = view.digest_at.split()
        text += f"\nWeekly digest: {day} {hhmm} {view.timezone}"
    return text


def adhoc_view(channel_pk: int, where: Where) -> ScheduleView:
    """How /daily now and recovery treat a channel without a schedule: UTC, all topics."""
    return ScheduleView(channel_pk, where, "09:00", "UTC", list(WEEKDAYS), None, DEFAULT_REVEAL, False)


def token_for(attempt: int) -> str:
    return f"{attempt}@{INSTANCE_ID}"


def attempt_of(token: str) -> int:
    head = token.partition("@")[0]
    return int(head) if head.isdigit() else 1


def _claim_is(channel_pk: int, local_date: date, token: str) -> tuple[object, ...]:
    """The fence: the claim is unsent and still held under ``token``."""
    return (
        DailyClaim.channel_id == channel_pk, DailyClaim.local_date == local_date,
        DailyClaim.claimed_by == token, DailyClaim.sent_at.is_(None),
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


class ClaimLostError(RuntimeError):
    pass


class Outcome(StrEnum):
    POSTED = "posted"
    FOUND = "found"  # an earlier attempt's message was in the channel: recorded, not re-sent
    UNCHECKABLE = "uncheckable"  # a retry that could not look in the channel: not re-sent
    LOST = "lost"  # another process holds the claim now


@dataclass(frozen=True)
class Sent:
    outcome: Outcome
    post_id: int | None


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
    """Schedule administration and posting, on top of a Drill (for db, library, clock, rng)."""

    def __init__(
        self, drill: Drill, publisher: Publisher,
        on_change: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.drill = drill
        self.publisher = publisher  # routes by platform when several adapters run
        self.on_change = on_change  # awaited after a schedule changes (the scheduler rebuilds)
        self.lease = CLAIM_LEASE
        self.renew_every_s = RENEW_EVERY_S
        self.publish_deadline_s = PUBLISH_DEADLINE_S

    @property
    def db(self) -> Database:
        return self.drill.db

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
            return render.notice(str(exc))
        now = self.drill.clock.now()
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            channel.timezone = tz
            values = dict(
                time_of_day=time_of_day, timezone=tz, weekdays=",".join(days), topic=topic_slug,
                reveal_after_minutes=int(hours * 60), paused=False, updated_at=now,
                bank_source=None if source == DEFAULT_BANK_SOURCE else source,
            )
            await session.execute(
                dialect_insert(session, Schedule)
                .values(channel_id=channel.id, **values)
                .on_conflict_do_update(index_elements=["channel_id"], set_=values)
            )
            channel_pk = channel.id
        forget_channel(self.db.post_cache, channel_pk)  # "closes at" in the new timezone at once
        await self.changed()
        view = await schedule_of(self.db, channel_pk)
        assert view is not None
        return Message(title="Daily question scheduled").text(describe(view, now))

    async def set_paused(self, where: Where, paused: bool) -> Message:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            result = await session.execute(
                update(Schedule)
                .where(Schedule.channel_id == channel.id)
                .values(paused=paused, updated_at=self.drill.clock.now())
            )
        if not result.rowcount:
            return render.notice("This channel has no daily schedule yet. Set one with /daily schedule.")
        await self.changed()
        return render.notice("Daily questions paused." if paused else "Daily questions resumed.")

    async def status(self, where: Where) -> Message:
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            channel_pk = channel.id
        view = await schedule_of(self.db, channel_pk)
        if view is None:
            return render.notice(
                "No daily question here yet. Example: /daily schedule time:09:00 timezone:Europe/Berlin weekdays:mon-fri"
            )
        return render.notice(describe(view, self.drill.clock.now()))

    # ---- /daily now ----------------------------------------------------------------------
    async def post_now(self, where: Where) -> Message:
        """Post today's question now; if today's is already out, post an extra one."""
        return await self.finish_now(await self.claim_now(where))

    async def claim_now(self, where: Where) -> NowClaim:
        """The durable half of /daily now: today's claim is recorded before the adapter
        acknowledges, so a crash after the acknowledgement is finished by recovery."""
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        view = await schedule_of(self.db, channel_pk) or adhoc_view(channel_pk, where)
        local_date = self.drill.clock.now().astimezone(ZoneInfo(view.timezone)).date()
        claim = await self._insert_claim(view, local_date)
        if claim is not None:
            return NowClaim(view, local_date, claim)
        async with self.db.read() as session:
            row = await session.get(DailyClaim, (channel_pk, local_date))
            sent = row is not None and row.sent_at is not None
        return NowClaim(view, local_date, None, already_sent=sent)

    async def finish_now(self, now_claim: NowClaim) -> Message:
        """Send what ``claim_now`` claimed; every reply says what really reached the channel."""
        view, claim = now_claim.view, now_claim.claim
        if claim is None and now_claim.already_sent:
            now = self.drill.clock.now()
            extra = await self.drill.ask(
                view.where, self.publisher, kind=PostKind.NOW, topic=view.topic, source=view.bank_source,
                reveal_after=view.reveal_at(now) - now,
            )
            return render.notice(EXTRA_POSTED.format(post_id=extra.post_id))
        if claim is None:
            claim = await self._take_over(view, now_claim.local_date)
            if claim is None:
                return render.notice(BEING_POSTED)
        try:
            sent = await self._send(claim)
        except Exception as exc:
            log.warning("/daily now could not post in %s: %s", view.where.channel_id, _reason(exc))
            return render.notice(SEND_FAILED.format(reason=_reason(exc)))
        return render.notice(NOW_REPLIES[sent.outcome])

    async def todays_post(self, where: Where) -> TodaysPost | None:
        """The post that won today's daily claim of the channel (local date of its schedule)."""
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        view = await schedule_of(self.db, channel_pk)
        now = self.drill.clock.now()
        today = now.astimezone(ZoneInfo(view.timezone if view else "UTC")).date()
        async with self.db.read() as session:
            claim = await session.get(DailyClaim, (channel_pk, today))
            post = await session.get(Post, claim.post_id) if claim and claim.post_id else None
            if post is None:
                return None
            return TodaysPost(post.id, post.platform_ref, is_closed(post, now))

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
        token = token_for(1)
        async with self.db.write() as session:
            won = await session.scalar(
                dialect_insert(session, DailyClaim)
                .values(channel_id=view.channel_pk, local_date=local_date,
                        claimed_at=self.drill.clock.now(), claimed_by=token)
                .on_conflict_do_nothing()
                .returning(DailyClaim.channel_id)
            )
        return None if won is None else Claim(view, local_date, token)

    async def _take_over(self, view: ScheduleView, local_date: date) -> Claim | None:
        """Take an unsent claim whose lease expired; the new token fences the old owner out."""
        now = self.drill.clock.now()
        async with self.db.write() as session:
            row = await session.get(DailyClaim, (view.channel_pk, local_date))
            if row is None or row.sent_at is not None or as_utc(row.claimed_at) > now - self.lease:
                return None
            old, token = row.claimed_by, token_for(attempt_of(row.claimed_by) + 1)
            taken = await session.execute(
                update(DailyClaim)
                .where(*_claim_is(view.channel_pk, local_date, old))
                .values(claimed_by=token, claimed_at=now)
                .execution_options(synchronize_session=False)
            )
        return Claim(view, local_date, token) if taken.rowcount else None

    async def _renew(self, claim: Claim) -> bool:
        async with self.db.write() as session:
            renewed = await session.execute(
                update(DailyClaim)
                .where(*_claim_is(claim.view.channel_pk, claim.local_date, claim.token))
                .values(claimed_at=self.drill.clock.now())
            )
        return bool(renewed.rowcount)

    async def _release(self, claim: Claim) -> None:
        """A failed send expires its own lease at once: the next tick (or admin) retries it."""
        async with self.db.write() as session:
            await session.execute(
                update(DailyClaim)
                .where(*_claim_is(claim.view.channel_pk, claim.local_date, claim.token))
                .values(claimed_at=self.drill.clock.now() - self.lease)
            )

    async def _holding(self, claim: Claim, work: Awaitable[T]) -> T:
        """Await ``work`` while renewing the lease; give up if the claim is lost or the deadline
        passes (the publish is then cancelled: whoever retries looks in the channel first)."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(work)
        deadline = loop.time() + self.publish_deadline_s
        try:
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError(f"no answer from the platform within {self.publish_deadline_s:.0f} s")
                done, _ = await asyncio.wait({task}, timeout=min(self.renew_every_s, left))
                if done:
                    return task.result()
                if not await self._renew(claim):
                    raise ClaimLostError(claim)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _send(self, claim: Claim) -> Sent:
        """Publish the claim's post once: a post an earlier attempt created may already be in
        the channel, so it is looked for before any re-send. Records only under our token."""
        drill, view = self.drill, claim.view
        key = (view.channel_pk, claim.local_date)
        async with self.db.write() as session:
            row = await session.get(DailyClaim, key)
            if row is None or row.claimed_by != claim.token or row.sent_at is not None:
                return Sent(Outcome.LOST, row.post_id if row else None)
            post = await session.get(Post, row.post_id) if row.post_id else None
            retry = post is not None  # an earlier attempt got as far as publishing
            if post is None:
                now = drill.clock.now()
                await drill.shelf.refresh(session)
                candidates = pool(drill.library, topic=view.topic, kinds=[Kind.MCQ],
                                  community=view.where.community, source=view.bank_source)
                pool_key = pool_key_of(view.topic, view.bank_source)
                question = await next_for_channel(session, view.channel_pk, candidates, pool_key, drill.rng)
                post = await create_post(
                    session, question, kind=PostKind.DAILY, now=now, channel_id=view.channel_pk,
                    closes_at=view.reveal_at(now), local_date=claim.local_date, rng=drill.rng,
                )
                row.post_id = post.id
            message = await public_view(session, drill.library, post)
            delivery = Delivery(post.id, as_utc(post.opened_at) - LOOKBACK_MARGIN)
        try:
            delivered = await self._holding(claim, self._deliver(view.where, message, delivery, retry))
        except ClaimLostError:
            log.warning("daily post %s: claim taken over by another process while sending", delivery.post_id)
            return Sent(Outcome.LOST, delivery.post_id)
        except Exception:
            await self._release(claim)
            raise
        if delivered is None:
            return Sent(Outcome.UNCHECKABLE, delivery.post_id)
        ref, outcome = delivered
        async with self.db.write() as session:
            done = await session.execute(
                update(DailyClaim).where(*_claim_is(*key, claim.token)).values(sent_at=drill.clock.now())
            )
            if not done.rowcount:
                log.warning("daily post %s sent, but the claim was taken over; its new owner "
                            "finds the message before re-sending", delivery.post_id)
                return Sent(Outcome.LOST, delivery.post_id)
            stored = await session.get(Post, delivery.post_id)
            assert stored is not None
            stored.platform_ref = ref
        return Sent(outcome, delivery.post_id)

    async def _deliver(
        self, where: Where, message: Message, delivery: Delivery, retry: bool
    ) -> tuple[str, Outcome] | None:
        """(ref, POSTED or FOUND); None when a retry cannot check the channel (never re-sent)."""
        try:
            ref, found = await send_or_find(self.publisher, where, message, delivery, retry=retry)
        except LookupUnavailableError as exc:
            log.error(
                "daily post %s may already be in channel %s, but I cannot check (%s); "
                "not sending it again, to never post twice", delivery.post_id, where.channel_id, exc,
            )
            return None
        if found:
            log.info("daily post %s was already in channel %s; recorded without re-sending",
                     delivery.post_id, where.channel_id)
            return ref, Outcome.FOUND
        return ref, Outcome.POSTED

    async def recover_unsent(self) -> list[int]:
        """Finish every unsent claim whose lease expired, scheduled channel or not."""
        now = self.drill.clock.now()
        async with self.db.read() as session:
            stale = (
                await session.execute(
                    select(DailyClaim.channel_id, DailyClaim.local_date).where(
                        DailyClaim.sent_at.is_(None), DailyClaim.claimed_at <= now - self.lease
                    )
                )
            ).all()
        sent = []
        for channel_pk, local_date in stale:
            view = await schedule_of(self.db, channel_pk) or await self._adhoc(channel_pk)
            claim = await self._take_over(view, local_date)
            if claim is None:
                continue  # another replica took it over first
            try:
                result = await self._send(claim)
            except Exception as exc:
                log.warning("daily post of channel %s not sent yet (will retry): %s",
                            view.where.channel_id, _reason(exc))
                continue
            if result.outcome in (Outcome.POSTED, Outcome.FOUND) and result.post_id is not None:
                sent.append(result.post_id)
        return sent

    async def _adhoc(self, channel_pk: int) -> ScheduleView:
        async with self.db.read() as session:
            channel = await session.get(Channel, channel_pk)
            assert channel is not None
            ws = await session.get(Workspace, channel.workspace_id)
            assert ws is not None
            where = Where(ws.platform, ws.external_id, channel.channel_id, channel.name)
        return adhoc_view(channel_pk, where)

    async def catch_up(self) -> list[int]:
        """Post what a restart missed: a fire time within the grace window with no claim yet."""
        now = self.drill.clock.now()
        posted = []
        for view in await all_schedules(self.db):
            if view.paused:
                continue
            last = view.last_fire_at_or_before(now)
            if last is None or now - last > CATCH_UP_GRACE:
                continue
            post_id = await self.post_for(view, last)
            if post_id is not None:
                posted.append(post_id)
        return posted

    async def fire(self, channel_pk: int) -> int | None:
        """What the scheduler's cron job calls at a channel's post time."""
        view = await schedule_of(self.db, channel_pk)
        if view is None or view.paused:
            return None
        await self.drill.reveal_due(self.publisher)
        return await self.post_for(view, self.drill.clock.now())
