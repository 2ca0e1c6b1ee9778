"""A member's dashboard (Slack's App Home tab): what it shows, its texts and its limits.

The dashboard is a small value (sections of items, each item maybe with a button); adapters
translate it (Slack: Block Kit blocks published with ``views.publish``). Every limit that keeps
it inside a platform's bounds is decided here: at most ``MAX_ITEMS`` items per section (the last
one saying "…and N more"), at most ``ITEM_CHARS`` characters per item. Text members control
(channel names, community question prompts) travels apart, in ``HomeItem.member_text``, for
adapters to show inert.

Its buttons are ``Verb.HOME`` actions: "Review now" starts a review, "Answer" shows the member
today's question of that channel privately, with the post's own answer buttons.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.answers.recording import Outcome
from bot.core.commands import replies
from bot.core.commands.catalogue import Catalogue
from bot.core.daily.service import ScheduleView, describe
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Who
from bot.core.domain.messages import Button, ButtonStyle, truncate
from bot.core.domain.topics import TOPICS
from bot.core.learning.readiness import MIN_ANSWERS
from bot.core.progress.stats import MemberStats, member_stats
from bot.core.reveal.posts import QuestionGoneError, is_closed, question_of
from bot.core.weekly.service import WeeklyKind

if TYPE_CHECKING:
    from bot.core.challenges.desk import ChallengeDesk
    from bot.core.daily.service import DailyPosting
    from bot.core.drill.service import Drill
    from bot.core.weekly.service import WeeklyPosting

MAX_ITEMS = 8  # per section, the last one being "…and N more" when there are more
ITEM_CHARS = 300  # per item, label and member text together
REVIEW_NOW_COUNT = 10  # cards a "Review now" click serves (/review's default)
HOME_REVIEW, HOME_ANSWER = 1, 2  # the arg of a Verb.HOME action

TITLE = "🏠 Your torchdrill"
NO_ANSWERS = "No answers yet: start with {quiz}, or answer today's question below."
NO_CHANNELS = "No daily question in your channels yet. An admin starts one with {schedule}."
NOTHING_DUE = "Nothing due: your cards are all reviewed. {review} serves weak topics meanwhile."
NO_CHALLENGE = "No open challenge. {challenge} gives you a graded coding problem."
NO_DIGEST = "No weekly digest is scheduled in your channels."
ANSWER_CLOSED = "That question is closed; its answer is revealed in the channel."
ANSWER_GONE = "That question is no longer available."


@dataclass(frozen=True)
class HomeItem:
    """One line: core markup in ``text``, then ``member_text`` shown as inert text."""

    text: str
    member_text: str = ""
    button: Button | None = None


@dataclass(frozen=True)
class HomeSection:
    title: str
    items: tuple[HomeItem, ...]
    buttons: tuple[Button, ...] = ()


@dataclass(frozen=True)
class Dashboard:
    title: str
    sections: tuple[HomeSection, ...]


def item(text: str, member_text: str = "", button: Button | None = None) -> HomeItem:
    """An item cut to ``ITEM_CHARS``: member text first gives way, then the label."""
    room = ITEM_CHARS - len(text)
    if member_text and len(member_text) > room:
        member_text = truncate(member_text, max(room, 2), "…")[0].replace("\n", " ")
    return HomeItem(truncate(text, ITEM_CHARS, "…")[0], member_text.replace("\n", " "), button)


def capped(items: list[HomeItem]) -> tuple[HomeItem, ...]:
    if len(items) <= MAX_ITEMS:
        return tuple(items)
    hidden = len(items) - (MAX_ITEMS - 1)
    return (*items[: MAX_ITEMS - 1], HomeItem(f"…and {hidden} more"))


def section(title: str, items: list[HomeItem], buttons: tuple[Button, ...] = ()) -> HomeSection:
    return HomeSection(title, capped(items), buttons)


def home_action(arg: int, post_id: int = 0) -> str:
    return Action(Verb.HOME, post_id, arg).encode()


def channel_label(view: ScheduleView) -> str:
    return f"#{view.where.name or view.where.channel_id}"


def local(moment: datetime, timezone: str) -> str:
    at = moment.astimezone(ZoneInfo(timezone))
    return f"{at:%a %d %b %H:%M} {at.tzname()}"


class HomeDesk:
    """Builds a member's dashboard and answers its buttons."""

    def __init__(self, drill: Drill, daily: DailyPosting, challenges: ChallengeDesk,
                 weekly: WeeklyPosting, catalogue: Catalogue) -> None:
        self.drill = drill
        self.daily = daily  # the schedules, and today's post of each channel
        self.challenges = challenges
        self.weekly = weekly
        self.catalogue = catalogue

    async def dashboard(self, who: Who, *, is_admin: bool, channels: Collection[str] | None,
                        words: replies.Words) -> Dashboard:
        """``channels``: the ids of the channels the member is in (None: not known, so every
        channel of the workspace with a daily question)."""
        d = self.drill
        now = d.clock.now()
        views = [v for v in await self.daily.schedules.all()
                 if v.where.platform == who.platform and v.where.workspace == who.workspace
                 and (channels is None or v.where.channel_id in channels)]
        views.sort(key=lambda v: (v.where.name or v.where.channel_id))
        async with d.db.write() as session:
            await d.shelf.refresh(session)
            member = await d.identities.member(session, who)
            st = await member_stats(d.practice.reads, session, d.library, member.id, None, now)
            due = await self.drill.cards.due_count(session, member.id, now)
            today: list[HomeItem] = []
            for view in views:
                today.append(await self._today(session, view, member.id, now, words))
        sections = [
            self._progress(st, words),
            self._review(due, words),
            section("📅 Today's questions", today or [item(NO_CHANNELS.format(
                schedule=words.command("daily schedule")))]),
            await self._challenge(who, words),
            self._digest(views, now),
        ]
        if is_admin:
            sections.extend(self._admin(views, now, words))
        return Dashboard(TITLE, tuple(sections))

    # ---- the member's sections -------------------------------------------------------------
    def _progress(self, st: MemberStats, words: replies.Words) -> HomeSection:
        lines = [item(line.on_home()) for line in st.streaks]
        if not st.answered:
            lines.append(item(NO_ANSWERS.format(quiz=words.command("quiz"))))
            return section("📈 Your progress", lines)
        if st.overall is not None and st.overall.enough_data:
            lines.append(item(f"Overall: **{st.overall.expected:.0%}** expected right on an "
                              f"interview-level question"))
        topics = sorted(st.topics, key=lambda t: (-t.answered, t.topic))
        for t in topics:
            name = TOPICS.get(t.topic, t.topic)
            ready = st.readiness.get(t.topic)
            if ready is not None and ready.enough_data:
                lines.append(item(f"{name}: **{ready.expected:.0%}** ready "
                                  f"({ready.low:.0%}–{ready.high:.0%})"))
            else:
                lines.append(item(f"{name}: {t.accuracy:.0%} right ({t.correct} of {t.answered}; "
                                  f"readiness after {MIN_ANSWERS} answers)"))
        return section("📈 Your progress", lines)

    def _review(self, due: int, words: replies.Words) -> HomeSection:
        if not due:
            return section("🗂 Reviews", [item(NOTHING_DUE.format(review=words.command("review")))])
        noun = "card is" if due == 1 else "cards are"
        return section("🗂 Reviews", [item(f"**{due}** {noun} due for review.")],
                       (Button(home_action(HOME_REVIEW), "Review now", ButtonStyle.PRIMARY),))

    async def _today(self, session, view: ScheduleView, member_id: int, now: datetime,  # noqa: ANN001
                     words: replies.Words) -> HomeItem:
        label = channel_label(view)
        post, answered = await self.daily.today_in(session, view, member_id, now)
        if post is None:
            nxt = None if view.paused else view.next_fire_after(now)
            when = f"next question {local(nxt, view.timezone)}" if nxt else "paused"
            return item("", f"{label}: {when}")
        try:
            prompt = question_of(self.drill.library, post).prompt
        except QuestionGoneError:
            return item("", f"{label}: {ANSWER_GONE}")
        if answered:
            return item("✅ answered · ", f"{label}: {prompt}")
        if is_closed(post, now):
            return item("🔒 closed · ", f"{label}: {prompt}")
        return item("", f"{label}: {prompt}",
                    Button(home_action(HOME_ANSWER, post.id), "Answer", ButtonStyle.PRIMARY))

    async def _challenge(self, who: Who, words: replies.Words) -> HomeSection:
        solved = await self.challenges.solved_by_topic(who)
        found = await self.challenges.open_unsolved(who)
        lines = [item(f"Open: **{found.title}** (difficulty {found.difficulty}) — send it with "
                      f"{words.command('submit')}") if found else
                 item(NO_CHALLENGE.format(challenge=words.command("challenge")))]
        total = sum(solved.values())
        if total:
            per_topic = ", ".join(f"{TOPICS.get(t, t)} {n}" for t, n in sorted(solved.items()))
            lines.append(item(f"Solved: **{total}** ({per_topic})"))
        else:
            lines.append(item("Solved: none yet"))
        return section("🧩 Challenges", lines)

    def _digest(self, views: list[ScheduleView], now: datetime) -> HomeSection:
        weekly = self.weekly
        upcoming = sorted((weekly.next_fire(v, WeeklyKind.DIGEST, now), v)
                          for v in views if v.digest_at and not v.paused)
        if not upcoming:
            return section("📰 Next digest", [item(NO_DIGEST)])
        at, view = upcoming[0]
        return section("📰 Next digest", [item(f"{local(at, view.timezone)} in ", channel_label(view))])

    # ---- admins ----------------------------------------------------------------------------
    def _admin(self, views: list[ScheduleView], now: datetime,
               words: replies.Words) -> list[HomeSection]:
        schedules = [item(describe(v, now).split("\n")[0].replace("\n", " ") + " · ", channel_label(v))
                     for v in views]
        bank = self.catalogue.find("bank")
        tools = [item(f"`{words.command('bank ' + sub.name)}`: "
                      f"{sub.description.replace('{workspace}', words.workspace)}")
                 for sub in (bank.subcommands if bank else ()) if sub.admin_only]
        return [
            section("⚙️ Channel schedules (admins)", schedules or [item(NO_CHANNELS.format(
                schedule=words.command("daily schedule")))]),
            section("🛠 Bank tools (admins)", tools),
        ]

    # ---- buttons -----------------------------------------------------------------------------
    async def press(self, who: Who, action: Action) -> Outcome:
        if action.arg == HOME_REVIEW:
            return Outcome(await self.drill.practice.review(who, count=REVIEW_NOW_COUNT))
        async with self.drill.db.read() as session:
            post = await self.drill.posts.snapshot(session, action.post_id)
            closed = post is not None and is_closed(post, self.drill.clock.now())
        if post is None or action.arg != HOME_ANSWER:
            return Outcome(replies.notice(ANSWER_GONE))
        if closed:
            return Outcome(replies.notice(ANSWER_CLOSED))
        message = await self.drill.refresh_view(action.post_id)
        message.ephemeral = True
        return Outcome(message, action.post_id)
