"""Wiring: build the core, storage, scheduler and runner once, then start the adapters.

Adapters receive an ``App`` and only translate between their platform and ``app.drill``,
``app.daily`` and ``app.runs``; they register their Publisher under their platform name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

from bot.adapters.base import Adapter
from bot.config import Settings
from bot.core.commands import replies
from bot.core.commands.dispatch import CommandDesk
from bot.core.content.bank import Library, load_library
from bot.core.model.clock import Clock, SystemClock
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.play import delivery as delivery_port
from bot.core.play.daily import DailyPosting
from bot.core.play.delivery import Delivery
from bot.core.play.drill import Drill
from bot.core.play.runs import RunDesk
from bot.core.play.weekly import WeeklyPosting
from bot.scheduler import DailyScheduler
from bot.storage.db import Database

log = logging.getLogger(__name__)


class UnknownPlatformError(LookupError):
    pass


@dataclass
class RoutingPublisher:
    """One Publisher for the core that forwards to the adapter of ``where.platform``."""

    routes: dict[str, Publisher] = field(default_factory=dict)

    def register(self, platform: str, publisher: Publisher) -> None:
        self.routes[platform] = publisher

    def _route(self, where: Where) -> Publisher:
        try:
            return self.routes[where.platform]
        except KeyError:
            raise UnknownPlatformError(f"no adapter running for platform {where.platform!r}") from None

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        return await self._route(where).publish(where, message, thread_of=thread_of)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        await self._route(where).update(where, ref, message)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        return await delivery_port.publish_once(self._route(where), where, message, delivery)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        return await delivery_port.find_sent(self._route(where), where, delivery)

    async def permalink(self, where: Where, ref: str) -> str | None:
        return await delivery_port.permalink(self._route(where), where, ref)

    async def tell(self, who: Who, message: Message) -> bool:
        publisher = self.routes.get(who.platform)
        return False if publisher is None else await delivery_port.tell_privately(publisher, who, message)


@dataclass
class App:
    settings: Settings
    db: Database
    library: Library
    drill: Drill
    publisher: RoutingPublisher
    daily: DailyPosting
    scheduler: DailyScheduler
    runs: RunDesk | None = None
    with_runner: bool = True
    runner_overrides: dict[str, object] = field(default_factory=dict)  # RunnerSettings fields
    runner_task: asyncio.Task[str | None] | None = None
    commands: CommandDesk = field(init=False)

    def __post_init__(self) -> None:
        self.commands = CommandDesk(self.drill, self.daily, self.publisher, self)

    # ---- RunnerAccess: what /run may use right now ----------------------------------------
    def desk(self) -> RunDesk | None:
        return self.runs

    def unavailable(self) -> str:
        if self.runner_task is not None and not self.runner_task.done():
            return replies.RUNNER_STARTING
        problem = None
        if self.runner_task is not None and not self.runner_task.cancelled():
            problem = self.runner_task.result() if self.runner_task.exception() is None else None
        return f"{replies.NO_RUNNER} ({problem})" if problem else replies.NO_RUNNER

    def health_checks(self) -> dict[str, object]:
        from bot.observability.health import (
            database_check,
            redis_check,
            runner_detail,
            schema_check,
        )

        checks = {"database": database_check(self.db), "schema": schema_check(self.db),
                  "runner": runner_detail(self)}
        if self.settings.runner_backend.value == "redis":
            checks["redis"] = redis_check(self.settings.redis_url)
        return checks

    async def start_runner(self) -> str | None:
        """Start the code runner; returns why not (``/run`` then says so) instead of failing."""
        try:
            from runner.service import make_runner
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
    drill = Drill(db, library, clock or SystemClock())
    publisher = RoutingPublisher()
    daily = DailyPosting(drill, publisher)
    weekly = WeeklyPosting(drill.db, drill.clock, publisher, library=drill.library)
    scheduler = DailyScheduler(daily, weekly=weekly)
    daily.on_change = scheduler.rebuild
    return App(settings, db, library, drill, publisher, daily, scheduler, with_runner=with_runner)


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
    """Run every configured adapter; with no platform token, the console playground."""
    from bot.observability.health import make_health_app, start_http
    from bot.observability.logs import setup_logging

    adapters: list[Adapter] = []
    app = await build_app(settings)
    adapters = configured_adapters(app)
    console = not adapters
    if console:
        from bot.adapters.console.play import ConsoleAdapter

        adapters = [ConsoleAdapter(app)]
    else:
        setup_logging(settings.log_level, settings.log_json, settings=settings)
    http = None
    slack_serves_http = any(getattr(a, "serves_http", False) for a in adapters)
    if not console and not slack_serves_http:
        http = await start_http(make_health_app(app.health_checks()), settings.http_host, settings.http_port)
    try:
        await run_adapters(app, adapters)
    finally:
        if http is not None:
            await http.cleanup()


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
