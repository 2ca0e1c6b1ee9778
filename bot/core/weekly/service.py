"""Weekly posts per channel: the weekly challenge, the weekly digest and the challenge's
closing summary, each exactly once per channel and week.

They are policies on bot.core.posting, the mechanism the daily question uses too: a claim row
unique on (channel, kind, local week) decides who posts; its owner's token fences the send and
its record; a claim left unsent past its lease is taken over, and the new owner first searches
the channel for the post's idempotency key (``Delivery`` with ``WEEKLY_PREFIX``) before sending.

When the next week's challenge goes out (or seven days have passed) the previous one closes:
its thread lists who solved it during its week, by name only, never their code. Closing is a
claim too (kind ``closing``, the challenge's week): whoever wins it marks the challenge closed
and posts the summary into the challenge's thread, keyed, so a crash between the send and its
record is finished by recovery, which looks in the thread first: exactly once, not at most once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from bot.core.content.bank import Library
from bot.core.content.challenges import Challenge, ChallengeBank, shipped_challenges
from bot.core.daily.schedules import (
    CATCH_UP_GRACE,
    WEEKDAYS,
    ScheduleError,
    ScheduleView,
    parse_time,
    view_of,
)
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import Clock, as_utc
from bot.core.domain.identity import Where
from bot.core.domain.messages import Button, ButtonStyle, Message
from bot.core.domain.topics import TOPICS
from bot.core.drill.delivery import permalink
from bot.core.posting.claims import LOOKBACK_MARGIN, ClaimStore, Outcome
from bot.core.posting.keyed import WEEKLY_PREFIX, Delivery
from bot.core.posting.poster import Lost, Poster, PosterSetting, Prepared, Words
from bot.core.progress.progress_charts import board_attachment
from bot.core.publisher import Publisher
from bot.core.render.notices import counted, notice
from bot.core.render.questions import stars
from bot.core.weekly.digest import digest_message, weekly_digest
from bot.core.weekly.ports import DigestReads
from bot.storage.claims import WeeklyClaims, WeeklyNatural, rows_changed
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.identity import channel_row
from bot.storage.models import ChallengeProgress, Channel, Member, Schedule, WeeklyClaim
from bot.storage.schedules import (
    all_schedules,
    schedule_of,
    schedule_rows_of,
    weekly_claimed_since,
)

if TYPE_CHECKING:
    from bot.storage.db import Database

log = logging.getLogger(__name__)

WEEKLY_WORDS = Words(
    log=log,
    lost_while_sending="weekly post {key}: claim taken over by another process while sending",
    taken_after_send=("weekly challenge {id} sent, but the claim was taken over; its new owner finds "
                      "the message before re-sending"),
    cannot_check=("weekly post {key} may already be in channel {channel}, but I cannot check ({why}); "
                  "not sending it again"),
    found="weekly post {key} was already in channel {channel}; recorded without re-sending",
)
CLOSING = "closing"  # the claim kind of a challenge's closing summary (its week, its channel)
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
    return getattr(view, kind.column)


def weekly_message(claim_id: int, challenge: Challenge, closes: datetime, timezone: str) -> Message:
    local = closes.astimezone(ZoneInfo(timezone))
    msg = Message(title=f"🧩 Weekly challenge: {challenge.title} · {stars(challenge.difficulty)} · "
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
        msg.text(f"Solved by {counted(len(solvers), 'member')}, in order: " + ", ".join(solvers))
    return msg


@dataclass(frozen=True)
class Held:
    """A weekly claim we hold under ``token``."""

    claim_id: int
    view: ScheduleView
    token: str

    @property
    def key(self) -> int:
        return self.claim_id


class WeeklyPosting:
    """Weekly challenge administration, posting and closing."""

    lease = PosterSetting[timedelta]("lease")
    renew_every_s = PosterSetting[float]("renew_every_s")
    publish_deadline_s = PosterSetting[float]("publish_deadline_s")

    def __init__(self, db: Database, clock: Clock, publisher: Publisher,
                 bank: ChallengeBank | None = None,
                 on_change: Callable[[], Awaitable[None]] | None = None,
                 library: Library | None = None,
                 claims: ClaimStore[WeeklyNatural, int] | None = None,
                 digest_reads: DigestReads | None = None) -> None:
        self.db = db
        self.digest_reads = digest_reads or StoredDigestReads()
        self.library = library or Library(banks=[])
        self.on_change = on_change  # awaited after a schedule changes (the scheduler rebuilds)
        self.clock = clock
        self.publisher = publisher
        self._bank = bank
        self.poster = Poster(claims or WeeklyClaims(db), self.now, WEEKLY_WORDS)

    @property
    def bank(self) -> ChallengeBank:
        if self._bank is None:
            self._bank = shipped_challenges()
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
            return notice(str(exc))
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            done = await session.execute(
                update(Schedule).where(Schedule.channel_id == channel.id)
                .values({kind.column: spec, "updated_at": self.now()})
            )
            channel_pk = channel.id
        if not rows_changed(done):
            return notice(NEEDS_DAILY)
        if self.on_change is not None:
            await self.on_change()
        view = await schedule_of(self.db, channel_pk)
        assert view is not None
        if spec is None:
            return notice(f"{kind.label} turned off for this channel.")
        nxt = self.next_fire(view, kind, self.now())
        local = nxt.astimezone(ZoneInfo(view.timezone))
        return notice(f"{kind.label}: {spec} {view.timezone}. "
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
            return notice(NEEDS_DAILY)
        message = await self._digest_post(0, view, week_start(self.now(), view.timezone))
        message.buttons = []  # an extra has no claim for a button to name
        await self.publisher.publish(where, message)
        return notice("Posted last week's digest.")

    async def _digest_post(self, claim_id: int, view: ScheduleView, monday: date) -> Message:
        """The digest of the week before ``monday``, with its chart and a "My progress" button."""
        async with self.db.read() as session:
            digest = await weekly_digest(self.digest_reads, session, self.library, view.channel_pk, view.timezone,
                                         monday - timedelta(days=7))
        ref = digest.hardest.platform_ref if digest.hardest else None
        link = await permalink(self.publisher, view.where, ref) if ref else None
        message = digest_message(digest, link)
        message.attachments.append(await board_attachment(digest.chart))
        message.buttons = [Button(Action(Verb.PROGRESS, claim_id).encode(), "📈 My progress",
                                  ButtonStyle.SECONDARY)]
        return message

    # ---- posting ----------------------------------------------------------------------
    async def fire(self, channel_pk: int, kind: WeeklyKind = WeeklyKind.CHALLENGE) -> int | None:
        """What the scheduler's weekly job calls: close last week's, post this week's."""
        view = await schedule_of(self.db, channel_pk)
        if view is None or view.paused or spec_of(view, kind) is None:
            return None
        if kind is WeeklyKind.CHALLENGE:
            await self.close_due(channel_pk)  # this channel's only: a fire reads no other channel
        held = await self._insert_claim(view, kind, week_start(self.now(), view.timezone))
        if held is None:
            return None
        return await self._send(held)

    async def catch_up(self) -> list[int]:
        """This week's post that a restart missed (within the daily grace window)."""
        posted = []
        for view, kind in self.missing(await all_schedules(self.db), self.now(), set()):
            claim_id = await self.fire(view.channel_pk, kind)
            if claim_id is not None:
                posted.append(claim_id)
        return posted

    def missing(self, views: list[ScheduleView], now: datetime, claimed: set[WeeklyNatural],
                grace: timedelta = CATCH_UP_GRACE) -> list[tuple[ScheduleView, WeeklyKind]]:
        """Each active (schedule, kind) whose post time this week lies within ``grace`` before
        ``now`` and that has no claim in ``claimed``: a fire that failed or never ran."""
        due = []
        for view in views:
            for kind in WeeklyKind:
                spec = spec_of(view, kind)
                if view.paused or spec is None:
                    continue
                monday = week_start(now, view.timezone)
                at = fire_time(spec, view.timezone, monday)
                if at <= now <= at + grace and (view.channel_pk, kind.value, monday) not in claimed:
                    due.append((view, kind))
        return due

    async def unclaimed(self, views: list[ScheduleView], now: datetime,
                        grace: timedelta = CATCH_UP_GRACE) -> list[tuple[ScheduleView, WeeklyKind]]:
        """``missing`` against the claims in the database (what the periodic sweep queues)."""
        oldest = (now - grace - timedelta(days=8)).date()
        async with self.db.read() as session:
            claimed = await weekly_claimed_since(session, oldest)
        return self.missing(views, now, claimed, grace)

    async def _insert_claim(self, view: ScheduleView, kind: WeeklyKind | str, monday: date) -> Held | None:
        won = await self.poster.claim((view.channel_pk, str(kind), monday))
        return None if won is None else Held(won[0], view, won[1])

    async def _pick(self, session, channel_pk: int) -> Challenge:  # noqa: ANN001
        """A problem this channel has not had yet (all used: start over), easiest first."""
        used = set(await session.scalars(
            select(WeeklyClaim.item).where(WeeklyClaim.channel_id == channel_pk,
                                           WeeklyClaim.item.is_not(None))))
        fresh = [c for c in self.bank.challenges if c.id not in used] or list(self.bank.challenges)
        return min(fresh, key=lambda c: (c.difficulty, c.id))

    async def _send(self, held: Held) -> int | None:
        """Post the claim's post once (bot.core.posting); a retry looks before re-sending."""
        sent = await self.poster.send(held, await self._prepare(held), self.publisher)
        return held.claim_id if sent.outcome in (Outcome.POSTED, Outcome.FOUND) else None

    async def _prepare(self, held: Held) -> Prepared | Lost:
        """What the claim posts: the challenge (picked once), the digest, or the closing summary
        (into the challenge's thread). ``opened_at`` marks the first attempt: later ones retry."""
        now = self.now()
        challenge_row: WeeklyClaim | None = None  # what a closing summary closes
        async with self.db.write() as session:
            row = await session.get(WeeklyClaim, held.claim_id)
            if row is None or row.claimed_by != held.token or row.sent_at is not None:
                return Lost(held.claim_id)
            retry = row.opened_at is not None
            if row.opened_at is None:
                row.opened_at = now
            opened, kind, monday = as_utc(row.opened_at), row.kind, row.week_start
            if kind == WeeklyKind.CHALLENGE.value:
                if row.item is None or self.bank.get(row.item) is None:
                    row.item = (await self._pick(session, held.view.channel_pk)).id
                challenge = self.bank.get(row.item)
            elif kind == CLOSING:
                challenge_row = await session.scalar(select(WeeklyClaim).where(
                    WeeklyClaim.channel_id == row.channel_id, WeeklyClaim.week_start == monday,
                    WeeklyClaim.kind == WeeklyKind.CHALLENGE.value))
                if challenge_row is not None and challenge_row.closed_at is None:
                    challenge_row.closed_at = now  # a crash came between the claim and the mark
        delivery = Delivery(held.claim_id, opened - LOOKBACK_MARGIN, WEEKLY_PREFIX)
        if kind == WeeklyKind.DIGEST.value:
            message = await self._digest_post(held.claim_id, held.view, monday)
        elif kind == CLOSING:
            summary = await self._summary(challenge_row)
            if challenge_row is None or summary is None:
                return Lost(held.claim_id)  # nothing to close into: stays unsent, never posted
            message = summary
            delivery = replace(delivery, thread_of=challenge_row.platform_ref, marker=message.title)
        else:
            assert challenge is not None  # picked above
            message = weekly_message(held.claim_id, challenge, opened + CLOSE_AFTER, held.view.timezone)
        return Prepared(held.claim_id, held.view.where, message, delivery, retry)

    async def recover_unsent(self) -> list[int]:
        """Finish every unsent weekly claim whose lease expired (another process died, or its
        send failed): challenges, digests and closing summaries alike."""
        sent = []
        for claim_id in await self.poster.stale():
            async with self.db.read() as session:
                channel_pk = await session.scalar(select(WeeklyClaim.channel_id).where(WeeklyClaim.id == claim_id))
            view = await schedule_of(self.db, channel_pk) if channel_pk is not None else None
            if view is None:
                continue
            token = await self.poster.take_over(claim_id)
            if token is None:
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
    async def close_due(self, channel_pk: int | None = None) -> list[int]:
        """Close every sent challenge a newer one replaced, or older than a week (in one
        channel, or in all). One read of the open challenges and one of their schedules."""
        now = self.now()
        query = (select(WeeklyClaim).where(WeeklyClaim.kind == WeeklyKind.CHALLENGE.value,
                                           WeeklyClaim.sent_at.is_not(None), WeeklyClaim.closed_at.is_(None))
                 .order_by(WeeklyClaim.channel_id, WeeklyClaim.week_start))
        if channel_pk is not None:
            query = query.where(WeeklyClaim.channel_id == channel_pk)
        async with self.db.read() as session:
            rows = (await session.execute(query)).scalars().all()
            if not rows:
                return []
            views = {r.channel_pk: view_of(r)
                     for r in await schedule_rows_of(session, {row.channel_id for row in rows})}
        newest: dict[int, date] = {}
        for row in rows:
            newest[row.channel_id] = max(newest.get(row.channel_id, row.week_start), row.week_start)
        closed = []
        for row in rows:
            replaced = newest[row.channel_id] > row.week_start
            due = as_utc(row.sent_at) + CLOSE_AFTER <= now  # type: ignore[arg-type]  # sent_at is set: the query kept sent rows only
            view = views.get(row.channel_id)
            if (replaced or due or self._newer_due(row, view, now)) and await self._close(row, now, view):
                closed.append(row.id)
        return closed

    def _newer_due(self, row: WeeklyClaim, view: ScheduleView | None, now: datetime) -> bool:
        """This week's post time has come in the row's channel (its post may still be sending)."""
        spec = view and spec_of(view, WeeklyKind(row.kind))
        if not view or not spec:
            return False
        monday = week_start(now, view.timezone)
        return monday > row.week_start and fire_time(spec, view.timezone, monday) <= now

    async def solvers(self, row: WeeklyClaim, until: datetime) -> list[str]:
        """Members of the channel's community who solved the item during its week, first first."""
        assert row.sent_at is not None
        return await self._solvers(row.channel_id, row.item, as_utc(row.sent_at), until)

    async def _solvers(self, channel_pk: int, item: str | None, since: datetime, until: datetime) -> list[str]:
        async with self.db.read() as session:
            channel = await session.get(Channel, channel_pk)
            assert channel is not None
            names = await session.scalars(
                select(Member.display_name)
                .join(ChallengeProgress, ChallengeProgress.member_id == Member.id)
                .where(ChallengeProgress.challenge_id == item,
                       ChallengeProgress.workspace_id == channel.workspace_id,
                       ChallengeProgress.solved_at >= since,
                       ChallengeProgress.solved_at <= until)
                .order_by(ChallengeProgress.solved_at, Member.id))
            return list(names)

    async def _summary(self, row: WeeklyClaim | None) -> Message | None:
        """The closing summary of challenge claim ``row``: its solvers from its post until it
        closed (at most a week), the same on every attempt; None when there is nothing to say
        it in (the problem left the bank, or the post has no message)."""
        if row is None or row.sent_at is None or row.platform_ref is None:
            return None
        challenge = self.bank.get(row.item or "")
        if challenge is None:
            return None
        sent = as_utc(row.sent_at)
        until = min(as_utc(row.closed_at) if row.closed_at else self.now(), sent + CLOSE_AFTER)
        return closing_message(challenge, await self._solvers(row.channel_id, row.item, sent, until))

    async def _close(self, row: WeeklyClaim, now: datetime, view: ScheduleView | None = None) -> bool:
        """Close challenge claim ``row`` once: False when it is closed (or closing) already.

        With a summary to post, winning the closing claim is the decision; the challenge is
        marked closed next and the summary sent under that claim (a crash anywhere after the
        claim is finished by recovery). Without one, marking it closed is the decision."""
        view = view or await schedule_of(self.db, row.channel_id)
        summary = (view is not None and row.platform_ref is not None
                   and self.bank.get(row.item or "") is not None)
        held = await self._insert_claim(view, CLOSING, row.week_start) if summary and view else None
        if summary and held is None:
            return False  # another process (or an earlier attempt) is closing it
        async with self.db.write() as session:
            won = await session.execute(update(WeeklyClaim).where(WeeklyClaim.id == row.id,
                                                                  WeeklyClaim.closed_at.is_(None))
                                        .values(closed_at=now))
        if held is None:
            return bool(rows_changed(won))
        try:
            await self._send(held)
        except Exception as exc:
            log.warning("closing summary of weekly challenge %s not posted yet (will retry): %s",
                        row.id, exc)
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
