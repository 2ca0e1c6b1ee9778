"""Weekly streaks: the days, weeks and restart the weekly-streak tests walk."""

from __future__ import annotations

DAYS = ("Streaks here count days: each daily question answered right adds one (a wrong answer "
        "ends it; a freeze covers a day left unanswered).")


WEEKS = ("Streaks here count weeks: a week counts when a member answers at least **2** of its "
         "daily questions, right or wrong (all of them in a week with fewer); a freeze covers a "
         "missed week, one earned every 4 weeks of streak. Streak role rewards count weeks too.")


RESTART = (" Current and best streaks here start again from 0 in the new unit (banked freezes are "
           "kept).")
