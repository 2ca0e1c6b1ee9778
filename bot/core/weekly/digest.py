"""The weekly digest of a channel: last week's board, movers, topics, streaks, hardest question.

Only revealed questions count: the digest is public, and an open question's picks stay private
until its reveal (the same predicate as the boards). Weeks are local weeks of the channel's
schedule, Monday to Sunday.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.content.bank import Kind, Library
from bot.core.domain.clock import as_utc
from bot.core.domain.messages import Message
from bot.core.domain.scoring import longest_streaks_label
from bot.core.domain.topics import TOPICS
from bot.core.learning.online import LABEL_LOGITS, PRIOR_VAR, Belief
from bot.core.learning.readiness import INTERVIEW_LEVEL, Readiness, group_ability, readiness
from bot.core.progress.chart_data import BoardChart, cumulative_lines
from bot.core.weekly.ports import DigestReads

if TYPE_CHECKING:
    from bot.core.stores import Tx

TOP = 5
MOVERS = 3
STREAKS = 3
MIN_TOPIC_ANSWERS = 3  # a weakest topic needs this many answers to be named
MIN_HARDEST_ANSWERS = 2  # a hardest question needs this many answers
READINESS_WEEKS = 4  # the group's readiness reads this many weeks of answers, the digest's last
GROUP = "group"


@dataclass(frozen=True)
class Hardest:
    prompt: str
    right: int
    answers: int
    posted: date
    platform_ref: str | None  # its message, for a link where the platform can make one


@dataclass(frozen=True)
class Digest:
    week: date  # local Monday of the week it sums up
    top: tuple[tuple[str, int], ...]  # name, points
    movers: tuple[tuple[str, int], ...]  # name, points gained over the week before
    topics: tuple[tuple[str, int, int], ...]  # topic, right, answers
    weakest: str | None
    streaks: tuple[tuple[str, int], ...]  # name, current daily streak
    hardest: Hardest | None
    chart: BoardChart
    readiness: tuple[Readiness, ...] = ()  # the group's, per topic with enough data, weakest first
    weekly_streaks: bool = False  # the channel counts streaks in weeks (``/daily streak weekly``)


def local_week(monday: date, tz: str) -> tuple[datetime, datetime]:
    """UTC bounds of the local week starting ``monday``."""
    start = datetime.combine(monday, time(0), tzinfo=ZoneInfo(tz))
    end = datetime.combine(monday + timedelta(days=7), time(0), tzinfo=ZoneInfo(tz))
    return start.astimezone(ZoneInfo("UTC")), end.astimezone(ZoneInfo("UTC"))


def _ranked(totals: dict[str, int], limit: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(((n, p) for n, p in totals.items() if p > 0), key=lambda x: (-x[1], x[0]))[:limit])


async def weekly_digest(reads: DigestReads, session: Tx, library: Library, channel_pk: int, tz: str,
                        monday: date) -> Digest:
    """The digest of the week starting ``monday``, read in the caller's transaction."""
    start, end = local_week(monday, tz)
    before, _ = local_week(monday - timedelta(days=7), tz)
    rows = await reads.revealed_answers(session, channel_pk, before, end)
    names = await reads.names_of(session, sorted({r.member_id for r in rows}))
    this_week = [r for r in rows if as_utc(r.answered_at) >= start]
    points: dict[str, int] = defaultdict(int)
    earlier: dict[str, int] = defaultdict(int)
    for r in rows:
        (points if as_utc(r.answered_at) >= start else earlier)[names[r.member_id]] += r.points
    top = _ranked(points, TOP)
    movers = _ranked({n: points[n] - earlier.get(n, 0) for n in points}, MOVERS)
    per_topic: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_post: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for r in this_week:
        per_topic[r.topic][0] += int(r.correct)
        per_topic[r.topic][1] += 1
        per_post[r.post_id][0] += int(r.correct)
        per_post[r.post_id][1] += 1
    topics = tuple(sorted(((t, c, n) for t, (c, n) in per_topic.items()), key=lambda x: (x[1] / x[2], x[0])))
    weakest = next((t for t, c, n in topics if n >= MIN_TOPIC_ANSWERS), None)
    streak_rows = await reads.running_streaks(session, channel_pk)
    streak_names = await reads.names_of(session, [m for m, _ in streak_rows])
    streaks = _ranked({streak_names[m]: c for m, c in streak_rows}, STREAKS)
    hardest = await _hardest(reads, session, library, per_post, tz)
    chart = BoardChart(
        f"Week of {monday:%d %b}: points of the top {len(top)}" if top else f"Week of {monday:%d %b}",
        cumulative_lines(((names[r.member_id], as_utc(r.answered_at), r.points) for r in this_week),
                         monday, monday + timedelta(days=6), tz, [n for n, _ in top]))
    ready = await group_readiness(reads, session, library, channel_pk, end - timedelta(weeks=READINESS_WEEKS), end)
    weekly = bool(await reads.streak_per_week(session, channel_pk))
    return Digest(monday, top, movers, topics, weakest, streaks, hardest, chart, ready, weekly)


async def group_readiness(reads: DigestReads, session: Tx, library: Library, channel_pk: int,
                          since: datetime, until: datetime) -> tuple[Readiness, ...]:
    """The channel as one learner: one ability per topic fitted to its revealed answers of the
    window against each question's stored (calibrated) difficulty (``group_ability``), so a
    topic the group keeps missing reads low even when no member alone has enough answers in
    it. Bounded: one aggregate row per question answered, no replay of the answers. Topics
    with too little data are left out; weakest first."""
    rows = await reads.question_counts(session, channel_pk, since, until)
    counted = [(t, q, n, ok) for t, q, n, ok in rows
               if q in library and library[q].kind is Kind.MCQ]  # flashcards record self-grades
    if not counted:
        return ()
    labels = {q: library[q].difficulty for _, q, _, _ in counted}
    workspace_id = await reads.workspace_of(session, channel_pk)
    stored = await reads.difficulties(session, labels, workspace_id or 0)
    evidence: dict[str, list[tuple[Belief, int, int]]] = defaultdict(list)
    for topic, q, n, ok in counted:
        prior = Belief(LABEL_LOGITS.get(labels[q], 0.0), PRIOR_VAR)
        evidence[topic].append((stored.get(q, prior), ok, n))
    found = [readiness(group_ability(GROUP, topic, terms), LABEL_LOGITS[INTERVIEW_LEVEL])
             for topic, terms in evidence.items()]
    return tuple(sorted((r for r in found if r.enough_data), key=lambda r: (r.expected, r.topic)))


async def _hardest(reads: DigestReads, session: Tx, library: Library, per_post: dict[int, list[int]],
                   tz: str) -> Hardest | None:
    """The question with the lowest share right (more answers, then the earlier post, first)."""
    candidates = sorted((c / n, -n, post_id) for post_id, (c, n) in per_post.items() if n >= MIN_HARDEST_ANSWERS)
    for _, _, post_id in candidates:
        post = await reads.post(session, post_id)
        question = library.get(post.question_id) if post is not None else None
        if post is None or question is None:
            continue
        right, answers = per_post[post_id]
        posted = as_utc(post.opened_at).astimezone(ZoneInfo(tz)).date()
        return Hardest(question.prompt, right, answers, posted, post.platform_ref)
    return None


def _pct(right: int, answers: int) -> str:
    return f"{round(100 * right / answers)}%"


def _share(r: Readiness) -> str:
    return f"{round(100 * r.expected)}% ({round(100 * r.low)}-{round(100 * r.high)}%)"


def digest_message(d: Digest, link: str | None = None) -> Message:
    """The digest as members read it; the same figures as the chart, so text alone suffices."""
    msg = Message(title=f"📬 Weekly digest · week of {d.week:%a %d %b}")
    if d.top:
        msg.text("🏆 **Top 5:** " + " · ".join(f"{i}. {n} {p} pts" for i, (n, p) in enumerate(d.top, 1)))
    else:
        msg.text("🏆 Nobody scored last week. Today is a good day to start.")
    if d.movers:
        msg.text("📈 **Biggest movers:** " + " · ".join(f"{n} +{p}" for n, p in d.movers))
    if d.topics:
        msg.text("🎯 **Accuracy per topic:** " + " · ".join(
            f"{TOPICS.get(t, t)} {_pct(c, n)} ({n})" for t, c, n in d.topics))
        if d.weakest:
            msg.text(f"Weakest topic: **{TOPICS.get(d.weakest, d.weakest)}**, a good pick for /quiz.")
    if d.readiness:
        weakest = d.readiness[0]
        others = " · ".join(f"{TOPICS.get(r.topic, r.topic)} {_share(r)}" for r in d.readiness[1:])
        msg.text(f"📚 **Interview readiness** (expected share right on a difficulty-3 question, last "
                 f"{READINESS_WEEKS} weeks): the group is weakest in **{TOPICS.get(weakest.topic, weakest.topic)}** "
                 f"{_share(weakest)}" + (f" · {others}" if others else ""))
    if d.streaks:
        msg.text(f"{longest_streaks_label(d.weekly_streaks)} " + " · ".join(f"{n} {c}" for n, c in d.streaks))
    if d.hardest:
        h = d.hardest
        prompt = h.prompt if len(h.prompt) <= 120 else h.prompt[:119] + "…"
        msg.text(f"🧠 **Hardest question:** “{prompt}” ({h.right} of {h.answers} right, "
                 f"{_pct(h.right, h.answers)}; posted {h.posted:%a %d %b})"
                 + (f" · its thread: {link}" if link else ""))
    return msg
