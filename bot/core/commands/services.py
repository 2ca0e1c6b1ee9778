"""The features the command layer routes to, built once by the wiring root (``bot/app.py``).

The command desk receives this value and builds nothing itself: one ``WeeklyPosting`` (the one
the scheduler fires), one challenge desk (with the one challenge bank) and one runner slot, so
what a command changes is what the scheduler and the result delivery see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.core.challenges.desk import ChallengeDesk
    from bot.core.community_banks.desk import BankDesk
    from bot.core.daily.service import DailyPosting
    from bot.core.drill.service import Drill
    from bot.core.learning.quality_desk import QualityDesk
    from bot.core.learning.report_desk import ReportDesk
    from bot.core.mock.desk import MockDesk
    from bot.core.mock.group import GroupMocks
    from bot.core.progress.home import HomeDesk
    from bot.core.publisher import Publisher
    from bot.core.runs.desk import RunDesk
    from bot.core.weekly.service import WeeklyPosting


class RunnerAccess(Protocol):
    """What /run, /submit and /bank check may use right now (the runner starts in the background)."""

    def desk(self) -> RunDesk | None: ...

    def unavailable(self) -> str:
        """Why there is no desk: still starting, or not available (and why)."""
        ...


@dataclass(frozen=True)
class Services:
    drill: Drill
    daily: DailyPosting
    weekly: WeeklyPosting
    challenges: ChallengeDesk
    mocks: MockDesk
    group_mocks: GroupMocks
    home: HomeDesk
    reports: ReportDesk
    banks: BankDesk
    quality: QualityDesk
    publisher: Publisher
    runner: RunnerAccess
