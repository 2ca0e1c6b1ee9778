"""Points and streak rules. Every number a member sees on a leaderboard comes from here.

- A correct answer is worth ``POINTS_PER_DIFFICULTY * difficulty`` points (10, 20 or 30).
- With a speed bonus (rounds always, daily posts only when the channel enables it), a correct
  answer earns up to ``MAX_SPEED_BONUS`` extra, shrinking linearly over the answer window.
- Personal quizzes and reviews earn no leaderboard points: practice is unlimited, so counting it
  would let anyone farm the board. They still feed stats and spaced repetition.
- A daily streak counts consecutive daily posts of a channel answered correctly; it is settled
  when the post is revealed.
- Streaks forgive: every ``FREEZE_EVERY`` days of a streak earn a freeze (at most
  ``MAX_FREEZES`` banked). A daily post the member did not answer at all spends one
  automatically and the streak carries on (unchanged); a wrong answer still ends it, since the
  freeze forgives absence, not a miss.
- Weekly mode (an admin's choice per channel, ``/daily streak weekly N``): the streak counts
  weeks (Monday to Sunday in the channel's timezone) in which the member answered at least N of
  the week's daily questions, right or wrong; a week with fewer questions than N asks for all
  of them, a week without any is skipped. It is settled at each reveal, like the daily streak.
  Every ``WEEKLY_FREEZE_EVERY`` weeks of streak earn a freeze (same bank, at most
  ``MAX_FREEZES``) and a freeze covers a missed week.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta

from bot.core.domain.kinds import CHANNEL_KINDS

POINTS_PER_DIFFICULTY = 10
MAX_SPEED_BONUS = 5


def speed_bonus(response_ms: int, window_ms: int) -> int:
    if window_ms <= 0:
        return 0
    remaining = max(0.0, 1.0 - response_ms / window_ms)
    return round(MAX_SPEED_BONUS * remaining)


def points_for(
    *, kind: str, correct: bool, difficulty: int, response_ms: int, window_ms: int, bonus: bool
) -> int:
    if not correct or kind not in CHANNEL_KINDS:
        return 0
    points = POINTS_PER_DIFFICULTY * difficulty
    if bonus:
        points += speed_bonus(response_ms, window_ms)
    return points


FREEZE_EVERY = 7  # streak days that earn one freeze
MAX_FREEZES = 2  # freezes a member can bank per channel


@dataclass
class StreakState:
    current: int = 0
    best: int = 0
    last_post_id: int | None = None
    freezes: int = 0  # banked, spent on the next missed daily post
    freezes_used: int = 0  # all time, shown in /stats
    # weekly mode: the Monday of the week last settled, its answers so far, and whether that
    # week already counts in ``current``
    week_of: date | None = None
    week_answers: int = 0
    week_done: bool = False


def settle_streak(
    state: StreakState, *, post_id: int, previous_post_id: int | None, correct: bool,
    missed: bool = False,
) -> StreakState:
    """New streak after a revealed daily post. Idempotent for the same post, and an older post
    revealed late (a longer reveal delay) cannot rewrite a streak a newer one already settled.
    ``missed``: the member did not answer the post at all (a freeze may cover it)."""
    if state.last_post_id is not None and post_id <= state.last_post_id:
        return state
    continuing = previous_post_id is not None and state.last_post_id == previous_post_id
    if not correct:
        if missed and continuing and state.current > 0 and state.freezes > 0:
            return replace(state, last_post_id=post_id, freezes=state.freezes - 1,
                           freezes_used=state.freezes_used + 1)
        return replace(state, current=0)
    current = state.current + 1 if continuing else 1
    freezes = state.freezes
    if current % FREEZE_EVERY == 0:
        freezes = min(MAX_FREEZES, freezes + 1)
    return replace(state, current=current, best=max(state.best, current), last_post_id=post_id,
                   freezes=freezes)


WEEKLY_FREEZE_EVERY = 4  # streak weeks that earn one freeze (weekly mode)
MAX_PER_WEEK = 7  # weekly mode: at most one answer a day can be asked for


def monday_of(day: date) -> date:
    """The first day of ``day``'s week (weeks run Monday to Sunday)."""
    return day - timedelta(days=day.weekday())


def _credit_week(state: StreakState) -> StreakState:
    current = state.current + 1
    freezes = state.freezes
    if current % WEEKLY_FREEZE_EVERY == 0:
        freezes = min(MAX_FREEZES, freezes + 1)
    return replace(state, current=current, best=max(state.best, current), freezes=freezes,
                   week_done=True)


def _miss_week(state: StreakState) -> StreakState:
    if state.current > 0 and state.freezes > 0:
        return replace(state, freezes=state.freezes - 1, freezes_used=state.freezes_used + 1)
    return replace(state, current=0)


def settle_week(state: StreakState, *, post_id: int, week: date, per_week: int, answered: int,
                posts: Mapping[date, int]) -> StreakState:
    """New weekly streak after a revealed daily post of ``week`` (its Monday). ``answered``:
    the member's answers to this week's daily questions so far; ``posts``: the channel's daily
    questions per week, for the weeks from the one last settled on. The week last settled is
    closed first when this is a later one (enough answers for it, or a miss), then every week
    in between that had questions (missed: the member answered none); this week counts as
    soon as it has ``per_week`` answers. Idempotent; an older week revealed late changes nothing."""
    if state.week_of is not None and week < state.week_of:
        return state
    s = replace(state, last_post_id=max(post_id, state.last_post_id or 0))
    last = s.week_of
    if last != week:
        if last is not None:
            if not s.week_done:
                need = min(per_week, posts.get(last, 0))
                s = _credit_week(s) if need and s.week_answers >= need else _miss_week(s)
            for _ in [w for w in posts if last < w < week and posts[w] > 0]:
                s = _miss_week(s)
        s = replace(s, week_of=week, week_answers=0, week_done=False)
    s = replace(s, week_answers=max(s.week_answers, answered))
    if not s.week_done and s.week_answers >= per_week:
        s = _credit_week(s)
    return s


@dataclass(frozen=True)
class StreakLine:
    """A member's streak in a channel as members read it, the words written once here.
    ``per_week``: weekly mode (answers a week that keep the streak), None: the daily streak;
    ``this_week``: their answers to this week's daily questions (weekly mode)."""

    current: int
    best: int
    per_week: int | None = None
    this_week: int = 0

    @property
    def weekly(self) -> bool:
        return self.per_week is not None

    def progress(self) -> str:
        """``2 of 3 this week`` (``3 of 3 this week ✅`` once the week counts)."""
        assert self.per_week is not None
        done = " ✅" if self.this_week >= self.per_week else ""
        return f"{self.this_week} of {self.per_week} this week{done}"

    def after_answer(self) -> str:
        """The line under an answer: ``🔥 Streak: 7`` or ``🔥 Weekly streak: 3 · 2 of 3 this week``."""
        if not self.weekly:
            return f"🔥 Streak: {self.current}"
        return f"🔥 Weekly streak: {self.current} · {self.progress()}"

    def in_stats(self, bold: str = "**") -> str:
        """``/stats``: ``streak **7** (best 7)`` or ``weekly streak **3** (best 5) · 2 of 3 this week``."""
        if not self.weekly:
            return f"streak {bold}{self.current}{bold} (best {self.best})"
        return f"weekly streak {bold}{self.current}{bold} (best {self.best}) · {self.progress()}"

    def on_home(self) -> str:
        """The dashboard: ``🔥 Daily streak: **7** (best 7)`` or ``🔥 Weekly streak: **3** (best 5) · …``."""
        if not self.weekly:
            return f"🔥 Daily streak: **{self.current}** (best {self.best})"
        return f"🔥 Weekly streak: **{self.current}** (best {self.best}) · {self.progress()}"


def shown_weeks(state: StreakState, *, this_week: date, answered: int, per_week: int) -> int:
    """The weekly streak a member reads now: the settled weeks, less a last week that fell
    short (the next reveal settles it: a banked freeze covers it), plus this week as soon as it
    has enough answers (the reveal settles it; the daily reply likewise counts ahead)."""
    if state.week_of == this_week and state.week_done:
        return state.current
    current = state.current
    if (state.week_of is not None and state.week_of < this_week and not state.week_done
            and state.week_answers < per_week and state.freezes <= 0):
        current = 0
    return current + (1 if answered >= per_week else 0)


def longest_streaks_label(weekly: bool) -> str:
    """The digest's streak line head."""
    return "🔥 **Longest weekly streaks:**" if weekly else "🔥 **Longest streaks:**"


def streak_mode_text(per_week: int | None, changed: bool | None = None) -> str:
    """What ``/daily streak`` answers admins: the mode now, and what a change did."""
    if per_week is None:
        now = ("Streaks here count days: each daily question answered right adds one (a wrong "
               "answer ends it; a freeze covers a day left unanswered).")
    else:
        now = (f"Streaks here count weeks: a week counts when a member answers at least "
               f"**{per_week}** of its daily questions, right or wrong (all of them in a week with "
               f"fewer); a freeze covers a missed week, one earned every {WEEKLY_FREEZE_EVERY} "
               "weeks of streak. Streak role rewards count weeks too.")
    if changed:
        now += (" Current and best streaks here start again from 0 in the new unit (banked "
                "freezes are kept).")
    return now


def bad_per_week(days: int) -> str:
    return (f"The daily schedule here posts on {days} day{'s' if days != 1 else ''} a week: ask "
            f"for at most {days} answers a week.")


def freeze_text(freezes: int, used: int = 0) -> str:
    """The streak line's freeze part, e.g. ``🧊 1 freeze banked, 2 used`` (empty with neither)."""
    if freezes <= 0 and used <= 0:
        return ""
    text = f"🧊 {freezes} freeze{'s' if freezes != 1 else ''} banked"
    return text + (f", {used} used" if used else "")
