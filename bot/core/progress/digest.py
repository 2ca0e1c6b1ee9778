"""The weekly digest of a channel: last week's board, movers, topics, streaks, hardest question.

Only revealed questions count: the digest is public, and an open question's picks stay private
until its reveal (the same predicate as the boards). Weeks are local weeks of the channel's
schedule, Monday to Sunday.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Library
from bot.core.model.clock import as_utc
from bot.core.model.messages import Message
from bot.core.model.topics import TOPICS
from bot.core.progress.chart_data import BoardChart, cumulative_lines
from bot.storage.models import Answer, Post, Streak
from bot.storage.progress_queries import names_of, on_open_question

TOP = 5
MOVERS = 3
STREAKS = 3
MIN_TOPIC_ANSWERS = 3  # a weakest topic needs this many answers to be named
MIN_HARDEST_ANSWERS = 2  # a hardest question needs this many answers


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


def local_week(monday: date, tz: str) -> tuple[datetime, datetime]:
    """UTC bounds of the local week starting ``monday``."""
    start = datetime.combine(monday, time(0), tzinfo=ZoneInfo(tz))
    end = datetime.combine(monday + timedelta(days=7), time(0), tzinfo=ZoneInfo(tz))
    return start.astimezone(ZoneInfo("UTC")), end.astimezone(ZoneInfo("UTC"))


def _ranked(totals: dict[str, int], limit: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(((n, p) for n, p in totals.items() if p > 0), key=lambda x: (-x[1], x[0]))[:limit])


async def weekly_digest(session: AsyncSession, library: Library, channel_pk: int, tz: str,
                        monday: date) -> Digest:
    start, end = local_week(monday, tz)
    before, _ = local_week(monday - timedelta(days=7), tz)
    rows = (await session.execute(
        select(Answer.member_id, Answer.answered_at, Answer.points, Answer.correct, Answer.topic,
               Answer.post_id)
        .where(Answer.channel_id == channel_pk, Answer.answered_at >= before, Answer.answered_at < end,
               ~on_open_question()))).all()
    names = await names_of(session, sorted({r.member_id for r in rows}))
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
    streak_rows = (await session.execute(
        select(Streak.member_id, Streak.current).where(Streak.channel_id == channel_pk, Streak.current > 0))).all()
    streak_names = await names_of(session, [m for m, _ in streak_rows])
    streaks = _ranked({streak_names[m]: c for m, c in streak_rows}, STREAKS)
    hardest = await _hardest(session, library, per_post, tz)
    chart = BoardChart(
        f"Week of {monday:%d %b}: points of the top {len(top)}" if top else f"Week of {monday:%d %b}",
        cumulative_lines(((names[r.member_id], as_utc(r.answered_at), r.points) for r in this_week),
                         monday, monday + timedelta(days=6), tz, [n for n, _ in top]))
    return Digest(monday, top, movers, topics, weakest, streaks, hardest, chart)


async def _hardest(session: AsyncSession, library: Library, per_post: dict[int, list[int]],
                   tz: str) -> Hardest | None:
    """The question with the lowest share right (more answers, then the earlier post, first)."""
    candidates = sorted((c / n, -n, post_id) for post_id, (c, n) in per_post.items() if n >= MIN_HARDEST_ANSWERS)
    for _, _, post_id in candidates:
        post = await session.get(Post, post_id)
        question = library.get(post.question_id) if post is not None else None
        if post is None or question is None:
            continue
        right, answers = per_post[post_id]
        posted = as_utc(post.opened_at).astimezone(ZoneInfo(tz)).date()
        return Hardest(question.prompt, right, answers, posted, post.platform_ref)
    return None


def _pct(right: int, answers: int) -> str:
    return f"{round(100 * right / answers)}%"


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
    if d.streaks:
        msg.text("🔥 **Longest streaks:** " + " · ".join(f"{n} {c}" for n, c in d.streaks))
    if d.hardest:
        h = d.hardest
        prompt = h.prompt if len(h.prompt) <= 120 else h.prompt[:119] + "…"
        msg.text(f"🧠 **Hardest question:** “{prompt}” ({h.right} of {h.answers} right, "
                 f"{_pct(h.right, h.answers)}; posted {h.posted:%a %d %b})"
                 + (f" · its thread: {link}" if link else ""))
    return msg
