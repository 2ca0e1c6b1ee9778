"""Daily posts on APScheduler 3.x: one cron job per channel, rebuilt from the database.

APScheduler 3 cannot share a job store between processes, so jobs live in memory and the
database stays the source of truth: jobs are rebuilt at start, after every schedule change and
by a periodic sync (picking up changes made by other replicas). Exactly-once posting is the
claim row's job (bot.core.daily.service), not the scheduler's.

A cron job only queues its channel (bot.core.posting.fanout): bounded posting workers do the work
at the platform's pace. Every tick sweeps for what is left: unsent claims whose lease expired,
and schedules whose post of the day (or of the week) has no claim past its fire time (a fire
that failed before claiming, e.g. on a dry connection pool, or never ran), which are queued again
until the catch-up grace runs out. A tick reads every schedule once; a fire reads only its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import date, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.core.daily.service import CATCH_UP_GRACE, DailyPosting, ScheduleView
from bot.core.posting.fanout import Job, PostingQueue
from bot.core.weekly.service import WeeklyKind, WeeklyPosting, spec_of, week_start

log = logging.getLogger(__name__)

MISFIRE_GRACE_S = 3 * 3600  # a job that fires late (busy loop, slow start) still posts
TICK_SECONDS = 30
STARTUP_WAIT_S = 60.0  # start-up waits this long for the posts a restart missed


def cron_for(view: ScheduleView) -> CronTrigger:
    hour, minute = view.time_of_day.split(":")
    return CronTrigger(
        day_of_week=",".join(view.weekdays), hour=int(hour), minute=int(minute),
        timezone=view.timezone,
    )


def weekly_cron(spec: str, timezone: str) -> CronTrigger:
    day, hhmm = spec.split()
    hour, minute = hhmm.split(":")
    return CronTrigger(day_of_week=day, hour=int(hour), minute=int(minute), timezone=timezone)


class DailyScheduler:
    def __init__(self, daily: DailyPosting, *, weekly: WeeklyPosting | None = None,
                 tick_seconds: int = TICK_SECONDS, queue: PostingQueue | None = None) -> None:
        self.daily = daily
        self.weekly = weekly
        self.tick_seconds = tick_seconds
        self.queue = queue or PostingQueue()
        self.scheduler = AsyncIOScheduler(
            timezone="UTC",
            job_defaults={"coalesce": True, "misfire_grace_time": MISFIRE_GRACE_S, "max_instances": 1},
        )
        self._signature: tuple[object, ...] = ()
        self._started_at: datetime | None = None
        self._reveal_lock = asyncio.Lock()
        self._revealed_from = float("-inf")
        self.sweeps: list[Callable[[], Awaitable[object]]] = []  # more work per tick (/mock deadlines)

    async def start(self) -> None:
        self._started_at = self.daily.drill.clock.now()
        self.queue.start()
        if self.weekly is not None:
            await self.weekly.recover_unsent()
            await self.weekly.catch_up()
        await self.daily.drill.recover(self.daily.publisher)
        await self.sweep()
        await self._extra_sweeps()
        with contextlib.suppress(TimeoutError):  # a head start for what a restart missed
            await self.queue.drained(STARTUP_WAIT_S)
        await self.rebuild()
        self.scheduler.add_job(
            self.tick, IntervalTrigger(seconds=self.tick_seconds), id="tick", replace_existing=True
        )
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        self.queue.stop()

    async def rebuild(self) -> None:
        views = await self.daily.schedules.all()
        wanted = {f"daily:{v.channel_pk}": v for v in views if not v.paused}
        weekly = {f"weekly:{kind}:{v.channel_pk}": (v, kind, spec_of(v, kind)) for v in views
                  for kind in WeeklyKind if self.weekly is not None and not v.paused and spec_of(v, kind)}
        for job in self.scheduler.get_jobs():
            if job.id.split(":")[0] in ("daily", "weekly") and job.id not in {**wanted, **weekly}:
                job.remove()
        for job_id, view in wanted.items():
            self.scheduler.add_job(
                self.fire_daily, cron_for(view), args=[view.channel_pk, view.where.platform], id=job_id,
                replace_existing=True, name=f"daily post {view.where.platform}:{view.where.channel_id}",
            )
        for job_id, (view, kind, spec) in weekly.items():
            assert self.weekly is not None and spec
            self.scheduler.add_job(
                self.fire_weekly, weekly_cron(spec, view.timezone),
                args=[view.channel_pk, kind, view.where.platform], id=job_id, replace_existing=True,
                name=f"weekly {kind} {view.where.platform}:{view.where.channel_id}",
            )
        self._signature = tuple(sorted((v.channel_pk, repr(v)) for v in views))
        log.info("daily schedules loaded", extra={"channels": len(wanted)})

    # ---- fires queue work ----------------------------------------------------------------
    async def fire_daily(self, channel_pk: int, platform: str) -> None:
        """A channel's cron job: queue its post (the workers reveal and post at their pace)."""
        self.queue_daily(channel_pk, platform, self.daily.drill.clock.now())

    async def fire_weekly(self, channel_pk: int, kind: WeeklyKind, platform: str) -> None:
        """A channel's weekly job: queue its post (a failure before the claim: the sweep)."""
        self._queue_weekly(channel_pk, kind, platform)

    def _queue_weekly(self, channel_pk: int, kind: WeeklyKind, platform: str) -> bool:
        weekly = self.weekly
        assert weekly is not None
        return self.queue.put(Job(("weekly", kind.value, channel_pk), platform,
                                  lambda: weekly.fire(channel_pk, kind)))

    def queue_daily(self, channel_pk: int, platform: str, fire_time: datetime) -> bool:
        queued_at = asyncio.get_running_loop().time()

        async def run() -> None:
            await self._reveal_before(queued_at)
            await self.daily.post_due(channel_pk, fire_time)

        return self.queue.put(Job(("daily", channel_pk), platform, run))

    async def _reveal_before(self, queued_at: float) -> None:
        """Reveal what is due once for every post queued before the reveal began (yesterday's
        answer comes out as today's question goes up), not once per fire."""
        async with self._reveal_lock:
            if self._revealed_from >= queued_at:
                return
            self._revealed_from = asyncio.get_running_loop().time()
            try:
                await self.daily.drill.reveal_due(self.daily.publisher)
            except Exception:  # posting goes on; the tick reveals again
                log.exception("reveal before the daily posts failed")

    # ---- the sweep -----------------------------------------------------------------------
    async def sweep(self, views: list[ScheduleView] | None = None) -> None:
        """Queue every unsent claim whose lease expired and every post missing past its time
        (``views``: every schedule, when the tick has read them already)."""
        for channel_pk, local_date in await self.daily.stale_claims():
            self._queue_recovery(channel_pk, local_date)
        if views is None:
            views = await self.daily.schedules.all()
        now = self.daily.drill.clock.now()
        oldest = now - CATCH_UP_GRACE
        if self._started_at is not None:  # what this process was here to post, grace or not
            oldest = min(oldest, self._started_at)
        for due in await self.daily.unclaimed_fires(now, oldest, views):
            where, day = due.view.where, due.local_date.isoformat()
            if now - due.fire_time > CATCH_UP_GRACE:
                self.queue.missed("daily", where.platform, where.channel_id, day)
            elif self.queue_daily(due.view.channel_pk, where.platform, due.fire_time):
                self.queue.late("daily", where.platform, where.channel_id, day)
        if self.weekly is not None:
            for view, kind in await self.weekly.unclaimed(views, now):
                where = view.where
                if self._queue_weekly(view.channel_pk, kind, where.platform):
                    week = week_start(now, view.timezone).isoformat()
                    self.queue.late(f"weekly {kind.value}", where.platform, where.channel_id, week)

    def _queue_recovery(self, channel_pk: int, local_date: date) -> None:
        async def run() -> None:
            await self.daily.recover_one(channel_pk, local_date)

        self.queue.put(Job(("recover", channel_pk, local_date), "recovery", run))

    async def tick(self) -> None:
        """Reveal what is due, finish abandoned claims, pick up other replicas' changes."""
        try:
            await self.daily.drill.reveal_due(self.daily.publisher)
            views = await self.daily.schedules.all()  # once per tick, never per fire
            await self.sweep(views)
            if self.weekly is not None:
                await self.weekly.recover_unsent()
                await self.weekly.close_due()
            await self._extra_sweeps()
            if tuple(sorted((v.channel_pk, repr(v)) for v in views)) != self._signature:
                await self.rebuild()
        except Exception:
            log.exception("scheduler tick failed")

    async def _extra_sweeps(self) -> None:
        for sweep in self.sweeps:
            try:
                await sweep()
            except Exception:  # one feature's sweep never stops the posting
                log.exception("a scheduler sweep failed")

    def next_runs(self) -> dict[str, datetime | None]:
        return {job.id: job.next_run_time for job in self.scheduler.get_jobs()}

    def detail(self) -> dict[str, object]:
        """/readyz: the posting queue and the posts this process found late or missed."""
        return self.queue.stats.as_detail()
