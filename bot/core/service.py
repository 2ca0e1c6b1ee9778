"""The one entry point adapters call. Every method returns something to show, never raises
for a member's mistake: bad topics, names or counts become a clear private notice.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core import groups, leaderboard, quizzes, render
from bot.core.actions import Action, BadActionError, Verb, decode
from bot.core.answers import Outcome, record_grade, record_pick, show_answer
from bot.core.clock import Clock, SystemClock
from bot.core.commands.replies import UNKNOWN_BUTTON
from bot.core.content import Kind, Library
from bot.core.identity import BadTimezoneError, Where, Who, channel_row, member_row
from bot.core.messages import Message
from bot.core.periods import Period, Scope, parse_enum, period_label, period_start
from bot.core.posts import create_post, due_reveals, public_view, reveal
from bot.core.publisher import Publisher
from bot.core.selection import EmptyPoolError, next_for_channel, pool
from bot.core.stats import member_stats
from bot.core.topics import TOPICS, UnknownTopicError, normalize_topic
from bot.observability.metrics import ANSWERS_RECORDED, observe_interaction
from bot.storage.db import Database
from bot.storage.models import Answer, Channel, Member, Post, Round, Workspace

log = logging.getLogger(__name__)

USER_ERRORS = (
    UnknownTopicError,
    EmptyPoolError,
    quizzes.QuizError,
    groups.GroupError,
    BadTimezoneError,
    BadActionError,
)


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
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()

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
        async with self.db.write() as session:
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

    # ---- personal practice ---------------------------------------------------------------
    async def quiz(
        self, who: Who, *, topic: str | None, count: int, difficulty: int | None
    ) -> Message:
        try:
            async with self.db.write() as session:
                return await quizzes.start_quiz(
                    session, self.library, self.clock, who,
                    topic=topic, count=count, difficulty=difficulty, rng=self.rng,
                )
        except USER_ERRORS as exc:
            return render.notice(str(exc))

    async def review(self, who: Who, *, count: int) -> Message:
        async with self.db.write() as session:
            return await quizzes.start_review(session, self.library, self.clock, who, count=count)

    async def stats(self, who: Who, where: Where | None = None) -> Message:
        async with self.db.write() as session:
            member = await member_row(session, who, self.clock)
            channel = await channel_row(session, where) if where else None
            st = await member_stats(session, self.library, member.id, channel.id if channel else None)
            member_groups = await groups.groups_of(session, member.id)
        msg = Message(title=f"Stats for {member.display_name}", ephemeral=True)
        if not st.answered:
            return msg.text("No answers yet. Try /quiz or answer today's question!")
        msg.text(
            f"**{st.answered}** answered · **{round(100 * st.accuracy)}%** correct · "
            f"streak **{st.current_streak}** (best {st.best_streak})"
        )
        lines = [
            f"{TOPICS[t.topic]}: {round(100 * t.accuracy)}% of {t.answered} · mastery "
            f"{t.mastered}/{t.available}"
            for t in st.topics
        ]
        msg.text("\n".join(lines))
        if st.weakest:
            msg.text("Weakest: " + ", ".join(TOPICS[t.topic] for t in st.weakest) + " — try /review")
        if member_groups:
            msg.footer = "Groups: " + ", ".join(member_groups)
        return msg

    # ---- leaderboards --------------------------------------------------------------------
    async def leaderboard(
        self, who: Who, where: Where, *, scope: str | None = None, period: str | None = None,
        group: str | None = None, limit: int = 10, workspace_word: str = "workspace",
    ) -> Message:
        try:
            scope_v = parse_enum(Scope, scope or ("group" if group else None), Scope.CHANNEL)
            period_v = parse_enum(Period, period, Period.WEEK)
        except ValueError as exc:
            return render.notice(str(exc))
        now = self.clock.now()
        async with self.db.write() as session:
            member = await member_row(session, who, self.clock)
            channel = await channel_row(session, where)
            tz = channel.timezone
            since = period_start(period_v, now, tz)  # type: ignore[arg-type]
            workspace_id = None
            if scope_v is Scope.CHANNEL:
                scope_id, label = channel.id, "this channel"
            elif scope_v is Scope.WORKSPACE:
                scope_id, label = member.workspace_id, f"this {workspace_word}"
            else:
                if not group:
                    return render.notice("Name the study group: /leaderboard scope:group group:<name>")
                try:
                    found = await groups.find(session, who.platform, who.workspace, group)
                except groups.GroupError as exc:
                    return render.notice(str(exc))
                scope_id, label, workspace_id = found.id, f"group {found.name}", member.workspace_id
            rows = await leaderboard.top(
                session, scope_v, scope_id, since, limit=limit, workspace_id=workspace_id  # type: ignore[arg-type]
            )
            mine = await leaderboard.rank_of(
                session, scope_v, scope_id, since, member.id, workspace_id=workspace_id  # type: ignore[arg-type]
            )
        msg = Message(title=f"Leaderboard · {label} · {period_label(period_v, now, tz)}")  # type: ignore[arg-type]
        if not rows:
            return msg.text("Nobody has scored yet. Answer a daily question to get on the board!")
        medals = {1: "🥇", 2: "🥈", 3: "🥉"}
        msg.text(
            "\n".join(
                f"{medals.get(r.rank, f'{r.rank}.')} **{r.name}** — {r.points} pts · "
                f"{round(100 * r.accuracy)}% of {r.answered}"
                for r in rows
            )
        )
        if mine and mine.rank > limit:
            msg.footer = f"You: #{mine.rank} with {mine.points} pts"
        elif mine is None:
            msg.footer = "You are not on this board yet."
        return msg

    # ---- study groups --------------------------------------------------------------------
    async def group(self, who: Who, action: str, name: str | None = None) -> Message:
        action = (action or "list").strip().lower()
        try:
            async with self.db.write() as session:
                if action == "list":
                    found = await groups.listing(session, who.platform, who.workspace)
                    if not found:
                        return render.notice("No study groups yet. Create one with /group create <name>.")
                    return render.notice(
                        "**Study groups**\n" + "\n".join(f"• {n} ({c} members)" for n, c in found)
                    )
                if not name:
                    return render.notice(f"/group {action} needs a group name.")
                if action == "create":
                    group = await groups.create(session, self.clock, who, name)
                    return render.notice(f"Created study group **{group.name}** and added you to it.")
                if action == "join":
                    group, new = await groups.join(session, self.clock, who, name)
                    return render.notice(
                        f"You joined **{group.name}**." if new else f"You are already in **{group.name}**."
                    )
                if action == "leave":
                    group, was = await groups.leave(session, self.clock, who, name)
                    return render.notice(
                        f"You left **{group.name}**." if was else f"You were not in **{group.name}**."
                    )
        except groups.GroupError as exc:
            return render.notice(str(exc))
        return render.notice(f"Unknown /group action {action!r}; use create, join, leave or list.")

    # ---- channel questions ---------------------------------------------------------------
    async def ask(
        self, where: Where, publisher: Publisher, *, kind: str = "now", topic: str | None = None,
        reveal_after: timedelta | None = timedelta(hours=12), round_id: int | None = None,
        local_date: object = None,
    ) -> Posted:
        """Post an MCQ to a channel (never a repeat until the pool is exhausted)."""
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            candidates = pool(self.library, topic=topic, kinds=[Kind.MCQ])
            pool_key = f"mcq:{normalize_topic(topic) if topic else 'all'}"
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

    # ---- live rounds ---------------------------------------------------------------------
    async def start_round(
        self, where: Where, who: Who, *, count: int, seconds: int, topic: str | None
    ) -> int | Message:
        """Register a round (options validated by the catalogue); its id, or why not."""
        try:
            pool(self.library, topic=topic, kinds=[Kind.MCQ])
        except USER_ERRORS as exc:
            return render.notice(str(exc))
        async with self.db.write() as session:
            channel = await channel_row(session, where)
            member = await member_row(session, who, self.clock)
            busy = await session.scalar(
                select(Round.id).where(Round.channel_id == channel.id, Round.finished_at.is_(None))
            )
            if busy is not None:
                return render.notice("A round is already running in this channel; wait for it to finish.")
            rnd = Round(
                channel_id=channel.id, started_by=member.id, n_questions=count,
                seconds_per_question=seconds, topic=topic, started_at=self.clock.now(),
            )
            session.add(rnd)
            await session.flush()
            return rnd.id

    async def play_round(self, round_id: int, where: Where, publisher: Publisher) -> Message:
        """Post each question, wait, reveal with standings; finally post the final standings."""
        async with self.db.read() as session:
            rnd = await session.get(Round, round_id)
            assert rnd is not None
            count, seconds, topic = rnd.n_questions, rnd.seconds_per_question, rnd.topic
        try:
            for index in range(count):
                posted = await self.ask(
                    where, publisher, kind="round", topic=topic,
                    reveal_after=timedelta(seconds=seconds), round_id=round_id,
                )
                await self.clock.sleep(seconds)
                await self.reveal_post(posted.post_id, where, publisher)
                standings = await self.round_standings(round_id, f"after question {index + 1}/{count}")
                await publisher.publish(where, standings, thread_of=posted.ref)
            final = await self.round_standings(round_id, "final standings")
            await publisher.publish(where, final)
            return final
        finally:
            async with self.db.write() as session:
                rnd = await session.get(Round, round_id)
                if rnd is not None and rnd.finished_at is None:
                    rnd.finished_at = self.clock.now()

    async def round_standings(self, round_id: int, label: str) -> Message:
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(
                        Member.display_name,
                        func.sum(Answer.points),
                        func.sum(case((Answer.correct, 1), else_=0)),
                    )
                    .join(Post, Post.id == Answer.post_id)
                    .join(Member, Member.id == Answer.member_id)
                    .where(Post.round_id == round_id)
                    .group_by(Member.id, Member.display_name)
                    .order_by(func.sum(Answer.points).desc(), func.min(Answer.answered_at))
                    .limit(10)
                )
            ).all()
        msg = Message(title=f"Round — {label}")
        if not rows:
            return msg.text("No answers yet.")
        return msg.text(
            "\n".join(f"{i}. **{name}** — {int(pts or 0)} pts ({int(c or 0)} correct)"
                      for i, (name, pts, c) in enumerate(rows, 1))
        )

    async def recover(self, publisher: Publisher) -> None:
        """At start: close rounds a crash left open and reveal whatever is overdue."""
        async with self.db.write() as session:
            for rnd in await session.scalars(select(Round).where(Round.finished_at.is_(None))):
                rnd.finished_at = self.clock.now()
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
