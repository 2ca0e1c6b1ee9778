"""Personal practice: private quizzes, spaced-repetition reviews and a member's own stats.

None of it earns leaderboard points, so practice cannot be farmed.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Attachment, Message
from bot.core.learning.adaptive import DEFAULT_BAND
from bot.core.progress import anki, progress_charts, srs
from bot.core.progress.stats import member_stats
from bot.core.quizzes import sequence as quizzes
from bot.core.render.stats import stats_message

DEFAULT_TZ = "UTC"

if TYPE_CHECKING:
    from bot.core.drill.ports import Basics
    from bot.core.progress.ports import GroupStore, ProgressReads
    from bot.core.progress.srs import CardStore
    from bot.core.quizzes.sequence import QuizStore


class Practice:
    def __init__(self, drill: Basics, reads: ProgressReads, groups: GroupStore, cards: CardStore,
                 quiz_store: QuizStore, band: tuple[float, float] = DEFAULT_BAND) -> None:
        self.drill = drill
        self.reads = reads  # the chart's rows (bot.core.progress.ports)
        self.groups = groups
        self.cards = cards  # the FSRS cards (bot.core.progress.srs)
        self.quiz_store = quiz_store  # quizzes and reviews (bot.core.quizzes.sequence)
        self.band = band  # target predicted success of /quiz and /review (PRACTICE_TARGET_BAND)

    async def quiz(self, who: Who, *, topic: str | None, count: int, difficulty: int | None,
                   rng: random.Random | None = None, source: str | None = None) -> Message:
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            return await quizzes.start_quiz(
                self.quiz_store, d.identities, session, d.library, d.clock, who,
                topic=topic, count=count, difficulty=difficulty, rng=rng or d.rng,
                source=source or DEFAULT_BANK_SOURCE, band=self.band,
            )

    async def review(self, who: Who, *, count: int) -> Message:
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            return await quizzes.start_review(self.quiz_store, d.identities, self.cards, session,
                                              d.library, d.clock, who, count=count, band=self.band)

    async def anki_export(self, who: Who) -> Message:
        """``/review export``: the member's misses and due cards as an Anki package, privately."""
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            member = await d.identities.member(session, who)
            deck = await srs.deck_question_ids(self.cards, session, member.id, d.clock.now())
        notes = [anki.note_of(d.library[qid], why) for qid, why in deck.items() if qid in d.library]
        if not notes:
            return Message(ephemeral=True).text(
                "Nothing to export yet: your Anki deck holds the questions you missed and the "
                "cards due for review. Try /quiz or /review first.")
        now = d.clock.now()
        missed = sum(1 for n in notes if "missed" in n.tags)
        shown = notes[:anki.MAX_CARDS]
        msg = Message(title="Your torchdrill deck for Anki", ephemeral=True)
        msg.text(f"{len(shown)} card{'s' if len(shown) != 1 else ''}: {missed} you missed, {len(notes) - missed} due for review."
                 + (f" (the {anki.MAX_CARDS} most due of {len(notes)})" if len(notes) > len(shown) else ""))
        msg.text("In Anki: File → Import and pick the file (AnkiDroid: Import, AnkiMobile: open it). "
                 "Exporting again updates the same cards.")
        msg.attachments.append(Attachment(f"torchdrill-{now:%Y-%m-%d}.apkg",
                                          anki.package(shown, "torchdrill", now)))
        return msg

    async def stats(self, who: Who, where: Where | None = None) -> Message:
        d = self.drill
        async with d.db.write() as session:
            await d.shelf.refresh(session)  # readiness counts answers to community questions too
            member = await d.identities.member(session, who)
            channel = await d.identities.channel(session, where) if where else None
            st = await member_stats(self.reads, session, d.library, member.id, channel.id if channel else None,
                                    d.clock.now())
            member_groups = await self.groups.groups_of(session, member.id)
            chart = None
            if st.answered or st.pending:
                tz = channel.timezone if channel else DEFAULT_TZ
                chart = await progress_charts.stats_chart(
                    self.reads, session, d.library, member.id, member.display_name, st, d.clock.now(), tz
                )
        message = stats_message(member.display_name, st, member_groups)
        if chart is not None:
            message.text(chart.alt_text())
            message.attachments.append(await progress_charts.stats_attachment(chart))
        return message
