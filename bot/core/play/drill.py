"""The drill: questions posted to channels, their reveals, and button clicks; it holds the
shared database, library and clock, and the feature areas built on them (practice, boards,
rounds). Nothing here raises for a member's mistake: it becomes a clear private notice.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core import render
from bot.core.commands.replies import UNKNOWN_BUTTON
from bot.core.content.bank import Kind, Library
from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.model.actions import Action, BadActionError, Verb, decode
from bot.core.model.clock import Clock, SystemClock
from bot.core.model.identity import Where, Who, channel_row
from bot.core.model.kinds import PostKind
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.model.topics import TOPICS
from bot.core.play import quizzes
from bot.core.play.answers import Outcome, record_grade, record_pick, show_answer
from bot.core.play.posts import QuestionGoneError, create_post, due_reveals, public_view, reveal
from bot.core.play.practice import Practice
from bot.core.play.rounds import Rounds
from bot.core.play.selection import next_for_channel, pool, pool_key_of
from bot.core.play.shelf import Shelf
from bot.core.progress.boards import Boards
from bot.observability.metrics import ANSWERS_RECORDED, observe_interaction
from bot.storage.db import Database
from bot.storage.hot_writes import NeedsSessionError
from bot.storage.models import Channel, Post, Workspace

log = logging.getLogger(__name__)



class RoundBusyError(ValueError):
    pass


@dataclass
class Posted:
    post_id: int
    ref: str


class Drill:
    def __init__(
        self, db: Database, library: Library, clock: Clock | None = None, rng: random.Random | None = None
    ) -> None:
        self.db = db
        self.library = library
        self.shelf = Shelf(library)
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()
        self.practice = Practice(self)
        self.boards = Boards(self)
        self.rounds = Rounds(self)

    # ---- buttons -------------------------------------------------------------------------
    async def handle_action(self, who: Who, action_id: str) -> Outcome:
        try:
            action = decode(action_id)
        except BadActionError:
            return Outcome(render.notice(UNKNOWN_BUTTON))
        with observe_interaction(who.platform, f"button:{action.verb.name.lower()}"):
            outcome = await self._dispatch(who, action)
        if outcome.recorded:
            ANSWERS_RECORDED.labels(platform=who.platform).inc()
        return outcome

    async def _dispatch(self, who: Who, action: Action) -> Outcome:
        try:
            return await self._write(who, action)
        except QuestionGoneError:  # a community question this process has not loaded yet
            async with self.db.read() as session:
                await self.shelf.refresh(session, force=True)
        try:
            return await self._write(who, action)
        except QuestionGoneError:
            return Outcome(render.notice("This question was removed from the question banks."), action.post_id)

    async def _write(self, who: Who, action: Action) -> Outcome:
        """A pick first tries the raw writes (bot.storage.hot_writes); otherwise,
        or when the click needs the ORM, the session's, retried whole through a database
        restart (every verb is idempotent)."""
        if self.db.hot_ok and action.verb is Verb.PICK:
            try:
                return await self.db.hot_write(lambda session: self._in_transaction(session, who, action))
            except NeedsSessionError:
                pass
        return await self.db.transaction(lambda session: self._in_transaction(session, who, action))

    async def _in_transaction(self, session: AsyncSession, who: Who, action: Action) -> Outcome:
        if action.verb is Verb.PICK:
            return await record_pick(session, self.library, self.clock, who, action.post_id, action.arg)
        if action.verb is Verb.SHOW:
            return await show_answer(session, self.library, self.clock, who, action.post_id)
        if action.verb is Verb.GRADE:
            return await record_grade(session, self.library, self.clock, who, action.post_id, action.arg)
        if action.verb is Verb.NEXT:
            msg = await quizzes.next_question(session, self.library, self.clock, who, action.post_id)
            return Outcome(msg, action.post_id)
        msg = await quizzes.stop(session, self.clock, who, action.post_id)
        return Outcome(msg, action.post_id)

    # ---- channel questions ---------------------------------------------------------------
    async def ask(
        self, where: Where, publisher: Publisher, *, kind: str = PostKind.NOW, topic: str | None = None,
        reveal_after: timedelta | None = timedelta(hours=12), round_id: int | None = None,
        local_date: object = None, source: str | None = None,
    ) -> Posted:
        """Post an MCQ to a channel (never a repeat until the pool is exhausted)."""
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            await self.shelf.refresh(session)
            source = source or DEFAULT_BANK_SOURCE
            candidates = pool(self.library, topic=topic, kinds=[Kind.MCQ], community=where.community,
                              source=source)
            pool_key = pool_key_of(topic, source)
            question = await next_for_channel(session, channel.id, candidates, pool_key, self.rng)
            now = self.clock.now()
            post = await create_post(
                session, question, kind=kind, now=now, channel_id=channel.id,
                closes_at=now + reveal_after if reveal_after else None,
                round_id=round_id, local_date=local_date, rng=self.rng,
            )
            view = await public_view(session, self.library, post)
            post_id = post.id
        ref = await publisher.publish(where, view)
        async with self.db.write() as session:
            stored = await session.get(Post, post_id)
            assert stored is not None
            stored.platform_ref = ref
        return Posted(post_id, ref)

    async def reveal_post(self, post_id: int, where: Where, publisher: Publisher) -> Message:
        """Close, settle and publish: results into the message, the explanation into its thread."""
        async with self.db.write() as session:
            revealed = await reveal(session, self.library, self.clock, post_id)
            question = self.library[(await session.get(Post, post_id)).question_id]  # type: ignore[union-attr]
        if revealed.platform_ref and revealed.first_time:
            await publisher.update(where, revealed.platform_ref, revealed.message)
            related = [self.library[r] for r in question.related if r in self.library]
            await publisher.publish(
                where, render.explanation_message(question, related), thread_of=revealed.platform_ref
            )
        return revealed.message

    async def reveal_due(self, publisher: Publisher) -> int:
        """Reveal every channel post whose time has passed (after restarts, too). Returns how many."""
        async with self.db.read() as session:
            await self.shelf.refresh(session)
            due = await due_reveals(session, self.clock.now())
            wheres = {post_id: await _where_of_post(session, post_id) for post_id in due}
        for post_id in due:
            try:
                await self.reveal_post(post_id, wheres[post_id], publisher)
            except Exception:  # one broken post must not block the others
                log.exception("reveal of post %s failed", post_id)
        return len(due)

    async def refresh_view(self, post_id: int) -> Message:
        async with self.db.read() as session:
            post = await session.get(Post, post_id)
            assert post is not None
            return await public_view(session, self.library, post)

    async def recover(self, publisher: Publisher) -> None:
        """At start: close rounds a crash left open and reveal whatever is overdue."""
        await self.rounds.close_leftovers()
        await self.reveal_due(publisher)

    # ---- misc ----------------------------------------------------------------------------
    def topic_choices(self, prefix: str = "") -> list[tuple[str, str]]:
        """(slug, display name) of topics that have questions, for autocomplete."""
        p = prefix.strip().lower()
        return [
            (slug, TOPICS[slug])
            for slug in self.library.topics_in_use()
            if not p or p in slug or p in TOPICS[slug].lower()
        ][:25]


async def _where_of_post(session: AsyncSession, post_id: int) -> Where:
    """The channel a post lives in, as adapters address it."""
    row = (
        await session.execute(
            select(Workspace.platform, Workspace.external_id, Channel.channel_id, Channel.name)
            .join(Channel, Channel.workspace_id == Workspace.id)
            .join(Post, Post.channel_id == Channel.id)
            .where(Post.id == post_id)
        )
    ).one()
    return Where(row[0], row[1], row[2], row[3])
