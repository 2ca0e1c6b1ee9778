"""Wiring: build the core, storage, scheduler and runner once, then start the adapters.

Adapters receive an ``App`` and only translate between their platform and ``app.drill``,
``app.daily`` and ``app.runs``; they register their Publisher under their platform name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.adapters.base import Adapter
from bot.config import Settings
from bot.core.challenges.desk import ChallengeDesk
from bot.core.commands import replies
from bot.core.commands.catalogue import COMMANDS
from bot.core.commands.dispatch import CommandDesk
from bot.core.commands.services import RunnerAccess, Services
from bot.core.community_banks.desk import BankDesk
from bot.core.content.bank import Library, load_library
from bot.core.daily.service import DailyPosting
from bot.core.domain.clock import Clock, SystemClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.drill import delivery as delivery_port
from bot.core.drill.service import Drill
from bot.core.learning.adaptive import DEFAULT_BAND
from bot.core.learning.quality_desk import QualityDesk
from bot.core.learning.report_desk import ReportDesk
from bot.core.mock.desk import MockDesk
from bot.core.mock.group import GroupMocks
from bot.core.progress.home import HomeDesk
from bot.core.publisher import (
    ChatPublisher,
    Delivery,
    Publisher,
    has_roles_via,
    role_problem_via,
    set_role_via,
)
from bot.core.runs.desk import RunDesk
from bot.core.weekly.service import WeeklyPosting
from bot.scheduler import DailyScheduler
from bot.storage.challenge_progress import StoredChallengeProgress
from bot.storage.claims import DailyClaims
from bot.storage.community_banks import StoredBanks
from bot.storage.daily import StoredDaily
from bot.storage.db import Database
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.drill_stores import drill_stores
from bot.storage.group_mocks import StoredGroupMocks
from bot.storage.schedules import StoredSchedules
from bot.storage.weekly import StoredWeekly

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from bot.core.content.challenges import ChallengeBank
    from bot.core.posting.claims import ClaimStore
    from bot.core.publisher import Publisher
    from bot.core.weekly.ports import WeeklyNatural
    from bot.observability.health import Check, Detail

log = logging.getLogger(__name__)


class UnknownPlatformError(LookupError):
    pass


@dataclass
class RoutingPublisher(ChatPublisher):
    """One Publisher for the core that forwards to the adapter of ``where.platform``."""

    routes: dict[str, ChatPublisher] = field(default_factory=dict)

    def register(self, platform: str, publisher: ChatPublisher) -> None:
        self.routes[platform] = publisher

    def _route(self, where: Where) -> ChatPublisher:
        try:
            return self.routes[where.platform]
        except KeyError:
            raise UnknownPlatformError(f"no adapter running for platform {where.platform!r}") from None

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        return await self._route(where).publish(where, message, thread_of=thread_of)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        await self._route(where).update(where, ref, message)

    # the delivery helpers, not direct calls: tests register smaller publishers than a platform's
    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        return await delivery_port.publish_once(self._route(where), where, message, delivery)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        return await delivery_port.find_sent(self._route(where), where, delivery)

    async def permalink(self, where: Where, ref: str) -> str | None:
        return await delivery_port.permalink(self._route(where), where, ref)  # never fails a post

    async def tell(self, who: Who, message: Message) -> bool:
        publisher = self.routes.get(who.platform)
        return False if publisher is None else await delivery_port.tell_privately(publisher, who, message)

    async def delete(self, where: Where, ref: str) -> None:
        await self._route(where).delete(where, ref)

    async def set_role(self, where: Where, user_id: str, role_id: str, *, held: bool) -> None:
        await set_role_via(self._route(where), where, user_id, role_id, held=held)

    def has_roles(self, where: Where) -> bool:
        return has_roles_via(self.routes.get(where.platform), where)

    async def role_problem(self, where: Where, role_id: str) -> str | None:
        return await role_problem_via(self._route(where), where, role_id)


@dataclass
class RunnerSlot:
    """The runner as the core sees it (``RunnerAccess``): its desk once started, or why not."""

    with_runner: bool = True
    runs: RunDesk | None = None
    task: asyncio.Task[str | None] | None = None

    def desk(self) -> RunDesk | None:
        return self.runs

    def unavailable(self) -> str:
        if self.task is not None and not self.task.done():
            return replies.RUNNER_STARTING
        if self.with_runner and self.task is None and self.runs is None:
            return replies.RUNNER_STARTING  # adapters answer before start() creates the task
        problem = None
        if self.task is not None and not self.task.cancelled():
            problem = self.task.result() if self.task.exception() is None else None
        return f"{replies.NO_RUNNER} ({problem})" if problem else replies.NO_RUNNER


def weekly_posting(db: Database, clock: Clock, publisher: Publisher, *, bank: ChallengeBank | None = None,
                   on_change: Callable[[], Awaitable[None]] | None = None, library: Library | None = None,
                   claims: ClaimStore[WeeklyNatural, int] | None = None) -> WeeklyPosting:
    """The weekly posts on ``db`` (``build_services`` and the tests build them here): the
    weekly claims (``claims`` replaces their rows, for a test), the digest's reads."""
    return WeeklyPosting(StoredWeekly(db, claims), StoredDigestReads(), clock, publisher, bank=bank,
                         on_change=on_change, library=library)


def build_daily(drill: Drill[Database], publisher: Publisher,
                on_change: Callable[[], Awaitable[None]] | None = None) -> DailyPosting:
    """The daily question over its stores (``build_app`` and the tests build it here)."""
    return DailyPosting(drill, publisher, schedules=StoredSchedules(drill.db), store=StoredDaily(drill.db),
                        claims=DailyClaims(drill.db), on_change=on_change)  # claims: bot.core.posting's port


def challenge_desk(db: Database, clock: Clock, bank: ChallengeBank | None = None, *,
                   rng: random.Random | None = None) -> ChallengeDesk:
    """/challenge over its progress store (``build_services`` and the tests build it here;
    the shipped bank when ``bank`` is None)."""
    return ChallengeDesk(StoredChallengeProgress(db, clock), clock, bank, rng=rng)


def build_services(drill: Drill[Database], daily: DailyPosting, publisher: ChatPublisher,
                   runner: RunnerAccess) -> Services:
    """Every feature the commands route to, once; ``build_app`` and the tests call this."""
    challenges = challenge_desk(drill.db, drill.clock)
    drill.role_publisher = publisher  # readiness roles the moment a private answer moves it

    async def solve_rewards(who: Who, challenge_id: str, passed: int, total: int, solved: bool) -> None:
        if solved:  # "N challenges solved" roles the moment the verdict passes
            await drill.rewards_for_who(who, ("solved",), publisher)

    challenges.verdict_listeners.append(solve_rewards)
    mocks = MockDesk(drill.mock_store, drill.library, drill.clock, challenges, drill.rng, drill.practice.band)
    weekly = weekly_posting(drill.db, drill.clock, publisher, on_change=daily.changed, library=drill.library)
    return Services(
        drill=drill, daily=daily, weekly=weekly, challenges=challenges, mocks=mocks,
        group_mocks=GroupMocks(StoredGroupMocks(drill.db), mocks, drill.clock, publisher),
        home=HomeDesk(drill, daily, challenges, weekly, COMMANDS),
        reports=ReportDesk(drill.report_store, drill.library, drill.clock, drill.refresh_shelf),
        banks=BankDesk(StoredBanks(drill.db), drill.library, drill.clock, drill.shelf),
        quality=QualityDesk(drill.quality_data, drill.library), publisher=publisher, runner=runner)


@dataclass
class App:
    settings: Settings
    db: Database
    library: Library
    drill: Drill
    publisher: RoutingPublisher
    daily: DailyPosting
    scheduler: DailyScheduler
    services: Services
    runner: RunnerSlot
    runner_overrides: dict[str, object] = field(default_factory=dict)  # RunnerSettings fields
    commands: CommandDesk = field(init=False)

    def __post_init__(self) -> None:
        self.commands = CommandDesk(self.services)

    # the runner slot's state, as tests and adapters read and set it
    @property
    def runs(self) -> RunDesk | None:
        return self.runner.runs

    @runs.setter
    def runs(self, desk: RunDesk | None) -> None:
        self.runner.runs = desk

    @property
    def runner_task(self) -> asyncio.Task[str | None] | None:
        return self.runner.task

    @runner_task.setter
    def runner_task(self, task: asyncio.Task[str | None] | None) -> None:
        self.runner.task = task

    @property
    def with_runner(self) -> bool:
        return self.runner.with_runner

    @with_runner.setter
    def with_runner(self, value: bool) -> None:
        self.runner.with_runner = value

    def health_checks(self) -> dict[str, Check | Detail]:
        from bot.observability.health import (
            database_check,
            posting_detail,
            redis_check,
            runner_detail,
            schema_check,
        )

        checks: dict[str, Check | Detail] = {
            "database": database_check(self.db), "schema": schema_check(self.db),
            "runner": runner_detail(self), "posting": posting_detail(self.scheduler.detail)}
        if self.settings.runner_backend.value == "redis":
            checks["redis"] = redis_check(self.settings.redis_url)
        return checks

    async def start_runner(self) -> str | None:
        """Start the code runner; returns why not (``/run`` then says so) instead of failing."""
        try:
            from runner.factory import make_runner
        except ImportError:
            return "the runner extra is not installed (pip install 'torchdrill[runner]')"
        runner = make_runner(self.settings.runner_backend.value, **self.runner_overrides)
        desk = RunDesk(runner, self.publisher, self.library)
        self.commands.attach_runs(desk)  # before start(): results found at start are judged too
        try:
            await runner.start()
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await runner.close()
            if not isinstance(exc, Exception):
                raise
            log.warning("the code runner could not start: %s", exc)
            return f"the code runner could not start here ({exc})"
        self.runs = desk
        return None

    async def start(self) -> None:
        """Scheduler now; the runner in the background (warming torch takes seconds)."""
        await self.scheduler.start()
        if self.with_runner and self.runs is None and self.runner_task is None:
            self.runner_task = asyncio.create_task(self.start_runner(), name="runner start")

    async def close(self) -> None:
        self.scheduler.shutdown()
        await self.commands.close()
        if self.runner_task is not None and not self.runner_task.done():
            self.runner_task.cancel()
            await asyncio.gather(self.runner_task, return_exceptions=True)
        if self.runs is not None:
            await self.runs.runner.close()
        await self.db.dispose()


def load_banks(settings: Settings) -> Library:
    library = load_library(settings.content_dir, extra_files=settings.extra_banks)
    for problem in library.problems:
        log.warning("bank problem (bank skipped): %s", problem)
    log.info("question banks loaded", extra={"banks": len(library.banks), "questions": len(library)})
    return library


def build_drill(db: Database, library: Library, clock: Clock | None = None,
                rng: random.Random | None = None, *,
                practice_band: tuple[float, float] = DEFAULT_BAND) -> Drill[Database]:
    """The drill over its stores, built once here (``bot.storage.drill_stores``): the app's
    one way to build it, and the tests' and benches'."""
    clock = clock or SystemClock()
    return Drill(drill_stores(db, library, clock), library, clock, rng, practice_band=practice_band)


async def build_app(
    settings: Settings, *, clock: Clock | None = None, with_runner: bool = True
) -> App:
    """Build everything; refuses an unmigrated database (run `torchdrill migrate`)."""
    db = Database(settings.database_url)
    try:
        await db.ensure_migrated()
    except Exception:
        await db.dispose()
        raise
    library = load_banks(settings)
    drill = build_drill(db, library, clock, practice_band=settings.practice_band)
    publisher = RoutingPublisher()
    daily = build_daily(drill, publisher)
    runner = RunnerSlot(with_runner=with_runner)
    services = build_services(drill, daily, publisher, runner)
    scheduler = DailyScheduler(daily, weekly=services.weekly)
    scheduler.sweeps.append(lambda: services.mocks.sweep(publisher))  # /mock deadlines
    scheduler.sweeps.append(services.group_mocks.sweep)  # group mocks' posts and boards, after those
    daily.on_change = scheduler.rebuild
    return App(settings, db, library, drill, publisher, daily, scheduler, services, runner)


def configured_adapters(app: App) -> list[Adapter]:
    settings = app.settings
    adapters: list[Adapter] = []
    if settings.discord_token:
        from bot.adapters.discord.bot import DiscordAdapter

        adapters.append(DiscordAdapter(app))
    if settings.slack_bot_token or settings.slack_oauth:
        from bot.adapters.slack.app import SlackAdapter

        adapters.append(SlackAdapter(app))
    return adapters


async def serve(settings: Settings) -> None:
    """Run every configured adapter. With no platform token: the console playground in a
    terminal; without one (a container) the HTTP endpoints, scheduler and runner, so
    /readyz still answers while the tokens are being set up."""
    from bot.observability.health import make_health_app, start_http
    from bot.observability.logs import setup_logging

    adapters: list[Adapter] = []
    app = await build_app(settings)
    adapters = configured_adapters(app)
    console = not adapters and sys.stdin.isatty()
    if console:
        from bot.adapters.console.play import ConsoleAdapter

        adapters = [ConsoleAdapter(app)]
    else:
        setup_logging(settings.log_level, settings.log_json, settings=settings)
        if not adapters:
            log.warning("no Discord or Slack token set and no terminal: serving only HTTP "
                        "(/healthz, /readyz, /metrics) until signalled")
    http = None
    slack_serves_http = any(getattr(a, "serves_http", False) for a in adapters)
    if not console and not slack_serves_http:
        http = await start_http(make_health_app(app.health_checks()), settings.http_host, settings.http_port)
    try:
        await (run_adapters(app, adapters) if adapters else run_headless(app))
    finally:
        if http is not None:
            await http.cleanup()


async def run_headless(app: App) -> None:
    """No platform and no terminal: the app (scheduler, runner) until the task is cancelled."""
    try:
        await app.start()
        await asyncio.Event().wait()
    finally:
        await app.close()


async def run_adapters(app: App, adapters: list[Adapter]) -> None:
    """Start adapters, then the app; serve until one stops; close everything in reverse."""
    try:
        for adapter in adapters:
            app.publisher.register(adapter.platform, adapter.publisher)
            await adapter.start()
        await app.start()
        await asyncio.gather(*(adapter.run_forever() for adapter in adapters))
    finally:
        for adapter in adapters:
            await adapter.close()
        await app.close()


PLAYGROUND_JOURNAL = "playground-runner-journal.sqlite3"


async def play(settings: Settings, db_path: Path, name: str | None) -> None:
    """`torchdrill play`: the console on its own SQLite file; the runner starts in the
    background with its journal next to the database, so the prompt is usable at once."""
    from bot.adapters.console.play import ConsoleAdapter

    app = await build_app(settings, with_runner=False)
    try:
        console = ConsoleAdapter(app, name=name, files_dir=db_path.parent / "playground-files")
    except BaseException:
        await app.close()
        raise
    app.runner_overrides["journal_path"] = db_path.parent / PLAYGROUND_JOURNAL
    app.runner_task = asyncio.create_task(app.start_runner(), name="playground runner")
    await run_adapters(app, [console])
