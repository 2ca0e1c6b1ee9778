"""Daily posts on APScheduler 3.x: one cron job per channel, rebuilt from the database.

APScheduler 3 cannot share a job store between processes, so jobs live in memory and the
database stays the source of truth: jobs are rebuilt at start, after every schedule change and
by a periodic sync (picking up changes made by other replicas). Exactly-once posting is the
claim row's job (bot.core.play.daily), not the scheduler's.
"""

from __future__ import annotations

import logging
from datetime import datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.core.play.daily import DailyPosting, ScheduleView, all_schedules
from bot.core.play.weekly import WeeklyKind, WeeklyPosting, spec_of

log = logging.getLogger(__name__)

MISFIRE_GRACE_S = 3 * 3600  # a job that fires late (busy loop, slow start) still posts
TICK_SECONDS = 30


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
                 tick_seconds: int = TICK_SECONDS) -> None:
        self.daily = daily
        self.weekly = weekly
        self.tick_seconds = tick_seconds
        self.scheduler = AsyncIOScheduler(
            timezone="UTC",
            job_defaults={"coalesce": True, "misfire_grace_time": MISFIRE_GRACE_S, "max_instances": 1},
        )
        self._signature: tuple[object, ...] = ()

    async def start(self) -> None:
        await self.daily.recover_unsent()
        await self.daily.catch_up()
        if self.weekly is not None:
            await self.weekly.recover_unsent()
            await self.weekly.catch_up()
        await self.daily.drill.recover(self.daily.publisher)
        await self.rebuild()
        self.scheduler.add_job(
            self.tick, IntervalTrigger(seconds=self.tick_seconds), id="tick", replace_existing=True
        )
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def rebuild(self) -> None:
        views = await all_schedules(self.daily.db)
        wanted = {f"daily:{v.channel_pk}": v for v in views if not v.paused}
        weekly = {f"weekly:{kind}:{v.channel_pk}": (v, kind, spec_of(v, kind)) for v in views
                  for kind in WeeklyKind if self.weekly is not None and not v.paused and spec_of(v, kind)}
        for job in self.scheduler.get_jobs():
            if job.id.split(":")[0] in ("daily", "weekly") and job.id not in {**wanted, **weekly}:
                job.remove()
        for job_id, view in wanted.items():
            self.scheduler.add_job(
                self.daily.fire, cron_for(view), args=[view.channel_pk], id=job_id,
                replace_existing=True, name=f"daily post {view.where.platform}:{view.where.channel_id}",
            )
        for job_id, (view, kind, spec) in weekly.items():
            assert self.weekly is not None and spec
            self.scheduler.add_job(
                self.weekly.fire, weekly_cron(spec, view.timezone),
                args=[view.channel_pk, kind], id=job_id, replace_existing=True,
                name=f"weekly {kind} {view.where.platform}:{view.where.channel_id}",
            )
        self._signature = tuple(sorted((v.channel_pk, repr(v)) for v in views))
        log.info("daily schedules loaded", extra={"channels": len(wanted)})

    async def tick(self) -> None:
        """Reveal what is due, finish abandoned claims, pick up other replicas' changes."""
        try:
            await self.daily.drill.reveal_due(self.daily.publisher)
            await self.daily.recover_unsent()
            if self.weekly is not None:
                await self.weekly.recover_unsent()
                await self.weekly.close_due()
            views = await all_schedules(self.daily.db)
            if tuple(sorted((v.channel_pk, repr(v)) for v in views)) != self._signature:
                await self.rebuild()
        except Exception:
            log.exception("scheduler tick failed")

    def next_runs(self) -> dict[str, datetime | None]:
        return {job.id: job.next_run_time for job in self.scheduler.get_jobs()}
