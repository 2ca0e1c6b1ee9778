"""Daily questions: per-channel schedules and exactly-once posting.

Exactly once: a post first wins a claim row unique on (channel, local date). The winner creates
the post (recording its id on the claim), publishes it, then marks the claim sent. A process
that dies in between leaves an unsent claim; ``recover_unsent`` finishes it on the next start
once the claim's lease has expired, so the post is late rather than lost.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from bot.core import render
from bot.core.content import Kind
from bot.core.identity import Where, channel_row, check_timezone
from bot.core.messages import Message
from bot.core.posts import create_post, is_closed, public_view
from bot.core.publisher import Publisher
from bot.core.selection import next_for_channel, pool
from bot.core.topics import TOPICS, normalize_topic
from bot.storage.models import Channel, DailyClaim, Post, Schedule, Workspace
from bot.storage.upsert import dialect_insert

if TYPE_CHECKING:
    from bot.core.service import Drill
    from bot.storage.db import Database

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_REVEAL = timedelta(hours=12)
CATCH_UP_GRACE = timedelta(hours=3)  # a restart this long after the hour still posts
CLAIM_LEASE = timedelta(minutes=2)  # an unsent claim older than this is taken over
INSTANCE_ID = f"{uuid.uuid4().hex[:12]}"


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
    text = (
        f"{state} · {view.time_of_day} {view.timezone} on {days} · {topic} · "
        f"reveal after {int(view.reveal_after.total_seconds() // 3600)} h or at the next post"
    )
    nxt = view.next_fire_after(now)
    if nxt and not view.paused:
        local = nxt.astimezone(ZoneInfo(view.timezone))
        text += f"\nNext question: {local:%a %d %b %H:%M} {local.tzname()}"
    return text


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

    @property
    def db(self) -> Database:
        return self.drill.db

    async def _changed(self) -> None:
        if self.on_change is not None:
            await self.on_change()

    # ---- admin commands ------------------------------------------------------------------
    async def set_schedule(
        self, where: Where, *, at: str, timezone: str = "UTC", weekdays: str | None = None,
        topic: str | None = None, reveal_after_hours: float | None = None,
    ) -> Message:
        try:
            time_of_day = parse_time(at)
            tz = check_timezone(timezone).key
            days = parse_weekdays(weekdays)
            topic_slug = normalize_topic(topic) if topic else None
            if topic_slug:
                pool(self.drill.library, topic=topic_slug, kinds=[Kind.MCQ])
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
            )
            await session.execute(
                dialect_insert(session, Schedule)
                .values(channel_id=channel.id, **values)
                .on_conflict_do_update(index_elements=["channel_id"], set_=values)
            )
            channel_pk = channel.id
        await self._changed()
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
        await self._changed()
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

    async def post_now(self, where: Where) -> Message:
        """Post today's question now; if today's is already out, post an extra one."""
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        view = await schedule_of(self.db, channel_pk)
        view = view or ScheduleView(channel_pk, where, "09:00", "UTC", list(WEEKDAYS), None,
                                    DEFAULT_REVEAL, False)
        now = self.drill.clock.now()
        posted = await self.post_for(view, now)
        if posted is not None:
            return render.notice("Posted today's question.")
        extra = await self.drill.ask(
            where, self.publisher, kind="now", topic=view.topic, reveal_after=view.reveal_at(now) - now
        )
        return render.notice(f"Today's question was already posted, so I posted an extra one (#{extra.post_id}).")

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

    # ---- posting -------------------------------------------------------------------------
    async def post_for(self, view: ScheduleView, fire_time: datetime) -> int | None:
        """Claim and post the daily question of ``fire_time``'s local date. None if another won."""
        local_date = fire_time.astimezone(ZoneInfo(view.timezone)).date()
        now = self.drill.clock.now()
        async with self.db.write() as session:
            won = await session.scalar(
                dialect_insert(session, DailyClaim)
                .values(channel_id=view.channel_pk, local_date=local_date, claimed_at=now,
                        claimed_by=INSTANCE_ID)
                .on_conflict_do_nothing()
                .returning(DailyClaim.channel_id)
            )
        if won is None:
            return None
        return await self._send(view, local_date)

    async def _send(self, view: ScheduleView, local_date: date) -> int:
        drill = self.drill
        now = drill.clock.now()
        async with self.db.write() as session:
            claim = await session.get(DailyClaim, (view.channel_pk, local_date))
            assert claim is not None
            post = await session.get(Post, claim.post_id) if claim.post_id else None
            if post is None:
                candidates = pool(drill.library, topic=view.topic, kinds=[Kind.MCQ])
                key = f"mcq:{view.topic or 'all'}"
                question = await next_for_channel(session, view.channel_pk, candidates, key, drill.rng)
                post = await create_post(
                    session, question, kind="daily", now=now, channel_id=view.channel_pk,
                    closes_at=view.reveal_at(now), local_date=local_date, rng=drill.rng,
                )
                claim.post_id = post.id
            message = await public_view(session, drill.library, post)
            post_id = post.id
        ref = await self.publisher.publish(view.where, message)
        async with self.db.write() as session:
            stored = await session.get(Post, post_id)
            stored.platform_ref = ref
            claim = await session.get(DailyClaim, (view.channel_pk, local_date))
            claim.sent_at = drill.clock.now()
        return post_id

    async def recover_unsent(self) -> list[int]:
        """Finish claims whose owner died between claiming and sending (lease expired)."""
        now = self.drill.clock.now()
        async with self.db.read() as session:
            stale = (
                await session.execute(
                    select(DailyClaim.channel_id, DailyClaim.local_date, DailyClaim.claimed_by).where(
                        DailyClaim.sent_at.is_(None), DailyClaim.claimed_at <= now - CLAIM_LEASE
                    )
                )
            ).all()
        sent = []
        for channel_pk, local_date, owner in stale:
            async with self.db.write() as session:
                taken = await session.execute(
                    update(DailyClaim)
                    .where(
                        DailyClaim.channel_id == channel_pk,
                        DailyClaim.local_date == local_date,
                        DailyClaim.claimed_by == owner,
                        DailyClaim.sent_at.is_(None),
                    )
                    .values(claimed_by=INSTANCE_ID, claimed_at=now)
                )
            if not taken.rowcount:
                continue  # another replica took it over first
            view = await schedule_of(self.db, channel_pk)
            if view is not None:
                sent.append(await self._send(view, local_date))
        return sent

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
