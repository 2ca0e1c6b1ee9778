"""Readiness where members read it besides /stats' text: the /stats chart (a band per topic and
the overall figure with the topics that would raise it most, in the picture and its alt text)
and the weekly digest ("the group is weakest in ..."), word for word."""

from __future__ import annotations

import io
from datetime import date, timedelta

from PIL import Image
from sqlalchemy import delete, select

from bot.core.domain.actions import Action, Verb
from bot.core.learning.readiness import OverallReadiness, Readiness
from bot.core.progress import chart_data
from bot.core.render import charts
from bot.core.reveal.posts import order_of
from bot.core.weekly.digest import Digest, digest_message, weekly_digest
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.identity import channel_row
from bot.storage.models import Answer, Post, QuestionDifficulty, QuestionDifficultyStripe
from tests.support.reveal import who
from tests.support.weekly_digest import HERE

NOW_DAY = date(2026, 3, 4)


def _chart() -> chart_data.StatsChart:
    ready = Readiness("m", "autograd", 14, 0.62, 0.41, 0.79, True)
    few = Readiness("m", "tensors", 2, 0.5, 0.2, 0.8, False)
    bars = (chart_data.TopicBar("autograd", 14, 0.75, 0.9, ready), chart_data.TopicBar("tensors", 2, 0.5, None, few))
    overall = OverallReadiness(16, 0.48, 0.3, 0.66, True, ("compile-export", "tensors", "distributed"))
    cal = chart_data.calendar_of([], chart_data.datetime(2026, 3, 4, tzinfo=chart_data.ZoneInfo("UTC")), "UTC")
    return chart_data.StatsChart("ana", bars, cal, 2, 5, overall)


def test_the_stats_chart_draws_each_topic_band_and_says_the_overall_figure() -> None:
    chart = _chart()
    assert chart.alt_text() == (
        "Progress of ana: Autograd 75% correct, recall 90%, readiness 62% (41-79%); Tensors 50% correct, "
        "readiness: too little data (2 answers). Interview readiness 48% (30-66%), raise it most with "
        "torch.compile and export, Tensors, Distributed training. Active on 0 of the last 84 days. Streak 2 (best 5).")
    fig = charts.stats_figure(chart)
    bars_ax = fig.axes[0]
    [band] = bars_ax.containers[1:]  # the bars, then one error bar: only topics with enough data
    centre = band.lines[0]
    assert list(centre.get_xdata()) == [62.0] and list(centre.get_ydata()) == [0.3]
    assert "Interview readiness 48% (30-66%)" in bars_ax.get_title(loc="left")
    assert Image.open(io.BytesIO(charts.stats_png(chart))).size == (800, 620)


def test_the_digest_names_the_group_s_weakest_topic_word_for_word() -> None:
    chart = chart_data.BoardChart(title="t", lines=())
    ready = (Readiness("group", "distributed", 12, 0.31, 0.18, 0.48, True),
             Readiness("group", "autograd", 20, 0.66, 0.52, 0.78, True))
    digest = Digest(date(2026, 3, 9), (("Ana", 40),), (), (("autograd", 1, 4),), "autograd", (), None, chart, ready)
    assert digest_message(digest).plain().splitlines() == [
        "**📬 Weekly digest · week of Mon 09 Mar**",
        "🏆 **Top 5:** 1. Ana 40 pts",
        "🎯 **Accuracy per topic:** Autograd 25% (4)",
        "Weakest topic: **Autograd**, a good pick for /quiz.",
        "📚 **Interview readiness** (expected share right on a difficulty-3 question, last 4 weeks): the group "
        "is weakest in **Distributed training** 31% (18-48%) · Autograd 66% (52-78%)",
    ]


async def _ask(drill, publisher, topic: str, right: bool) -> None:
    posted = await drill.ask(HERE, publisher, kind="daily", topic=topic)
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        key = order_of(post).index(drill.library[post.question_id].answer_index)
    for n in range(1, 5):
        drill.clock.advance(1)
        await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, key if right else (key + 1) % 4).encode())
    await drill.reveal_post(posted.post_id, HERE, publisher)


async def test_the_group_readiness_comes_from_the_channel_s_revealed_answers(drill, publisher) -> None:
    for _ in range(3):  # 12 answers each: enough for a band; wrong in autograd, right in tensors
        await _ask(drill, publisher, "autograd", False)
        await _ask(drill, publisher, "tensors", True)
    monday = drill.clock.now().date() - timedelta(days=drill.clock.now().weekday())
    async with drill.db.write() as session:
        pk = (await channel_row(session, HERE)).id
        digest = await weekly_digest(StoredDigestReads(), session, drill.library, pk, "UTC", monday)
    assert [(r.topic, r.answers) for r in digest.readiness] == [("autograd", 12), ("tensors", 12)]
    weakest, strongest = digest.readiness
    # right on easier questions, whose stored difficulty those very answers lowered: under even odds
    assert weakest.expected < 0.25 < 0.4 < strongest.expected < 0.5
    line = [x for x in digest_message(digest).plain().splitlines() if x.startswith("📚")]
    assert line == [
        "📚 **Interview readiness** (expected share right on a difficulty-3 question, last 4 weeks): the group is "
        f"weakest in **Autograd** {round(100 * weakest.expected)}% ({round(100 * weakest.low)}-"
        f"{round(100 * weakest.high)}%) · Tensors {round(100 * strongest.expected)}% ({round(100 * strongest.low)}-"
        f"{round(100 * strongest.high)}%)"]

    # the questions' difficulties are the stored ones: a refit that found the tensors questions
    # hard (difficulty +2, narrow) makes the same answers read as a strong group
    async with drill.db.write() as session:
        asked = list(await session.scalars(select(Answer.question_id).where(Answer.topic == "tensors").distinct()))
        await session.execute(delete(QuestionDifficultyStripe).where(QuestionDifficultyStripe.question_id.in_(asked)))
        session.add_all(QuestionDifficulty(question_id=q, scope_id=0, mean=2.0, var=0.01, n=40) for q in asked)
    async with drill.db.write() as session:
        again = await weekly_digest(StoredDigestReads(), session, drill.library, pk, "UTC", monday)
    assert [r.topic for r in again.readiness] == ["autograd", "tensors"]
    assert again.readiness[0] == weakest and again.readiness[1].expected > 0.75
