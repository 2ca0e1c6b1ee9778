"""The weekly digest: its figures against a hand computation (revealed questions only), the
admin option, one post per channel and week, the chart with its text alternative."""

from __future__ import annotations

import asyncio
import io
from datetime import date

from PIL import Image

from bot.app import build_daily, weekly_posting
from bot.core.weekly.digest import weekly_digest
from bot.core.weekly.service import WeeklyKind
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.identity import channel_row
from tests.support.weekly_digest import HERE, two_weeks
from tests.support.weekly_platform import BANK, Platform


async def test_digest_figures_match_a_hand_computation(drill, publisher):
    q = await two_weeks(drill, publisher)
    pts = {k: 10 * drill.library[v].difficulty for k, v in q.items()}
    async with drill.db.write() as session:
        pk = (await channel_row(session, HERE)).id
        digest = await weekly_digest(StoredDigestReads(), session, drill.library, pk, "UTC", date(2026, 3, 9))
    # this week: P1 wrong on B (D is open: not counted), P2 right on B, P3 right on B and C
    expected_top = sorted([("Player 3", pts["b"] + pts["c"]), ("Player 2", pts["b"])],
                          key=lambda x: (-x[1], x[0]))
    assert digest.top == tuple(expected_top)
    gains = {"Player 3": pts["b"] + pts["c"], "Player 2": pts["b"] - pts["a"]}
    assert digest.movers == tuple(sorted(((n, g) for n, g in gains.items() if g > 0), key=lambda x: (-x[1], x[0])))
    per_topic: dict[str, list[int]] = {}
    for key, answers in (("b", [False, True, True]), ("c", [False, True, False])):
        topic = drill.library[q[key]].topic
        right, total = per_topic.get(topic, [0, 0])
        per_topic[topic] = [right + sum(answers), total + len(answers)]
    assert {t: (c, n) for t, c, n in digest.topics} == {t: (c, n) for t, (c, n) in per_topic.items()}
    assert digest.streaks == (("Player 3", 2),)  # P2 broke it on C, P1 on B
    assert digest.hardest is not None
    assert (digest.hardest.prompt, digest.hardest.right, digest.hardest.answers) == \
        (drill.library[q["c"]].prompt, 1, 3)
    assert digest.hardest.posted == date(2026, 3, 9)
    assert [line.name for line in digest.chart.lines] == [n for n, _ in expected_top]
    assert [line.cumulative[-1] for line in digest.chart.lines] == [p for _, p in expected_top]


async def test_the_weekly_digest_posts_once_with_its_chart_and_text(drill, publisher):
    platform = Platform()
    q = await two_weeks(drill, publisher)
    daily = build_daily(drill, platform)
    await daily.set_schedule(HERE, at="09:00", timezone="UTC")
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    reply = await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "mon", "09:00")
    assert reply.plain().startswith("Weekly digest: mon 09:00 UTC. Next: Mon 16 Mar 09:00")
    assert "Weekly digest: mon 09:00 UTC" in (await daily.status(HERE)).plain()
    drill.clock.advance(days=6, hours=20)  # Mon 16 Mar, after 09:00
    other = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    async with drill.db.write() as session:
        pk = (await channel_row(session, HERE)).id
    done = await asyncio.gather(weekly.fire(pk, WeeklyKind.DIGEST), other.fire(pk, WeeklyKind.DIGEST))
    assert sum(d is not None for d in done) == 1
    [(_, message, key, _)] = [m for m in platform.messages if m[2]]
    text = message.plain()
    assert text.startswith("**📬 Weekly digest · week of Mon 09 Mar**")
    assert f"🏆 **Top 5:** 1. Player 3 {10 * (drill.library[q['b']].difficulty + drill.library[q['c']].difficulty)} pts" in text
    assert "🔥 **Longest streaks:** Player 3 2" in text
    assert "(1 of 3 right, 33%; posted Mon 09 Mar)" in text
    assert "[📈 My progress]" in text
    [chart] = message.attachments
    image = Image.open(io.BytesIO(chart.content))
    assert image.format == "PNG" and image.size[0] > 400
    assert chart.description.startswith("Week of 09 Mar: points of the top 2, points over time: Player 3")
    assert await weekly.catch_up() == []  # this week's digest is done
    assert await weekly.close_due() == []  # a digest is never "closed"


async def test_an_empty_week_says_so(drill):
    platform = Platform()
    daily = build_daily(drill, platform)
    await daily.set_schedule(HERE, at="09:00", timezone="Europe/Berlin")
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "wed", "10:00")  # now, in Berlin
    assert len(await weekly.catch_up()) == 1
    [(_, message, _, _)] = platform.messages
    assert "Nobody scored last week" in message.plain() and "Hardest" not in message.plain()
    assert (await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "off", None)).plain() == \
        "Weekly digest turned off for this channel."


def test_the_digest_message_word_for_word() -> None:
    from bot.core.progress.chart_data import BoardChart
    from bot.core.weekly.digest import Digest, Hardest, digest_message

    long_prompt = "Why " + "really " * 30 + "?"  # longer than 120 characters: cut with an ellipsis
    chart = BoardChart(title="t", lines=())
    full = Digest(date(2026, 3, 9), (("Ana", 40), ("Ben", 30)), (("Ben", 20),),
                  (("autograd", 1, 4), ("tensors", 3, 4)), "autograd", (("Ana", 5), ("Ben", 2)),
                  Hardest(long_prompt, 1, 4, date(2026, 3, 10), "m7"), chart)
    assert digest_message(full, "https://chat.example/m7").plain().splitlines() == [
        "**📬 Weekly digest · week of Mon 09 Mar**",
        "🏆 **Top 5:** 1. Ana 40 pts · 2. Ben 30 pts",
        "📈 **Biggest movers:** Ben +20",
        "🎯 **Accuracy per topic:** Autograd 25% (4) · Tensors 75% (4)",
        "Weakest topic: **Autograd**, a good pick for /quiz.",
        "🔥 **Longest streaks:** Ana 5 · Ben 2",
        f"🧠 **Hardest question:** “{long_prompt[:119]}…” (1 of 4 right, 25%; posted Tue 10 Mar)"
        " · its thread: https://chat.example/m7",
    ]
    short = Hardest("Short?", 0, 2, date(2026, 3, 10), None)
    quiet = Digest(date(2026, 3, 9), (), (), (("autograd", 2, 2),), None, (), short, chart)
    assert digest_message(quiet).plain().splitlines() == [
        "**📬 Weekly digest · week of Mon 09 Mar**",
        "🏆 Nobody scored last week. Today is a good day to start.",
        "🎯 **Accuracy per topic:** Autograd 100% (2)",
        "🧠 **Hardest question:** “Short?” (0 of 2 right, 0%; posted Tue 10 Mar)",
    ]
