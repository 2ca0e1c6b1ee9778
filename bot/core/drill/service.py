"""The drill: questions posted to channels, their reveals, and button clicks; it holds the
shared database, library and clock, and the feature areas built on them (practice, boards,
rounds). Nothing here raises for a member's mistake: it becomes a clear private notice.
It builds no store: the wiring root hands them in (``DrillStores``, bot.core.drill.ports).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Generic

from bot.core.answers.recording import Outcome, record_grade, record_pick, show_answer
from bot.core.commands.replies import UNKNOWN_BUTTON
from bot.core.community_banks.shelf import Shelf
from bot.core.content.bank import Kind, Library
from bot.core.content.community import DEFAULT_BANK_SOURCE
from bot.core.domain.actions import Action, BadActionError, Verb, decode
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Where, Who
from bot.core.domain.kinds import PostKind
from bot.core.domain.messages import Message
from bot.core.domain.topics import TOPICS
from bot.core.drill.ports import DB, DrillStores, RewardCandidate, RoleRewardRule
from bot.core.drill.selection import next_for_channel, pool, pool_key_of
from bot.core.learning.adaptive import DEFAULT_BAND
from bot.core.posting.fanout import PacedBatch, reveal_batch
from bot.core.progress.boards import Boards
from bot.core.progress.rewards import KINDS as REWARD_KINDS
from bot.core.progress.rewards import earned, refusal
from bot.core.progress.stats import member_readiness
from bot.core.publisher import Publisher, RolePublisher, RoleRefusedError
from bot.core.quizzes import sequence as quizzes
from bot.core.quizzes.practice import Practice
from bot.core.quizzes.rounds import Rounds
from bot.core.render.buttons import flag_button
from bot.core.render.notices import notice
from bot.core.render.reveals import explanation_message
from bot.core.reveal.posts import (
    QuestionGoneError,
    create_post,
    public_view,
    reveal,
    snapshot_view,
)
from bot.core.stores import Tx
from bot.observability.metrics import ANSWERS_RECORDED, observe_interaction

log = logging.getLogger(__name__)



class RoundBusyError(ValueError):
    pass


@dataclass
class Posted:
    post_id: int
    ref: str


class Drill(Generic[DB]):
    def __init__(
        self, stores: DrillStores[DB], library: Library, clock: Clock, rng: random.Random | None = None,
        *, practice_band: tuple[float, float] = DEFAULT_BAND,
    ) -> None:
        """``stores``: built once by the wiring root (``bot.app.build_drill``), with this clock."""
        self.db: DB = stores.db
        self.library = library
        self.shelf: Shelf = stores.shelf
        self.quality_data = stores.quality_data  # the quality lab's storage port
        self.clock = clock
        self.rng = rng or random.Random()
        self.mock_store = stores.mocks  # /mock's storage port
        self.cards = stores.cards  # CardStore: bot.core.progress.srs
        self.quiz_store = stores.quizzes  # QuizStore: bot.core.quizzes.sequence
        self.answer_stores = stores.answers  # the click path's: bot.core.answers.ports
        self.practice = Practice(self, stores.progress, stores.groups, self.cards, self.quiz_store, practice_band)
        self.boards = Boards(self, stores.progress, stores.groups)
        self.rounds = Rounds(self, stores.rounds)  # RoundStore: bot.core.stores
        self.served = stores.served  # ServedLog: bot.core.drill.selection
        self.report_store = stores.reports  # 🚩 reports' storage port
        self.identities = stores.identities  # Identities: bot.core.stores
        self.posts = stores.posts  # RevealStore: posts as created, viewed and revealed
        self.channel_posts = stores.channel_posts  # DrillPosts: the drill's own post reads
        self.role_grants = stores.role_grants  # milestone roles
        self.reveals = reveal_batch()  # the reveal sweep's bounded, paced pool
        # the wiring root's publisher: roles for a milestone reached by a click (readiness)
        self.role_publisher: Publisher | None = None

    async def refresh_shelf(self) -> None:
        """Reload the community questions now (after an admin retired one)."""
        async with self.db.read() as session:
            await self.shelf.refresh(session, force=True)

    # ---- buttons -------------------------------------------------------------------------
    async def handle_action(self, who: Who, action_id: str) -> Outcome:
        try:
            action = decode(action_id)
        except BadActionError:
            return Outcome(notice(UNKNOWN_BUTTON))
        with observe_interaction(who.platform, f"button:{action.verb.name.lower()}"):
            outcome = await self._dispatch(who, action)
        if outcome.recorded:
            ANSWERS_RECORDED.labels(platform=who.platform).inc()
            if action.verb is Verb.PICK and outcome.reply.title:  # feedback, not a round's "locked in"
                outcome.reply.buttons.append(flag_button(action.post_id))
        if outcome.moved and self.role_publisher is not None:
            try:  # a role the platform refuses never holds up the member's feedback
                await self.rewards_for_who(who, ("readiness",), self.role_publisher)
            except Exception:
                log.exception("role rewards could not be synced", extra={"post": action.post_id})
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
            return Outcome(notice("This question was removed from the question banks."), action.post_id)

    async def _write(self, who: Who, action: Action) -> Outcome:
        """A pick first tries the raw writes where the database has them; otherwise,
        or when the click needs the ORM, the session's, retried whole through a database
        restart (every verb is idempotent): ``ClickTransactions.click``."""
        return await self.db.click(lambda session: self._in_transaction(session, who, action),
                                   raw_first=action.verb is Verb.PICK)

    async def _in_transaction(self, session: Tx, who: Who, action: Action) -> Outcome:
        if action.verb is Verb.PICK:
            return await record_pick(self.answer_stores, session, self.library, self.clock, who,
                                     action.post_id, action.arg)
        if action.verb is Verb.SHOW:
            return await show_answer(self.answer_stores, session, self.library, self.clock, who, action.post_id)
        if action.verb is Verb.GRADE:
            return await record_grade(self.answer_stores, session, self.library, self.clock, who,
                                      action.post_id, action.arg)
        if action.verb is Verb.NEXT:
            msg = await quizzes.next_question(self.quiz_store, self.identities, session, self.library, self.clock, who, action.post_id)
            return Outcome(msg, action.post_id)
        msg = await quizzes.stop(self.quiz_store, self.identities, session, self.clock, who, action.post_id)
        return Outcome(msg, action.post_id)

    # ---- channel questions ---------------------------------------------------------------
    async def ask(
        self, where: Where, publisher: Publisher, *, kind: str = PostKind.NOW, topic: str | None = None,
        reveal_after: timedelta | None = timedelta(hours=12), round_id: int | None = None,
        local_date: object = None, source: str | None = None,
    ) -> Posted:
        """Post an MCQ to a channel (never a repeat until the pool is exhausted)."""
        async with self.db.write() as session:
            channel_pk = await self.channel_posts.channel_pk(session, where)
            await self.shelf.refresh(session)
            source = source or DEFAULT_BANK_SOURCE
            candidates = pool(self.library, topic=topic, kinds=[Kind.MCQ], community=where.community,
                              source=source)
            pool_key = pool_key_of(topic, source)
            question = await next_for_channel(self.served, session, channel_pk, candidates, pool_key, self.rng)
            now = self.clock.now()
            post = await create_post(
                self.posts, session, question, kind=kind, now=now, channel_id=channel_pk,
                closes_at=now + reveal_after if reveal_after else None,
                round_id=round_id, local_date=local_date, rng=self.rng,
            )
            view = await public_view(self.posts, session, self.library, post)
            post_id = post.id
        ref = await publisher.publish(where, view)
        await self.channel_posts.set_ref(post_id, ref)
        return Posted(post_id, ref)

    async def extras_after(self, where: Where, post_id: int) -> list[tuple[int, str | None, bool]]:
        """The extra questions (/daily now after today's was out) posted in this channel after
        ``post_id``, newest first, as (post id, platform ref, closed): the console's ``today``
        and ``reveal`` reach them too."""
        return await self.channel_posts.extras_after(where, post_id, self.clock.now())

    async def reveal_post(self, post_id: int, where: Where, publisher: Publisher,
                          batch: PacedBatch | None = None) -> Message:
        """Close, settle and publish: results into the message, the explanation into its thread.

        The post is settled once (its transaction); only the first reveal publishes, so from a
        sweep (``batch``) each publish is retried with backoff: a 429 beyond the platform
        client's own retries does not lose the results."""
        async with self.db.write() as session:
            revealed = await reveal(self.posts, session, self.library, self.clock, post_id)
            post = await self.channel_posts.facts(session, post_id)  # reveal() found it in this transaction
            question = self.library[post.question_id]
        ref = revealed.platform_ref
        if ref and revealed.first_time:
            async def results() -> None:
                await publisher.update(where, ref, revealed.message)

            related = [self.library[r] for r in question.related if r in self.library]

            async def explanation() -> None:
                await publisher.publish(where, explanation_message(question, related), thread_of=ref)

            for step in (results, explanation):
                await (batch.retrying(where.platform, step) if batch is not None else step())
        if revealed.first_time and post.channel_id is not None:
            try:  # a role the platform refuses must never hold up a reveal
                if post.kind == PostKind.DAILY:  # streaks moved; a solve refused earlier retried
                    await self.sync_rewards(post.channel_id, where, publisher, kinds=("streak", "solved"))
                await self.rewards_after_reveal(post_id, where, publisher)
            except Exception:
                log.exception("role rewards could not be synced", extra={"post": post_id})
        return revealed.message

    async def rewards_after_reveal(self, post_id: int, where: Where, publisher: Publisher) -> None:
        """A channel post's reveal moved its answerers' estimates: their readiness rewards."""
        if not self._roles_here(where, publisher):
            return
        members = await self.channel_posts.answerers(post_id)
        await self.rewards_for(where.platform, where.workspace, members, ("readiness",), publisher)

    async def rewards_for_who(self, who: Who, kinds: Collection[str], publisher: Publisher) -> None:
        """A member's milestone may be reached now (a solve, estimates that moved): check it."""
        if not self._roles_here(Where(who.platform, who.workspace, ""), publisher):
            return
        member_id = await self.role_grants.member_id(who)
        if member_id is not None:
            await self.rewards_for(who.platform, who.workspace, [member_id], kinds, publisher)

    @staticmethod
    def _roles_here(where: Where, publisher: Publisher | None) -> bool:
        return isinstance(publisher, RolePublisher) and publisher.has_roles(where)

    async def rewards_for(self, platform: str, workspace: str, members: Collection[int],
                          kinds: Collection[str], publisher: Publisher) -> None:
        """The rewards of ``kinds`` in every channel of the workspace, for ``members`` only:
        what a solve or a reveal changed is given at once (same checks, same records)."""
        if not members:
            return
        channels = await self.role_grants.channels_rewarding(platform, workspace, kinds)
        for channel_pk, channel_id, name in channels:
            await self.sync_rewards(channel_pk, Where(platform, workspace, channel_id, name), publisher,
                                    members=members, kinds=kinds)

    async def sync_rewards(self, channel_pk: int, where: Where, publisher: Publisher, *,
                           members: Collection[int] | None = None,
                           kinds: Collection[str] = REWARD_KINDS) -> None:
        """Give (and, for streaks, take) the channel's milestone roles (``progress.rewards``):
        those of ``kinds``, for ``members`` (None: everyone the reward looks at).
        The bot's permission and the role's position are checked before Discord is asked; each
        change is recorded once it is made (idempotent across replicas); a problem is kept on
        the reward for admins."""
        if not self._roles_here(where, publisher):
            return
        assert isinstance(publisher, RolePublisher)
        standings = await self.role_grants.standings(channel_pk, kinds, members)
        for standing in standings:
            reward, held = standing.reward, standing.holders
            problem = None
            changes = [(member_id, user_id, wanted) for member_id, user_id, wanted
                       in self._reached(reward, standing.candidates)
                       if wanted != (member_id in held)
                       and (wanted or reward.kind == "streak")]  # only streaks are taken back
            if not changes and members is not None:
                continue  # nothing for these members: the reward's standing is not re-checked
            reason = await publisher.role_problem(where, reward.role_id) if changes else None
            if reason is not None:
                problem, changes = refusal(reward.role_id, reason), []
                log.warning("role reward cannot be given: %s", reason,
                            extra={"channel": channel_pk, "role": reward.role_id})
            for member_id, user_id, wanted in changes:
                try:
                    await publisher.set_role(where, user_id, reward.role_id, held=wanted)
                except RoleRefusedError as exc:
                    if exc.reason == "unknown_member":
                        continue
                    problem = refusal(reward.role_id, exc.reason)
                    log.warning("role reward refused: %s", exc.reason,
                                extra={"channel": channel_pk, "role": reward.role_id})
                    break
                log.info("role reward %s", "given" if wanted else "taken",
                         extra={"channel": channel_pk, "role": reward.role_id, "member": member_id,
                                "milestone": reward.kind})
                await self.role_grants.record(reward.id, member_id, held=wanted, now=self.clock.now())
            await self.role_grants.set_problem(reward.id, problem)

    def _reached(self, reward: RoleRewardRule,
                 candidates: Collection[RewardCandidate]) -> list[tuple[int, str, bool]]:
        """(member, platform user, milestone reached) for the members the reward looks at
        (``RoleGrants.standings``): a streak or a count of solves against the threshold, or
        the member's readiness in the reward's topic."""
        if reward.kind != "readiness":
            return [(c.member_id, c.user_id, earned(reward.threshold, c.count)) for c in candidates]
        reached = []
        for c in candidates:
            ready, _ = member_readiness(self.library, c.member_id, c.abilities or {})
            topic = ready.get(reward.topic or "")
            reached.append((c.member_id, c.user_id, topic is not None and topic.enough_data
                            and round(topic.expected * 100) >= reward.threshold))
        return reached
    async def reveal_due(self, publisher: Publisher) -> int:
        """Reveal every channel post whose time has passed (after restarts, too). Returns how many."""
        async with self.db.read() as session:
            await self.shelf.refresh(session)
            due = await self.posts.due(session, self.clock.now())
            wheres = await self.channel_posts.wheres(session, due)  # few reads, however many are due

        def reveal_one(post_id: int) -> Callable[[], Awaitable[Message]]:
            return lambda: self.reveal_post(post_id, wheres[post_id], publisher, self.reveals)

        await self.reveals.run([(pid, wheres[pid].platform, reveal_one(pid)) for pid in due if pid in wheres])
        return len(due)

    async def refresh_view(self, post_id: int) -> Message:
        async with self.db.read() as session:
            snap = await self.posts.snapshot(session, post_id)
            assert snap is not None
            return snapshot_view(self.library, snap, answered=await self.posts.answer_count(session, post_id))

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

