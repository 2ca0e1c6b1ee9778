"""Group mocks: an admin schedules a mock for a channel at a time; at that time ONE post goes
up with a Start button; everyone who presses it gets their own private session of the SAME
items (fixed when it was scheduled, stored), ending at the group's close; when it closes, a
board of that mock goes up once in the post's thread.

Both posts are policies on bot.core.posting (the mechanism of the daily question): a claim row
unique on (group mock, kind) decides who posts, its owner's token fences the send and its
record, a claim left unsent past its lease is taken over, and the new owner looks in the
channel (or the thread) for the post's key before sending again. The scheduler's tick calls
``sweep``: what is due is posted by whichever replica wins its claim.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.commands.replies import Words
from bot.core.content.community import inert
from bot.core.daily.schedules import ScheduleError, parse_time
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import Clock
from bot.core.domain.identity import BadTimezoneError, Where, Who, check_timezone
from bot.core.domain.messages import Button, ButtonStyle, Message
from bot.core.mock import session as mock
from bot.core.mock.desk import MockDesk, unknown_track
from bot.core.mock.ports import GroupMockStore, GroupMockView, Taker
from bot.core.mock.tracks import community_tracks, find_track
from bot.core.posting.claims import LOOKBACK_MARGIN, Outcome
from bot.core.posting.poster import Lost, Poster, PosterSetting, Prepared
from bot.core.posting.poster import Words as LogWords
from bot.core.publisher import GROUP_BOARD_PREFIX, GROUP_MOCK_PREFIX, Delivery, Publisher
from bot.core.render.boards import MEDALS
from bot.core.render.notices import counted, notice

log = logging.getLogger(__name__)

POST, BOARD = "post", "board"
AHEAD_MAX = timedelta(days=30)
GROUP_WORDS = LogWords(
    log=log,
    lost_while_sending="group mock post {key}: claim taken over by another process while sending",
    taken_after_send=("group mock post {id} sent, but the claim was taken over; its new owner finds "
                      "the message before re-sending"),
    cannot_check=("group mock post {key} may already be in channel {channel}, but I cannot check ({why}); "
                  "not sending it again"),
    found="group mock post {key} was already in channel {channel}; recorded without re-sending",
)
WHEN_HOW = ("Say when: `{schedule} HH:MM [track] [minutes]` (the next HH:MM), or "
            "`{schedule} YYYY-MM-DD HH:MM …`; times are in the channel's timezone unless you add "
            "`timezone:Europe/Berlin`.")
NONE_HERE = "No group mocks are scheduled in this channel. " + WHEN_HOW
NOT_HERE = "There is no group mock #{id} in this channel; `{schedule}` lists them."
STARTED = "Group mock #{id} has started; it can no longer be cancelled."
CANCELLED = "Group mock #{id} ({when}) is cancelled; nothing will be posted."
NAME_IT = "Name the group mock to cancel: `{cancel} ID` (`{schedule}` lists them)."
PAST = "{when} has passed; pick a time ahead."
TOO_FAR = "{when} is more than 30 days ahead; schedule it nearer the day."


class GroupMockError(ValueError):
    """A member-facing reason the schedule was refused."""


def _local(moment: datetime, timezone: str) -> str:
    local = moment.astimezone(ZoneInfo(timezone))
    return f"{local:%a %d %b %H:%M} {local.tzname()}"


def parse_when(day: str | None, at: str | None, timezone: str, now: datetime) -> datetime:
    """The UTC start of ``[YYYY-MM-DD] HH:MM`` in ``timezone`` (no day: the next HH:MM).
    The two words may come in either option (the text grammar fills the first free one)."""
    words = [w.strip() for w in (day, at) if w and w.strip()]
    dates = [w for w in words if re.fullmatch(r"\d{4}-\d{2}-\d{2}", w)]
    times = [w for w in words if w not in dates]
    if len(times) != 1 or len(dates) > 1:
        raise GroupMockError("")
    hhmm = parse_time(times[0])
    zone = ZoneInfo(timezone)
    hour, minute = map(int, hhmm.split(":"))
    if dates:
        try:
            on = date.fromisoformat(dates[0])
        except ValueError:
            raise GroupMockError(f"{dates[0]!r} is not a date.") from None
        return datetime.combine(on, time(hour, minute), tzinfo=zone).astimezone(ZoneInfo("UTC"))
    today = now.astimezone(zone).date()
    start = datetime.combine(today, time(hour, minute), tzinfo=zone)
    if start <= now:
        start = datetime.combine(today + timedelta(days=1), time(hour, minute), tzinfo=zone)
    return start.astimezone(ZoneInfo("UTC"))


def _contents(items: list[tuple[str, str, str]]) -> str:
    parts = []
    for kind, one, many in ((mock.MCQ, "MCQ", "MCQs"), (mock.EXPLAIN, "explain-it question (self-graded)",
                                                          "explain-it questions (self-graded)"),
                            (mock.CODE, "coding challenge", "coding challenges")):
        n = sum(1 for k, _, _ in items if k == kind)
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts)


def announcement(group: GroupMockView, track_name: str) -> Message:
    """The post at the start: what it holds, until when, and the Start button."""
    msg = Message(title=f"🎤 Group mock #{group.id} · {track_name} · {group.minutes} min")
    msg.text(f"Everyone gets the same {len(group.items)} questions: {_contents(group.items)}. Press "
             f"**Start** for your own private session; every session ends at "
             f"{_local(group.closes_at, group.timezone)}.")
    msg.text("The board of this mock appears in this post's thread when it closes.")
    msg.buttons = [Button(Action(Verb.JOIN, group.id).encode(), "Start", ButtonStyle.PRIMARY)]
    return msg


def ranked(takers: list[Taker]) -> list[tuple[int, Taker]]:
    """By score, then time (faster first); equal score and time share a rank."""
    order = sorted(takers, key=lambda t: (-round(t.score, 6), round(t.seconds), t.name, t.user_id))
    ranks: list[tuple[int, Taker]] = []
    for i, t in enumerate(order, 1):
        prev = ranks[-1] if ranks else None
        same = prev is not None and round(prev[1].score, 6) == round(t.score, 6) \
            and round(prev[1].seconds) == round(t.seconds)
        ranks.append((prev[0] if same and prev else i, t))
    return ranks


def board(group: GroupMockView, track_name: str, takers: list[Taker]) -> Message:
    """The board when it closes: members by score then time, their names inert."""
    msg = Message(title=f"🏁 Group mock #{group.id} closed · {track_name} · {group.minutes} min")
    if not takers:
        return msg.text("Nobody took this mock.")
    lines = [f"{MEDALS.get(rank, f'{rank}.')} **{inert(t.name)}** — {_mark(t.marks)}/{t.items} "
             f"({t.score:.0%}) · {mock.duration(t.seconds)}" for rank, t in ranked(takers)]
    msg.text(f"{counted(len(takers), 'member')} took part · ranked by score, then time:\n" + "\n".join(lines))
    return msg


def _mark(value: float) -> str:
    return f"{value:g}" if abs(value - round(value)) < 1e-9 else f"{value:.1f}"


@dataclass(frozen=True)
class Held:
    claim_id: int
    token: str

    @property
    def key(self) -> int:
        return self.claim_id


class GroupMocks:
    """``/mock schedule`` and ``/mock cancel``, the Start button, and the posts (``sweep``)."""

    lease = PosterSetting[timedelta]("lease")
    renew_every_s = PosterSetting[float]("renew_every_s")
    publish_deadline_s = PosterSetting[float]("publish_deadline_s")

    def __init__(self, store: GroupMockStore, desk: MockDesk, clock: Clock, publisher: Publisher) -> None:
        self.store, self.desk, self.clock, self.publisher = store, desk, clock, publisher
        self.poster = Poster(store.claims, clock.now, GROUP_WORDS)

    # ---- admin -------------------------------------------------------------------------------
    async def schedule(self, who: Who, where: Where, *, day: str | None, at: str | None,
                       timezone: str | None, track_word: str | None, minutes: int, words: Words) -> Message:
        command = words.command("mock schedule")
        if not (day or at):
            if track_word:  # `/mock schedule ml`: a track without a time
                return notice(WHEN_HOW.format(schedule=command))
            return await self.listing(where, words)
        now = self.clock.now()
        zone = (timezone or "").strip() or await self.store.channel_timezone(where)
        try:
            check_timezone(zone)
            starts = parse_when(day, at, zone, now)
        except (GroupMockError, ScheduleError, BadTimezoneError) as exc:
            why = str(exc)
            return notice((why + " " if why else "") + WHEN_HOW.format(schedule=command))
        when = _local(starts, zone)
        if starts <= now:
            return notice(PAST.format(when=when))
        if starts - now > AHEAD_MAX:
            return notice(TOO_FAR.format(when=when))
        extra = await self.desk.community_track_list(who)
        chosen = find_track(track_word, extra)
        if chosen is None:
            return notice(unknown_track(track_word or "", extra))
        items = self.desk.pick_items(self.desk.library.offered_to(where.community), chosen, minutes, set(),
                                     lambda q: abs(q.difficulty - chosen.difficulty), set())
        triples = [(i.kind, i.ref, i.topic) for i in items]
        group_id = await self.store.create(where, chosen.slug, minutes, starts, zone, triples, who.user_id, now)
        return notice(
            f"Group mock #{group_id} scheduled: {chosen.name} · {minutes} min · {when}. At that time "
            f"I post it here with a Start button; everyone who presses it gets the same "
            f"{len(triples)} questions ({_contents(triples)}), and the board goes up when it closes at "
            f"{_local(starts + timedelta(minutes=minutes), zone)}. "
            f"`{words.command('mock cancel')} {group_id}` cancels it.")

    async def listing(self, where: Where, words: Words) -> Message:
        found = await self.store.upcoming(where)
        if not found:
            return notice(NONE_HERE.format(schedule=words.command("mock schedule")))
        now = self.clock.now()
        lines = []
        for g in found:
            state = ("scheduled" if g.starts_at > now else
                     "not posted (the bot was away)" if g.post_ref is None and g.closes_at <= now else
                     f"running · {counted(g.takers, 'member')} joined" if g.closes_at > now else "closing")
            lines.append(f"#{g.id} · {_local(g.starts_at, g.timezone)} · {await self._name(g)} · "
                         f"{g.minutes} min · {state}")
        return notice("**Group mocks in this channel**\n" + "\n".join(lines)
                      + f"\n`{words.command('mock cancel')} ID` cancels one before it starts.")

    async def cancel(self, where: Where, group_id: int | None, words: Words) -> Message:
        if group_id is None:
            return notice(NAME_IT.format(cancel=words.command("mock cancel"),
                                         schedule=words.command("mock schedule")))
        before = await self.store.cancel(where, group_id, self.clock.now())
        if before is None or before.cancelled:
            return notice(NOT_HERE.format(id=group_id, schedule=words.command("mock schedule")))
        after = await self.store.get(group_id)
        if after is None or not after.cancelled:
            return notice(STARTED.format(id=group_id))
        return notice(CANCELLED.format(id=group_id, when=_local(before.starts_at, before.timezone)))

    # ---- members -----------------------------------------------------------------------------
    async def join(self, who: Who, group_id: int, words: Words) -> Message:
        group = await self.store.get(group_id)
        if group is None or group.cancelled or self.clock.now() < group.starts_at:
            return notice("This group mock is not open.")
        return await self.desk.join_group(who, group, words)

    async def _name(self, group: GroupMockView) -> str:
        found = find_track(group.track)
        if found is not None and found.slug == group.track:
            return found.name
        who = Who(group.where.platform, group.where.workspace, "")
        extra = community_tracks(await self.desk.store.community_tracks(who))
        found = find_track(group.track, extra)
        return found.name if found is not None else group.track

    # ---- posting (the scheduler's tick) --------------------------------------------------------
    async def sweep(self) -> int:
        """Post what is due once: stale claims taken over, announcements whose time has come,
        boards of the mocks that closed (their open sessions ended first). Posts made."""
        made = 0
        for claim_id in await self.poster.stale():
            token = await self.poster.take_over(claim_id)
            if token is not None:  # None: another replica took it over first
                made += await self._try(Held(claim_id, token), f"claim {claim_id}")
        now = self.clock.now()
        for group_id in await self.store.due_posts(now):
            made += await self._claim_and_send(group_id, POST)
        for group_id in await self.store.due_boards(now):
            for mock_id, member_id in await self.store.open_sessions(group_id):
                await self.desk.end_one(mock_id, member_id, self.publisher)  # final scores first
            made += await self._claim_and_send(group_id, BOARD)
        return made

    async def _claim_and_send(self, group_id: int, kind: str) -> int:
        won = await self.poster.claim((group_id, kind))
        if won is None:
            return 0  # another replica (or an earlier tick) has it
        return await self._try(Held(*won), f"{group_id} {kind}")

    async def _try(self, held: Held, what: str) -> int:
        try:
            return await self._send(held)
        except Exception as exc:  # the claim stays unsent: a sweep after its lease retries it
            log.warning("group mock %s not posted yet (will retry): %s: %s", what, type(exc).__name__, exc)
            return 0

    async def _send(self, held: Held) -> int:
        sent = await self.poster.send(held, await self._prepare(held), self.publisher)
        return 1 if sent.outcome is Outcome.POSTED else 0

    async def _prepare(self, held: Held) -> Prepared | Lost:
        """The announcement, or the board into the announcement's thread, under the fence."""
        key = await self.store.claim_of(held.claim_id)
        opened = await self.store.open_claim(held.claim_id, held.token, self.clock.now())
        if key is None or opened is None:
            return Lost(held.claim_id)
        retry, opened_at = opened
        group = await self.store.get(key[0])
        if group is None:
            return Lost(held.claim_id)
        name = await self._name(group)
        since = opened_at - LOOKBACK_MARGIN
        if key[1] == POST:
            return Prepared(held.claim_id, group.where, announcement(group, name),
                            Delivery(group.id, since, GROUP_MOCK_PREFIX), retry)
        message = board(group, name, await self.store.takers(group.id))
        delivery = Delivery(group.id, since, GROUP_BOARD_PREFIX, thread_of=group.post_ref, marker=message.title)
        return Prepared(held.claim_id, group.where, message, delivery, retry)
