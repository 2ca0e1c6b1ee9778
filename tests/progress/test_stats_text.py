"""Survivors of the sampled mutation run of 2026-12-04 in bot/core/progress (stats, groups, digest,
chart_data), bot/core/render (stats text, question header), bot/core/domain (truncate, topics),
quizzes/practice.py and drill/selection.py: the exact /stats text a member reads (per-topic accuracy,
mastery, weakest topics, streaks, group footer), the digest's weakest topic, alt texts, and a
channel pool that never repeats before it is exhausted."""

from __future__ import annotations

import random
from datetime import date, timedelta

from sqlalchemy import update

from bot.core.content.bank import Library
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where
from bot.core.domain.messages import truncate
from bot.core.domain.topics import normalize_topic
from bot.core.drill.selection import next_for_channel
from bot.core.drill.service import Drill
from bot.core.progress.chart_data import Calendar, GroupChart
from bot.core.render.questions import question_header
from bot.core.reveal.posts import order_of
from bot.core.weekly.digest import digest_message, weekly_digest
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.identity import channel_row
from bot.storage.models import Answer, Post
from tests.support.reveal import C1, C2, who


async def answer_revealed(drill: Drill, publisher: object, where: Where, topic: str, right: bool,
                          kind: str = "now") -> None:
    """Player 1 answers a channel question of `topic`, then it is revealed (settled)."""
    posted = await drill.ask(where, publisher, topic=topic, kind=kind)  # type: ignore[arg-type]
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        assert post is not None
        key = order_of(post).index(drill.library[post.question_id].answer_index)
    drill.clock.advance(1)
    await drill.handle_action(who(1), Action(Verb.PICK, posted.post_id, key if right else (key + 1) % 4).encode())
    await drill.reveal_post(posted.post_id, where, publisher)  # type: ignore[arg-type]
    if kind == "daily":
        drill.clock.advance(24 * 3600)


async def test_stats_show_per_topic_accuracy_mastery_weakest_and_groups(drill: Drill, publisher: object) -> None:
    for topic, right in [("tensors", True), ("tensors", True), ("tensors", False),
                         ("optimization", True), ("optimization", False)]:
        await answer_revealed(drill, publisher, C1, topic, right)
    for _ in range(2):  # two daily questions in a row in the other channel: streak 2 there only
        await answer_revealed(drill, publisher, C2, "autograd", True, kind="daily")
    await drill.boards.group(who(1), "create", "Owls")
    await drill.boards.group(who(1), "create", "Ants")
    await drill.boards.group(who(2), "create", "Cats")  # player 1 is not in it
    topic_lines = [
        # 4 MCQs + 3 flashcards in the test bank; readiness needs 10 answers in a topic
        "Autograd: 100% of 2 · mastery 2/7 · readiness: too little data (2 answers)",
        "Optimizers and schedulers: 50% of 2 · mastery 1/4 · readiness: too little data (2 answers)",
        "Tensors: 67% of 3 · mastery 2/4 · readiness: too little data (3 answers)",
        "Weakest: Optimizers and schedulers, Tensors — try /review",  # never Autograd, all right
        "Interview readiness (expected share right on a difficulty-3 question): too little data "
        "(7 answers) · raise it most with Tensors, Optimizers and schedulers, Autograd",
    ]
    here = (await drill.practice.stats(who(1), C1)).plain().splitlines()
    # in c1 (no daily question there) the streak is c1's own: none
    assert here[:7] == ["**Stats for Player 1**", "**7** answered · **71%** correct · streak **0** (best 0)",
                        *topic_lines]
    assert here[7].endswith(". Active on 2 of the last 84 days. Streak 0 (best 0).")
    assert here[8:] == ["_Groups: Ants, Owls_"]
    anywhere = (await drill.practice.stats(who(1))).plain().splitlines()  # e.g. in a DM: best of all channels
    assert anywhere[:7] == ["**Stats for Player 1**", "**7** answered · **71%** correct · streak **2** (best 2)",
                            *topic_lines]
    assert anywhere[7].endswith(". Active on 2 of the last 84 days. Streak 2 (best 2).")
    assert anywhere[7].startswith("Progress of Player 1: Autograd 100% correct, recall ")


async def test_stats_name_a_topic_missed_once_as_weakest_and_never_one_all_right(
    drill: Drill, publisher: object,
) -> None:
    for topic, right in [("tensors", True), ("tensors", True), ("autograd", False)]:
        await answer_revealed(drill, publisher, C1, topic, right)
    lines = (await drill.practice.stats(who(1), C1)).plain().splitlines()
    assert lines[2:5] == ["Autograd: 0% of 1 · mastery 0/7 · readiness: too little data (1 answer)",
                          "Tensors: 100% of 2 · mastery 2/4 · readiness: too little data (2 answers)",
                          "Weakest: Autograd — try /review"]


async def test_stats_of_a_topic_no_longer_in_the_banks_show_zero_available(drill: Drill, publisher: object) -> None:
    await answer_revealed(drill, publisher, C1, "tensors", True)
    async with drill.db.write() as s:  # its bank was since replaced by one without that topic
        await s.execute(update(Answer).values(topic="losses"))
    lines = (await drill.practice.stats(who(1), C1)).plain().splitlines()
    assert lines[1:3] == ["**1** answered · **100%** correct · streak **0** (best 0)",
                          # readiness reads the stored ability, kept under the topic at the reveal
                          "Loss functions: 100% of 1 · mastery 1/0 · readiness: too little data (0 answers)"]


def test_calendar_counts_the_first_monday_too() -> None:
    cal = Calendar(date(2026, 11, 2), (3, 1, 0, 0, 0, 0, 2))
    assert [cal.count_on(date(2026, 11, d)) for d in (1, 2, 3, 8, 9)] == [0, 3, 1, 2, 0]


def test_group_chart_alt_text_of_a_group_without_members_activity() -> None:
    chart = GroupChart("Owls", (("tensors", 0.5, None),), ())
    assert chart.alt_text() == ("Group Owls: accuracy per topic: Tensors group 50% vs this channel –. "
                                "Activity over 0 weeks: none.")


async def test_digest_names_the_weakest_topic_with_enough_answers(drill: Drill, publisher: object) -> None:
    # this week in c1: tensors 3 of 3 right, autograd 1 of 3, optimization 0 of 2 (too few to name)
    for topic, picks in (("tensors", {1: True, 2: True, 3: True}), ("autograd", {1: True, 2: False, 3: False}),
                         ("optimization", {1: False, 2: False})):
        posted = await drill.ask(C1, publisher, topic=topic, kind="daily")  # type: ignore[arg-type]
        async with drill.db.read() as s:
            post = await s.get(Post, posted.post_id)
            assert post is not None
            key = order_of(post).index(drill.library[post.question_id].answer_index)
        for n, right in picks.items():
            drill.clock.advance(1)
            await drill.handle_action(who(n), Action(Verb.PICK, posted.post_id, key if right else (key + 1) % 4).encode())
        await drill.reveal_post(posted.post_id, C1, publisher)  # type: ignore[arg-type]
    today = drill.clock.now().date()
    async with drill.db.write() as s:
        pk = (await channel_row(s, C1)).id
        digest = await weekly_digest(StoredDigestReads(), s, drill.library, pk, "UTC", today - timedelta(days=today.weekday()))
    lines = digest_message(digest).plain().splitlines()
    assert lines[3:5] == [
        "🎯 **Accuracy per topic:** Optimizers and schedulers 0% (2) · Autograd 33% (3) · Tensors 100% (3)",
        "Weakest topic: **Autograd**, a good pick for /quiz.",
    ]


def test_a_question_of_another_kind_is_headed_question(library: Library) -> None:
    assert question_header(library["t-mcq-4"], "challenge", "2/5") == "Question 2/5 · Autograd · ★★☆"


def test_a_long_text_is_cut_with_a_visible_note() -> None:
    assert truncate("abcdefghij" * 5, 20) == ("abcdef\n… (truncated)", True)


def test_topics_are_accepted_with_underscores() -> None:
    assert normalize_topic(" NN_Modules ") == "nn-modules"


async def test_a_pool_never_repeats_before_it_is_exhausted_whatever_other_pools_served(drill: Drill) -> None:
    tensors = [q for q in drill.library.questions if q.topic == "tensors"]  # t-mcq-0, 3, 6, 9
    rng = random.Random(7)
    async with drill.db.write() as s:
        channel = await channel_row(s, C1)
        picked = []
        for other, mine in ((3, 2), (2, 2)):  # another pool of the channel serves, and starts anew
            for _ in range(other):
                await next_for_channel(drill.served, s, channel.id, tensors, "topic:tensors", rng)
            picked += [(await next_for_channel(drill.served, s, channel.id, tensors, "all", rng)).id for _ in range(mine)]
    assert sorted(picked) == ["t-mcq-0", "t-mcq-3", "t-mcq-6", "t-mcq-9"]


def test_topic_autocomplete_matches_the_slug_too(drill: Drill) -> None:
    assert drill.topic_choices(" Optimiza") == [("optimization", "Optimizers and schedulers")]

