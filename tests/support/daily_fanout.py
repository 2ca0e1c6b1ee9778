"""Many channels' dailies due at the same minute, driven as production drives them: each
channel's cron job fires its daily, the posting queue runs them, and the periodic sweep queues
again what a 429 cost. Used by the daily and reveal fan-out tests (Discord and Slack); the
Discord channels themselves come from ``discord_channels_due_at_nine``
(tests/support/discord_fixtures.py)."""

from __future__ import annotations

from bot.app import App


async def fire_dailies(app: App, platform: str, timeout: float) -> None:
    """What each channel's cron job does when its daily is due; then wait, at most ``timeout``
    seconds, until the posting queue has nothing queued or running."""
    for view in await app.daily.schedules.all():
        await app.scheduler.fire_daily(view.channel_pk, platform)
    await app.scheduler.queue.drained(timeout)


async def sweep_until_settled(app: App, sweeps: int, timeout: float) -> None:
    """The periodic sweep, at most ``sweeps`` times: what a 429 cost is queued again, and each
    round is waited for (at most ``timeout`` seconds) until nothing is pending."""
    for _ in range(sweeps):
        await app.scheduler.sweep()
        if not app.scheduler.queue.pending():
            break
        await app.scheduler.queue.drained(timeout)
