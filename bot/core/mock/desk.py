"""/mock as a service: picks the items, keeps the session in storage (so it survives a
restart), records answers through the same paths as /quiz (an Answer row and the FSRS card
for every MCQ and explain-it item) and ends the mock at its deadline: a member's next click
after it, or the scheduler's sweep, whichever comes first, claims the end once.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.core.challenges.desk import SUBMIT_HOW, ChallengeDesk, challenge_message
from bot.core.commands.replies import Words
from bot.core.content.bank import Kind, Library, Question
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big, yaml_shape_problem
from bot.core.domain.actions import Action
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.domain.messages import Message, Upload
from bot.core.domain.topics import TOPICS
from bot.core.drill.delivery import tell_privately
from bot.core.drill.selection import without_twins
from bot.core.learning.adaptive import DEFAULT_BAND, quiz_order
from bot.core.mock import interview
from bot.core.mock import session as mock
from bot.core.mock.chart import Taken, attachment, summary
from bot.core.mock.ports import GroupMockView, ItemState, MockState, MockStore, MockTx
from bot.core.mock.tracks import (
    TRACKS,
    Track,
    check_community_tracks,
    community_tracks,
    find_track,
    listing,
    looks_like_tracks,
    per_track,
    track,
)
from bot.core.publisher import Publisher
from bot.core.render.notices import notice

log = logging.getLogger(__name__)
NOTE_MAX = 300
PROBLEMS_SHOWN = 15


def _short(text: str, limit: int = NOTE_MAX) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _ticks(stored: str) -> list[int]:
    return [int(x) for x in stored.split(",") if x]


def _noted(message: Message, note: str) -> Message:
    """``message`` with a line before its blocks (a refusal, or "answer recorded")."""
    message.blocks.insert(0, notice(note).blocks[0])
    return message


def allocate(weights: dict[str, int], count: int) -> dict[str, int]:
    """``count`` slots shared by weight (largest remainder; ties to the heavier, then by name)."""
    live = {t: w for t, w in weights.items() if w > 0}
    total = sum(live.values())
    exact = {t: count * w / total for t, w in live.items()}
    slots = {t: int(x) for t, x in exact.items()}
    rest = sorted(live, key=lambda t: (-(exact[t] - slots[t]), -live[t], t))
    for t in rest[: count - sum(slots.values())]:
        slots[t] += 1
    return slots


def _name(slug: str, extra: Sequence[Track]) -> str:
    """A stored mock's track name (a track since removed reads by its slug)."""
    found = find_track(slug, extra)
    return found.name if found is not None else track(slug).name


def tracks_problems(filename: str, lines: list[str]) -> Message:
    """Why an uploaded tracks file was refused, as /bank upload says it of a bank."""
    msg = Message(title=f"{filename} was not stored: fix these and upload it again", ephemeral=True)
    shown = lines[:PROBLEMS_SHOWN]
    more = f"\n… and {len(lines) - len(shown)} more" if len(lines) > len(shown) else ""
    msg.code("\n".join(shown) + more, language="text")
    return msg


def unknown_track(word: str, extra: Sequence[Track]) -> str:
    return mock.UNKNOWN_TRACK.format(track=_short(word, 40), tracks=listing(extra))


class MockDesk:
    """Starts, advances, ends and reports mocks; every rule and text is the core's."""

    def __init__(self, store: MockStore, library: Library, clock: Clock, challenges: ChallengeDesk,
                 rng: random.Random | None = None, band: tuple[float, float] = DEFAULT_BAND) -> None:
        self.store, self.library, self.clock = store, library, clock
        self.challenges = challenges
        self.rng = rng or random.Random()
        self.band = band
        challenges.verdict_listeners.append(self.on_verdict)

    # ---- commands --------------------------------------------------------------------------
    async def command(self, who: Who, action: str | None, track_slug: str | None, minutes: int,
                      text: str | None, words: Words, day: str | None = None) -> Message:
        if action == "date":
            return await self.set_date(who, day, words)
        if action == "answer":
            return await self.answer(who, text or "", words)
        if text:  # `/mock ml thirty`: words that are no option of a start
            return notice(mock.STRAY_TEXT.format(text=_short(text, 60), mock=words.command("mock")))
        if action in ("status", "end"):
            async with self.store.member(who) as tx:
                found = await self._open_of(tx, words)
                if isinstance(found, Message):
                    return found
                if action == "end":
                    return await self._finish(tx, found, words)
                return await self._show(tx, found, words)
        return await self.start(who, track_slug, minutes, words)

    async def start(self, who: Who, track_slug: str | None, minutes: int, words: Words) -> Message:
        async with self.store.member(who) as tx:
            found = await self._open_of(tx, words)
            if isinstance(found, MockState):
                return _noted(await self._show(tx, found, words), mock.ALREADY)
            extra = community_tracks(await tx.community_tracks())
            chosen = find_track(track_slug, extra)
            if chosen is None:
                return notice(unknown_track(track_slug or "", extra))
            now = self.clock.now()
            items = await self._pick(tx, who, chosen, minutes)
            state = MockState(0, tx.member_id, chosen.slug, minutes, 0, now, now + timedelta(minutes=minutes),
                              ready_before=await tx.readiness())
            state.id = await tx.create(state, items)
            return await self._show(tx, state, words)

    async def set_date(self, who: Who, day: str | None, words: Words) -> Message:
        """``/mock date YYYY-MM-DD`` (or ``clear``; nothing: the date set and its countdown)."""
        how = interview.HOW.format(date=words.command("mock date"))
        today = self.clock.now().date()
        async with self.store.member(who) as tx:
            if day is None or not day.strip():
                current = await tx.interview_day()
                line = interview.countdown(today, current) if current else None
                return notice(line + " " + how if line else interview.NONE_SET.format(
                    date=words.command("mock date")))
            if day.strip().lower() == interview.CLEAR:
                await tx.set_interview_day(None)
                return notice(interview.CLEARED)
            parsed = interview.parse_day(day)
            if parsed is None:
                return notice(f"{_short(day, 40)!r} is not a date. {how}")
            if parsed <= today:
                return notice(interview.PAST.format(day=parsed.isoformat(), date=words.command("mock date")))
            if (parsed - today).days > interview.HORIZON_DAYS:
                return notice(interview.TOO_FAR.format(day=parsed.isoformat(),
                                                              date=words.command("mock date")))
            await tx.set_interview_day(parsed)
            last = [s.started_at.date() for s in await tx.finished()]
        lines = [interview.SET.format(day=interview.long_day(parsed)), interview.countdown(today, parsed) or ""]
        suggested = interview.suggestion(today, parsed, last[-1] if last else None, words.command("mock"))
        if suggested:
            lines.append(suggested[0].upper() + suggested[1:] + ".")
        return notice("\n".join(lines))

    async def answer(self, who: Who, text: str, words: Words) -> Message:
        """``/mock answer TEXT``: the explain-it answer on screen; the checklist comes back."""
        async with self.store.member(who) as tx:
            found = await self._open_of(tx, words)
            if isinstance(found, Message):
                return found
            items = await tx.items(found.id)
            item = items[found.position]
            if item.kind != mock.EXPLAIN:
                return _noted(await self._show(tx, found, words), mock.NOT_EXPLAIN)
            if not text.strip():
                return notice(f"Write your answer after `{words.command('mock answer')}`.")
            item.answer, item.answered_at = text, self.clock.now()
            await tx.save(found, [item])
            return await self._show(tx, found, words)

    async def press(self, who: Who, action: Action, words: Words | None = None) -> Message:
        """A button of a mock item: a pick, a tick, Done or Skip."""
        words = words or Words()
        index, what = divmod(action.arg, mock.STRIDE)
        async with self.store.member(who) as tx:
            state = await tx.mock(action.post_id)
            if state is None:
                return notice(mock.NO_MOCK.format(mock=words.command("mock")))
            if state.member_id != tx.member_id:
                return notice(mock.NOT_YOURS)
            if state.finished_at is not None or self._expired(state):
                return await self._finish(tx, state, words)
            if index != state.position:
                return _noted(await self._show(tx, state, words), mock.STALE)
            item = (await tx.items(state.id))[index]
            now = self.clock.now()
            if item.kind == mock.MCQ and what < mock.TICK:
                assert item.post_id is not None
                picked = await tx.record_pick(item.post_id, what)
                if not picked.recorded:
                    return picked.refusal or notice(mock.STALE)
                item.score, item.answered_at = float(picked.correct), now
                return await self._advance(tx, state, item, words, mock.RECORDED)
            if item.kind == mock.EXPLAIN and mock.TICK <= what < mock.DONE:
                k = what - mock.TICK
                if item.answer is not None and k < len(mock.key_points(self.library[item.ref])):
                    item.ticks = ",".join(map(str, sorted(set(_ticks(item.ticks)) ^ {k})))
                    await tx.save(state, [item])
                return await self._show(tx, state, words)
            if what == mock.DONE:
                if item.kind == mock.EXPLAIN:
                    await self._grade_explain(tx, item, now)
                else:
                    item.score, item.answered_at = item.score or 0.0, now
                return await self._advance(tx, state, item, words, None)
            return notice("That button does not match this item.")

    async def stats_part(self, who: Who, message: Message, words: Words | None = None) -> None:
        """/stats: the member's mock scores over time, a line and a chart (none taken: nothing)."""
        async with self.store.member(who) as tx:
            ended = await tx.finished()
            ready = await tx.topic_readiness() if ended else None
            day = await tx.interview_day()
            extra = community_tracks(await tx.community_tracks()) if ended else []
        today = self.clock.now().date()
        line = interview.countdown(today, day) if day else None
        if day and line:
            suggested = interview.suggestion(today, day, ended[-1].started_at.date() if ended else None,
                                             (words or Words()).command("mock"))
            message.text(line + (f" {suggested[0].upper()}{suggested[1:]}." if suggested else ""))
        taken = [Taken(s.started_at, s.score or 0.0, _name(s.track, extra)) for s in ended]
        if not taken:
            return
        message.text(summary(taken))
        if ready is not None:
            message.text(mock.READY_PER_TRACK + " · ".join(
                f"{t.name} {per_track(t, ready):.0%}" for t in (*TRACKS, *extra)))
        message.attachments.append(await attachment(taken))

    async def track_choices(self, who: Who, prefix: str = "") -> list[tuple[str, str]]:
        """(slug, label) of the built-in tracks and ``who``'s community's, for autocomplete."""
        extra = community_tracks(await self.store.community_tracks(who))
        wanted = prefix.strip().lower()
        return [(t.slug, f"{t.name} ({t.slug})") for t in (*TRACKS, *extra)
                if not wanted or wanted in t.slug or wanted in t.name.lower()][:25]

    async def community_track_list(self, who: Who) -> list[Track]:
        return community_tracks(await self.store.community_tracks(who))

    @staticmethod
    def is_tracks_file(upload: Upload) -> bool:
        """An upload for /bank upload that is a tracks file, not a bank."""
        try:
            text = upload.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return False
        return upload.filename.lower().endswith((".yaml", ".yml")) and looks_like_tracks(text)

    async def upload_tracks(self, who: Who, upload: Upload) -> Message:
        """/bank upload of a tracks file: checked like content/tracks.yaml, stored when clean
        (it replaces the community's tracks)."""
        if len(upload.data) > MAX_UPLOAD_BYTES:
            return tracks_problems(upload.filename, [f"line 1: {too_big(len(upload.data))}"])
        text = upload.data.decode("utf-8-sig")
        shape = yaml_shape_problem(text)
        if shape is not None:
            return tracks_problems(upload.filename, [shape])
        found, problems = check_community_tracks(text, upload.filename)
        if problems:
            return tracks_problems(upload.filename, [f"line {p.line}: {p.message}"
                                                     for p in sorted(problems, key=lambda p: p.line)])
        await self.store.set_community_tracks(who, text)
        msg = Message(title=f"Tracks stored: {len(found)} of this community's own", ephemeral=True)
        msg.text(mock.TRACKS_STORED + "\n" + "\n".join(
            f"`{t.slug}` **{t.name}** · " + ", ".join(f"{TOPICS.get(k, k)} {w}" for k, w in t.weights.items())
            for t in found))
        return msg

    # ---- group mocks -----------------------------------------------------------------------
    async def join_group(self, who: Who, group: GroupMockView, words: Words) -> Message:
        """Start pressed under a group mock's post: the member's own session of its items,
        ending at the group's close (pressed again: where they are, or their report)."""
        now = self.clock.now()
        async with self.store.member(who) as tx:
            joined = await tx.joined(group.id)
            if joined is None and now >= group.closes_at:
                return notice(mock.GROUP_CLOSED.format(id=group.id))
            if joined is None:
                running = await tx.open_mock()
                if running is not None and not self._expired(running):
                    return notice(mock.GROUP_BUSY.format(end=words.command("mock end")))
                if running is not None:
                    await self._claim(tx, running)  # past its deadline: ended (its report stays in /stats)
                items = [ItemState(i, kind, ref, topic) for i, (kind, ref, topic) in enumerate(
                    (k, r, t) for k, r, t in group.items
                    if (self.challenges.bank.get(r) is not None if k == mock.CODE else r in self.library))]
                if not items:
                    return notice(mock.GROUP_EMPTY)
                state = MockState(0, tx.member_id, group.track, group.minutes, 0, now, group.closes_at,
                                  ready_before=await tx.readiness())
                state.id = await tx.create(state, items)
                if await tx.join(group.id, state.id):
                    return await self._show(tx, state, words)
                await tx.discard(state.id)  # a second press raced the first: theirs stands
                joined = await tx.joined(group.id)
            assert joined is not None
            found = await tx.mock(joined)
            assert found is not None
            if found.finished_at is not None or self._expired(found):
                return await self._finish(tx, found, words)
            return _noted(await self._show(tx, found, words), mock.GROUP_ALREADY)

    async def end_one(self, mock_id: int, member_id: int, publisher: Publisher) -> bool:
        """End one mock past its deadline and tell its member the report (False: it had
        ended already, by the member or another replica)."""
        async with self.store.member_id(member_id) as tx:
            state = await tx.mock(mock_id)
            if state is None or not await self._claim(tx, state):
                return False
            report = await self._report(tx, state, Words())
        await tell_privately(publisher, await self.store.who(member_id), report)
        return True

    # ---- the deadline ----------------------------------------------------------------------
    async def sweep(self, publisher: Publisher) -> int:
        """End every mock past its deadline and tell its member the report (the scheduler's
        tick, also right at start-up, so a restart ends what fell due meanwhile)."""
        told = 0
        await self.store.bring_reviews_forward(self.clock.now())
        for mock_id, member_id in await self.store.due(self.clock.now()):
            told += await self.end_one(mock_id, member_id, publisher)  # False: ended meanwhile
        return told

    # ---- coding verdicts -------------------------------------------------------------------
    async def on_verdict(self, who: Who, challenge_id: str, passed: int, total: int, solved: bool) -> None:
        """A judged /submit counts for the member's running mock if its coding item is on."""
        async with self.store.member(who) as tx:
            state = await tx.open_mock()
            if state is None or self._expired(state):
                return
            item = (await tx.items(state.id))[state.position]
            if item.kind != mock.CODE or item.ref != challenge_id:
                return
            score = 1.0 if solved else (passed / total if total else 0.0)
            if item.score is None or score >= item.score:
                item.score = score
                item.detail = "solved" if solved else f"{passed}/{total} tests passed"
                await tx.save(state, [item])

    # ---- internals -------------------------------------------------------------------------
    def _expired(self, state: MockState) -> bool:
        return self.clock.now() >= state.deadline_at

    async def _open_of(self, tx: MockTx, words: Words) -> MockState | Message:
        """The member's running mock; one past its deadline is ended here (report returned)."""
        state = await tx.open_mock()
        if state is None:
            return notice(mock.NO_MOCK.format(mock=words.command("mock")))
        if self._expired(state):
            return await self._finish(tx, state, words)
        return state

    async def _pick(self, tx: MockTx, who: Who, chosen: Track, minutes: int) -> list[ItemState]:
        """MCQs shared among the track's topics by weight, nearest the member's success band
        first (unseen first); explain-it questions with a checklist; one of its challenges."""
        return self.pick_items(self.library.offered_to(who.community), chosen, minutes, await tx.seen(),
                               await tx.ring_of(self.band), await tx.solved_challenges())

    def pick_items(self, offered: Sequence[Question], chosen: Track, minutes: int, seen: set[str],
                   ring_of: Callable[[Question], int], solved: set[str]) -> list[ItemState]:
        """The items of a mock (a group mock's: nobody's history, nearest the track's difficulty)."""
        n_mcq, n_explain, n_code = mock.item_count(minutes)
        mcqs = [q for q in offered if q.kind is Kind.MCQ]
        in_track = [q for q in mcqs if chosen.weights.get(q.topic, 0) > 0]
        ordered = without_twins(quiz_order(in_track, lambda q: q.id in seen, ring_of, self.rng))
        picked: list[Question] = []
        for topic, slots in allocate(chosen.weights, n_mcq).items():
            picked += [q for q in ordered if q.topic == topic][:slots]
        for q in ordered + without_twins(quiz_order(mcqs, lambda q: q.id in seen, ring_of, self.rng)):
            if len(picked) < n_mcq and all(q.id != p.id for p in picked):
                picked.append(q)  # the track's topics ran short: nearest the band elsewhere
        position = {q.id: i for i, q in enumerate(ordered)}
        picked.sort(key=lambda q: position.get(q.id, len(position)))  # nearest the band first
        explains = [q for q in offered if q.kind in (Kind.FLASHCARD, Kind.DEEP_DIVE)
                    and len(mock.key_points(q)) >= 2]
        preferred = [q for q in explains if chosen.weights.get(q.topic, 0) > 0] or explains
        self.rng.shuffle(preferred)
        preferred.sort(key=lambda q: (q.id in seen, abs(q.difficulty - chosen.difficulty)))
        items = [(mock.MCQ, q.id, q.topic) for q in picked[:n_mcq]]
        items += [(mock.EXPLAIN, q.id, q.topic) for q in preferred[:n_explain]]
        pool = [c for c in (self.challenges.bank.get(cid) for cid in chosen.challenges) if c is not None]
        if pool and n_code:
            code = self.rng.choice([c for c in pool if c.id not in solved] or pool)
            items.append((mock.CODE, code.id, code.topic))
        return [ItemState(i, kind, ref, topic) for i, (kind, ref, topic) in enumerate(items)]

    def _screen(self, state: MockState, items: list[ItemState], item: ItemState, name: str) -> mock.Screen:
        same = [i.idx for i in items if i.kind == item.kind]
        return mock.Screen(state.id, item.idx, len(items), same.index(item.idx) + 1, len(same),
                           name, self.clock.now(), state.deadline_at)

    @staticmethod
    async def _track_name(tx: MockTx, slug: str) -> str:
        found = find_track(slug)
        if found is not None and found.slug == slug:
            return found.name
        return _name(slug, community_tracks(await tx.community_tracks()))

    async def _show(self, tx: MockTx, state: MockState, words: Words) -> Message:
        """The item on screen (shown for the first time: its time starts, its post is made)."""
        items = await tx.items(state.id)
        item = items[state.position]
        if item.shown_at is None:
            item.shown_at = self.clock.now()
            if item.kind == mock.CODE:
                challenge = self.challenges.bank.get(item.ref)
                assert challenge is not None
                await tx.make_current(challenge)  # the member's /submit judges this one
            else:
                item.post_id = await tx.new_post(self.library[item.ref], self.rng)
            await tx.save(state, [item])
        screen = self._screen(state, items, item, await self._track_name(tx, state.track))
        if item.kind == mock.CODE:
            challenge = self.challenges.bank.get(item.ref)
            assert challenge is not None
            how = SUBMIT_HOW.format(submit=words.command("submit"), challenge=words.command("challenge"))
            return mock.code_message(screen, challenge_message(challenge, how), words.command("submit"))
        question = self.library[item.ref]
        if item.kind == mock.MCQ:
            assert item.post_id is not None
            return mock.mcq_message(screen, question, await tx.order_of(item.post_id))
        if item.answer is None:
            return mock.explain_message(screen, question, words.command("mock answer"))
        return mock.checklist_message(screen, question, item.answer, set(_ticks(item.ticks)))

    async def _grade_explain(self, tx: MockTx, item: ItemState, now: datetime) -> None:
        """Done on an explain-it item: the share of key points ticked, and the card graded."""
        total = len(mock.key_points(self.library[item.ref]))
        covered = len(_ticks(item.ticks)) if item.answer is not None else 0
        item.score = covered / total if total else 0.0
        item.answered_at = item.answered_at or now
        if item.post_id is not None:
            await tx.record_grade(item.post_id, int(mock.explain_rating(covered, total)))

    async def _advance(self, tx: MockTx, state: MockState, item: ItemState, words: Words,
                       note: str | None) -> Message:
        state.position += 1
        await tx.save(state, [item])
        if state.position >= len(await tx.items(state.id)):
            return await self._finish(tx, state, words)
        shown = await self._show(tx, state, words)
        return _noted(shown, note) if note else shown

    async def _claim(self, tx: MockTx, state: MockState) -> bool:
        """End the mock once: unanswered questions enter the deck as misses (rated Again)."""
        end = min(self.clock.now(), state.deadline_at)
        if not await tx.claim(state.id, end):
            return False
        state.finished_at = end
        items = await tx.items(state.id)
        for item in items:
            if item.kind != mock.CODE and item.score is None and item.ref in self.library:
                await tx.review_again(item.ref)
        state.ready_after = await tx.readiness()
        state.score = sum(i.score or 0.0 for i in items) / len(items) if items else 0.0
        await tx.save(state, [])
        return True

    async def _finish(self, tx: MockTx, state: MockState, words: Words) -> Message:
        if state.finished_at is None and not await self._claim(tx, state):
            state = await tx.mock(state.id) or state  # ended meanwhile: read its end
        return await self._report(tx, state, words)

    async def _report(self, tx: MockTx, state: MockState, words: Words) -> Message:
        items = await tx.items(state.id)
        median = mock.median_seconds([ms for qid, ms in await tx.answer_times(state.started_at)
                                      if (q := self.library.get(qid)) is not None and q.kind is Kind.MCQ])
        results = [self._result(i) for i in items]
        ended_at = state.finished_at or self.clock.now()
        left = (state.deadline_at - ended_at).total_seconds()
        if left <= 0:
            ended = f"⏰ Time ran out at {state.deadline_at:%H:%M} UTC."
        elif all(i.answered_at is not None for i in items):
            ended = f"Finished with {mock.duration(left)} to spare."
        else:
            ended = f"Ended early with {mock.duration(left)} left."
        day = await tx.interview_day()
        today = self.clock.now().date()
        countdown = interview.countdown(today, day) if day else None
        previous = [s.started_at.date() for s in await tx.finished() if s.id != state.id]
        suggested = (interview.suggestion(today, day, max([*previous, state.started_at.date()]),
                                          words.command("mock")) if day and countdown else None)
        report = mock.Report(await self._track_name(tx, state.track), state.minutes, ended, results, median,
                             state.ready_before, state.ready_after, mock.weakest_topics(results),
                             countdown, suggested)
        return mock.report_message(report, words.command("review"), words.command("quiz"))

    def _result(self, item: ItemState) -> mock.ItemResult:
        seconds = mock.seconds_between(item.shown_at, item.answered_at)
        if item.kind == mock.CODE:
            challenge = self.challenges.bank.get(item.ref)
            title = challenge.title if challenge else item.ref
            return mock.ItemResult(item.kind, item.topic, f"Coding: {title}", item.score, seconds,
                                   item.detail or "no verdict")
        if item.kind == mock.EXPLAIN and item.answer is None:
            seconds = None  # skipped, or time ran out before an answer: nothing was timed
        question = self.library.get(item.ref)
        prompt = _short(question.prompt, 150) if question else item.ref
        note = ""
        if question is not None and item.kind == mock.MCQ:
            note = _short(f"answer: {question.choices[question.answer_index]}. {question.explanation}")
        elif question is not None:
            total = len(mock.key_points(question))
            covered = len(_ticks(item.ticks)) if item.answer is not None else 0
            note = _short(f"{covered}/{total} key points (self-graded). {question.explanation}")
        return mock.ItemResult(item.kind, item.topic, prompt, item.score, seconds, note)
