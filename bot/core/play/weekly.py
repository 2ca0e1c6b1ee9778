"""Weekly posts per channel: the weekly coding challenge, exactly once per channel and week.

The same guarantee as the daily question with less machinery: a claim row unique on
(channel, kind, local week) decides who posts; its owner's token fences the record of the send;
a claim left unsent past its lease is taken over, and the new owner first searches the channel
for the post's idempotency key (``Delivery`` with ``WEEKLY_PREFIX``) before sending again. A send
is bounded by ``PUBLISH_DEADLINE_S``, shorter than the lease, so an owner never has to renew.

When the next week's challenge goes out (or seven days have passed) the previous one closes:
its thread lists who solved it during its week, by name only, never their code. The close is
recorded before it is published (at most once: a crash in between loses that summary, never
doubles it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from bot.core import render
from bot.core.content.bank import Library
from bot.core.content.challenges import Challenge, ChallengeBank, load_challenges
from bot.core.model.actions import Action, Verb
from bot.core.model.clock import Clock, as_utc
from bot.core.model.identity import Where, channel_row
from bot.core.model.messages import Button, ButtonStyle, Message
from bot.core.model.publisher import Publisher
from bot.core.model.topics import TOPICS
from bot.core.play.daily import (
    CATCH_UP_GRACE,
    CLAIM_LEASE,
    LOOKBACK_MARGIN,
    PUBLISH_DEADLINE_S,
    WEEKDAYS,
    ScheduleError,
    ScheduleView,
    all_schedules,
    attempt_of,
    parse_time,
    schedule_of,
    token_for,
)
from bot.core.play.delivery import (
    WEEKLY_PREFIX,
    Delivery,
    LookupUnavailableError,
    permalink,
    send_or_find,
)
from bot.core.progress.digest import digest_message, weekly_digest
from bot.core.progress.progress_charts import board_attachment
from bot.storage.models import ChallengeProgress, Channel, Member, Schedule, WeeklyClaim
from bot.storage.upsert import dialect_insert

if TYPE_CHECKING:
    from bot.storage.db import Database

log = logging.getLogger(__name__)

CLOSE_AFTER = timedelta(days=7)
NEEDS_DAILY = ("Set this channel's daily schedule first with /daily schedule: weekly posts use "
               "its timezone.")
TAKE_IT = ("Take it with `/challenge week`, then `/submit` your solution · {points} points for a "
           "first solve · closes {closes}")
NO_WEEKLY = "This channel has no weekly challenge this week. Admins start one with /daily challenge."


class WeeklyKind(StrEnum):
    CHALLENGE = "challenge"
    DIGEST = "digest"

    @property
    def label(self) -> str:
        return f"Weekly {self.value}"

    @property
    def column(self) -> str:
        """Where a schedule keeps this kind's "mon 09:00" (Schedule and ScheduleView alike)."""
        return f"{self.value}_at"


def parse_weekly(day: str | None, at: str | None) -> str | None:
    """``"mon 09:00"`` from a day and a time; None when the day is ``off``."""
    word = (day or "").strip().lower()
    if word == "off":
        return None
    if len(word) < 3 or word[:3] not in WEEKDAYS:
        raise ScheduleError(f"invalid day {day!r}: use mon, tue, wed, thu, fri, sat, sun, or off")
    if not at:
        raise ScheduleError("give a time too, e.g. time:09:00")
    return f"{word[:3]} {parse_time(at)}"


def week_start(moment: datetime, timezone: str) -> date:
    """The local Monday of ``moment``'s week."""
    local = moment.astimezone(ZoneInfo(timezone)).date()
    return local - timedelta(days=local.weekday())


def fire_time(spec: str, timezone: str, monday: date) -> datetime:
    day, hhmm = spec.split()
    hour, minute = map(int, hhmm.split(":"))
    local = datetime.combine(monday + timedelta(days=WEEKDAYS.index(day)), time(hour, minute),
                             tzinfo=ZoneInfo(timezone))
    return local.astimezone(ZoneInfo("UTC"))


def spec_of(view: ScheduleView, kind: WeeklyKind) -> str | None:
    return getattr(view, kind.column)  # type: ignore[no-any-return]


def weekly_message(claim_id: int, challenge: Challenge, closes: datetime, timezone: str) -> Message:
    local = closes.astimezone(ZoneInfo(timezone))
    msg = Message(title=f"🧩 Weekly challenge: {challenge.title} · {render.stars(challenge.difficulty)} · "
                        f"{TOPICS[challenge.topic]}")
    msg.text(challenge.statement.strip())
    msg.code(challenge.stub.rstrip())
    msg.footer = TAKE_IT.format(points=challenge.points, closes=f"{local:%a %d %b %H:%M} {local.tzname()}")
    msg.buttons = [Button(Action(Verb.TAKE, claim_id).encode(), "Take this challenge", ButtonStyle.PRIMARY)]
    return msg


def closing_message(challenge: Challenge, solvers: list[str]) -> Message:
    msg = Message(title=f"🏁 Weekly challenge closed: {challenge.title}")
    if not solvers:
        msg.text("Nobody solved it this week. It stays open to everyone with /challenge.")
    else:
        msg.text(f"Solved by {render.counted(len(solvers), 'member')}, in order: " + ", ".join(solvers))
    return msg


@dataclass(frozen=True)
class Held:
    """A weekly claim we hold under ``token``."""

    claim_id: int
    view: ScheduleView
    token: str


class WeeklyPosting:
    """Weekly challenge administration, posting and closing."""

    def __init__(self, db: Database, clock: Clock, publisher: Publisher,
                 bank: ChallengeBank | None = None,
                 on_change: Callable[[], Awaitable[None]] | None = None,
                 library: Library | None = None) -> None:
        self.db = db
        self.library = library or Library(banks=[])
        self.on_change = on_change  # awaited after a schedule changes (the scheduler rebuilds)
        self.clock = clock
        self.publisher = publisher
        self._bank = bank
        self.lease = CLAIM_LEASE
        self.publish_deadline_s = PUBLISH_DEADLINE_S

    @property
    def bank(self) -> ChallengeBank:
        if self._bank is None:
            self._bank = load_challenges()
        return self._bank

    def now(self) -> datetime:
        return self.clock.now()

    # ---- admin ---------------------------------------------------------------------------
    async def set_weekly(self, where: Where, kind: WeeklyKind, day: str | None, at: str | None) -> Message:
        if kind is WeeklyKind.DIGEST and (day or "").strip().lower() == "now":
            return await self.digest_now(where)
        try:
            spec = parse_weekly(day, at)
        except ValueError as exc:
            return render.notice(str(exc))
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            done = await session.execute(
                update(Schedule).where(Schedule.channel_id == channel.id)
                .values({kind.column: spec, "updated_at": self.now()})
            )
            channel_pk = channel.id
        if not done.rowcount:
            return render.notice(NEEDS_DAILY)
        if self.on_change is not None:
            await self.on_change()
        view = await schedule_of(self.db, channel_pk)
        assert view is not None
        if spec is None:
            return render.notice(f"{kind.label} turned off for this channel.")
        nxt = self.next_fire(view, kind, self.now())
        local = nxt.astimezone(ZoneInfo(view.timezone))
        return render.notice(f"{kind.label}: {spec} {view.timezone}. "
                             f"Next: {local:%a %d %b %H:%M} {local.tzname()}.")

    def next_fire(self, view: ScheduleView, kind: WeeklyKind, now: datetime) -> datetime:
        spec = spec_of(view, kind)
        assert spec is not None
        monday = week_start(now, view.timezone)
        this_week = fire_time(spec, view.timezone, monday)
        return this_week if this_week > now else fire_time(spec, view.timezone, monday + timedelta(days=7))

    async def digest_now(self, where: Where) -> Message:
        """Post last week's digest at once (an extra: this week's scheduled one still comes)."""
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        view = await schedule_of(self.db, channel_pk)
        if view is None:
            return render.notice(NEEDS_DAILY)
        message = await self._digest_post(0, view, week_start(self.now(), view.timezone))
        message.buttons = []  # an extra has no claim for a button to name
        await self.publisher.publish(where, message)
        return render.notice("Posted last week's digest.")

    async def _digest_post(self, claim_id: int, view: ScheduleView, monday: date) -> Message:
        """The digest of the week before ``monday``, with its chart and a "My progress" button."""
        async with self.db.read() as session:
            digest = await weekly_digest(session, self.library, view.channel_pk, view.timezone,
                                         monday - timedelta(days=7))
        ref = digest.hardest.platform_ref if digest.hardest else None
        link = await permalink(self.publisher, view.where, ref) if ref else None
        message = digest_message(digest, link)
        message.attachments.append(await board_attachment(digest.chart))
        message.buttons = [Button(Action(Verb.PROGRESS, claim_id).encode(), "📈 My progress",
                                  ButtonStyle.SECONDARY)]
        return message

    # ---- posting -------------------------------------------------------------------------
    async def fire(self, channel_pk: int, kind: WeeklyKind = WeeklyKind.CHALLENGE) -> int | None:
        """What the scheduler's weekly job calls: close last week's, post this week's."""
        view = await schedule_of(self.db, channel_pk)
        if view is None or view.paused or spec_of(view, kind) is None:
            return None
        if kind is WeeklyKind.CHALLENGE:
            await self.close_due()
        held = await self._insert_claim(view, kind, week_start(self.now(), view.timezone))
        if held is None:
            return None
        return await self._send(held)

    async def catch_up(self) -> list[int]:
        """This week's post that a restart missed (within the daily grace window)."""
        now, posted = self.now(), []
        for view in await all_schedules(self.db):
            for kind in WeeklyKind:
                spec = spec_of(view, kind)
                if view.paused or spec is None:
                    continue
                at = fire_time(spec, view.timezone, week_start(now, view.timezone))
                if at <= now <= at + CATCH_UP_GRACE:
                    claim_id = await self.fire(view.channel_pk, kind)
                    if claim_id is not None:
                        posted.append(claim_id)
        return posted

    async def _insert_claim(self, view: ScheduleView, kind: WeeklyKind, monday: date) -> Held | None:
        token = token_for(1)
        async with self.db.write() as session:
            won = await session.scalar(
                dialect_insert(session, WeeklyClaim)
                .values(channel_id=view.channel_pk, kind=kind.value, week_start=monday,
                        claimed_at=self.now(), claimed_by=token)
                .on_conflict_do_nothing(index_elements=["channel_id", "kind", "week_start"])
                .returning(WeeklyClaim.id)
            )
        return None if won is None else Held(won, view, token)

    def _fence(self, held: Held) -> tuple[object, ...]:
        return (WeeklyClaim.id == held.claim_id, WeeklyClaim.claimed_by == held.token,
                WeeklyClaim.sent_at.is_(None))

    async def _pick(self, session, channel_pk: int) -> Challenge:  # noqa: ANN001
        """A problem this channel has not had yet (all used: start over), easiest first."""
        used = set(await session.scalars(
            select(WeeklyClaim.item).where(WeeklyClaim.channel_id == channel_pk,
                                           WeeklyClaim.item.is_not(None))))
        fresh = [c for c in self.bank.challenges if c.id not in used] or list(self.bank.challenges)
        return min(fresh, key=lambda c: (c.difficulty, c.id))

    async def _send(self, held: Held) -> int | None:
        """Post the claim's challenge once; a retry looks in the channel before re-sending."""
        now = self.now()
        async with self.db.write() as session:
            row = await session.get(WeeklyClaim, held.claim_id)
            if row is None or row.claimed_by != held.token or row.sent_at is not None:
                return None
            retry = row.opened_at is not None
            if row.opened_at is None:
                row.opened_at = now
            delivery = Delivery(row.id, as_utc(row.opened_at) - LOOKBACK_MARGIN, WEEKLY_PREFIX)
            kind, monday = WeeklyKind(row.kind), row.week_start
            if kind is WeeklyKind.CHALLENGE:
                if row.item is None or self.bank.get(row.item) is None:
                    row.item = (await self._pick(session, held.view.channel_pk)).id
                challenge = self.bank.get(row.item)
                assert challenge is not None
                closes = as_utc(row.opened_at) + CLOSE_AFTER
        if kind is WeeklyKind.DIGEST:
            message = await self._digest_post(held.claim_id, held.view, monday)
        else:
            message = weekly_message(held.claim_id, challenge, closes, held.view.timezone)
        try:
            ref = await asyncio.wait_for(self._deliver(held.view.where, message, delivery, retry),
                                         self.publish_deadline_s)
        except Exception:
            async with self.db.write() as session:  # expire our lease: the next tick retries
                await session.execute(update(WeeklyClaim).where(*self._fence(held))
                                      .values(claimed_at=self.now() - self.lease))
            raise
        if ref is None:
            return None
        async with self.db.write() as session:
            done = await session.execute(update(WeeklyClaim).where(*self._fence(held))
                                         .values(sent_at=self.now(), platform_ref=ref))
        if not done.rowcount:
            log.warning("weekly challenge %s sent, but the claim was taken over; its new owner "
                        "finds the message before re-sending", held.claim_id)
            return None
        return held.claim_id

    async def _deliver(self, where: Where, message: Message, delivery: Delivery, retry: bool) -> str | None:
        try:
            ref, _ = await send_or_find(self.publisher, where, message, delivery, retry=retry)
        except LookupUnavailableError as exc:
            log.error("weekly post %s may already be in channel %s, but I cannot check (%s); "
                      "not sending it again", delivery.key, where.channel_id, exc)
            return None
        return ref

    async def recover_unsent(self) -> list[int]:
        """Finish every unsent weekly claim whose lease expired (another process died)."""
        now = self.now()
        async with self.db.read() as session:
            stale = (await session.execute(
                select(WeeklyClaim.id, WeeklyClaim.channel_id, WeeklyClaim.claimed_by).where(
                    WeeklyClaim.sent_at.is_(None), WeeklyClaim.claimed_at <= now - self.lease))).all()
        sent = []
        for claim_id, channel_pk, old in stale:
            view = await schedule_of(self.db, channel_pk)
            if view is None:
                continue
            token = token_for(attempt_of(old) + 1)
            async with self.db.write() as session:
                taken = await session.execute(
                    update(WeeklyClaim).where(WeeklyClaim.id == claim_id, WeeklyClaim.claimed_by == old,
                                              WeeklyClaim.sent_at.is_(None))
                    .values(claimed_by=token, claimed_at=now))
            if not taken.rowcount:
                continue  # another replica took it over first
            try:
                done = await self._send(Held(claim_id, view, token))
            except Exception as exc:
                log.warning("weekly challenge of channel %s not sent yet (will retry): %s: %s",
                            view.where.channel_id, type(exc).__name__, exc, exc_info=True)
                continue
            if done is not None:
                sent.append(done)
        return sent

    # ---- closing -------------------------------------------------------------------------
    async def close_due(self) -> list[int]:
        """Close every sent challenge a newer one replaced, or older than a week."""
        now = self.now()
        async with self.db.read() as session:
            rows = (await session.execute(
                select(WeeklyClaim).where(WeeklyClaim.kind == WeeklyKind.CHALLENGE.value,
                                          WeeklyClaim.sent_at.is_not(None), WeeklyClaim.closed_at.is_(None))
                .order_by(WeeklyClaim.channel_id, WeeklyClaim.week_start))).scalars().all()
        closed = []
        for row in rows:
            replaced = any(r.channel_id == row.channel_id and r.week_start > row.week_start for r in rows)
            due = as_utc(row.sent_at) + CLOSE_AFTER <= now  # type: ignore[arg-type]
            if (replaced or due or await self._newer_due(row, now)) and await self._close(row, now):
                closed.append(row.id)
        return closed

    async def _newer_due(self, row: WeeklyClaim, now: datetime) -> bool:
        """This week's post time has come in the row's channel (its post may still be sending)."""
        view = await schedule_of(self.db, row.channel_id)
        spec = view and spec_of(view, WeeklyKind(row.kind))
        if not view or not spec:
            return False
        monday = week_start(now, view.timezone)
        return monday > row.week_start and fire_time(spec, view.timezone, monday) <= now

    async def solvers(self, row: WeeklyClaim, until: datetime) -> list[str]:
        """Members of the channel's community who solved the item during its week, first first."""
        async with self.db.read() as session:
            channel = await session.get(Channel, row.channel_id)
            assert channel is not None
            names = await session.scalars(
                select(Member.display_name)
                .join(ChallengeProgress, ChallengeProgress.member_id == Member.id)
                .where(ChallengeProgress.challenge_id == row.item,
                       ChallengeProgress.workspace_id == channel.workspace_id,
                       ChallengeProgress.solved_at >= row.sent_at,
                       ChallengeProgress.solved_at <= until)
                .order_by(ChallengeProgress.solved_at, Member.id))
            return list(names)

    async def _close(self, row: WeeklyClaim, now: datetime) -> bool:
        async with self.db.write() as session:
            won = await session.execute(update(WeeklyClaim).where(WeeklyClaim.id == row.id,
                                                                  WeeklyClaim.closed_at.is_(None))
                                        .values(closed_at=now))
        if not won.rowcount:
            return False
        challenge = self.bank.get(row.item or "")
        view = await schedule_of(self.db, row.channel_id)
        if challenge is None or view is None or row.platform_ref is None:
            return True
        until = min(now, as_utc(row.sent_at) + CLOSE_AFTER)  # type: ignore[arg-type]
        message = closing_message(challenge, await self.solvers(row, until))
        try:
            await self.publisher.publish(view.where, message, thread_of=row.platform_ref)
        except Exception as exc:
            log.warning("closing summary of weekly challenge %s not posted: %s", row.id, exc)
        return True

    # ---- members -------------------------------------------------------------------------
    async def item_of(self, claim_id: int) -> str | None:
        """The challenge a weekly post (its "Take this challenge" button) shows."""
        async with self.db.read() as session:
            row = await session.get(WeeklyClaim, claim_id)
            return row.item if row is not None and row.sent_at is not None else None

    async def current_item(self, where: Where) -> str | None:
        """The challenge this channel's latest weekly post shows, while it is open."""
        async with self.db.write() as session:
            channel_pk = (await channel_row(session, where)).id
        async with self.db.read() as session:
            return await session.scalar(
                select(WeeklyClaim.item).where(WeeklyClaim.channel_id == channel_pk,
                                               WeeklyClaim.kind == WeeklyKind.CHALLENGE.value,
                                               WeeklyClaim.sent_at.is_not(None),
                                               WeeklyClaim.closed_at.is_(None))
                .order_by(WeeklyClaim.week_start.desc()).limit(1))
