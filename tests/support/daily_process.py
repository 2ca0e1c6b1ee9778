"""Run one daily post attempt in its own process (used by the exactly-once tests).

Usage:
  python tests/support/daily_process.py DB_URL OUT_FILE START_AT
      waits until START_AT (epoch seconds) so both processes race, then fires every schedule
      and appends the refs it published to OUT_FILE.
  python tests/support/daily_process.py crash PLATFORM DB_URL API_URL CRASH_AT WHEN_ISO
      posts the daily question of PLATFORM's fake channel through the real publisher, at the
      fake time WHEN_ISO. With CRASH_AT=before-send the process kill -9s itself right before
      the platform call; with CRASH_AT=after-accepted the test kills it (the fake holds the
      answer of the accepted post).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bot.config import Settings
from bot.core.domain.clock import FakeClock

DISCORD_TOKEN = "fake-bot-token"  # tests.support.fake_discord.FakeDiscord.token
SLACK_TOKEN = "xoxb-fake-bot-token"  # tests.support.fake_slack.FakeSlack.token


class FilePublisher:
    def __init__(self, out: Path) -> None:
        self.out = out

    async def publish(self, where, message, *, thread_of=None) -> str:
        ref = f"{where.channel_id}-{time.monotonic_ns()}"
        with self.out.open("a") as fh:
            fh.write(f"{ref}\n")
        return ref

    async def update(self, where, ref, message) -> None:
        pass


class DieBeforeSend:
    """Forwards to the real publisher, but the keyed send kills the process first."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def publish(self, where, message, *, thread_of=None) -> str:
        return await self.inner.publish(where, message, thread_of=thread_of)

    async def update(self, where, ref, message) -> None:
        await self.inner.update(where, ref, message)

    async def publish_once(self, where, message, delivery) -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

    async def find_sent(self, where, delivery):
        return await self.inner.find_sent(where, delivery)


def where_of(platform: str):
    """The channel of each fake platform (tests.support.fake_discord / tests.support.fake_slack)."""
    from bot.core.domain.identity import Where

    if platform == "discord":
        return Where("discord", "900000000000000002", "900000000000000003", "pytorch-study")
    return Where("slack", "T0FAKE", "C0DRILLS", "drills")


async def race(url: str, out: Path, start_at: float) -> None:
    from bot.app import build_app

    clock = FakeClock(datetime(2026, 3, 4, 8, 0, 5, tzinfo=UTC))  # 09:00:05 Berlin
    app = await build_app(Settings(database_url=url), clock=clock, with_runner=False)
    app.publisher.register("discord", FilePublisher(out))
    views = await app.daily.schedules.all()
    await asyncio.sleep(max(0.0, start_at - time.time()))
    await asyncio.gather(*(app.daily.fire(v.channel_pk) for v in views))
    await app.db.dispose()


async def real_publisher(platform: str, api_url: str):
    """The publisher the platform's adapter registers with the app (wrappers included), against
    the fake, and how to close it."""
    if platform == "discord":
        import discord
        from discord.http import Route

        from bot.adapters.discord.publisher import adapter_publisher

        Route.BASE = api_url
        client = discord.Client(intents=discord.Intents.none())
        await client.login(DISCORD_TOKEN)
        return adapter_publisher(client), client.close

    from bot.adapters.slack.app import make_client
    from bot.adapters.slack.workspaces import SlackClients, adapter_publisher

    client = make_client(Settings(_env_file=None, slack_bot_token=SLACK_TOKEN,  # type: ignore[call-arg]
                                  slack_api_base_url=api_url))
    publisher = adapter_publisher(SlackClients.single(client))
    return publisher, client.session.close if client.session else _nothing


async def _nothing() -> None:
    pass


async def crash(platform: str, url: str, api_url: str, crash_at: str, when: str) -> None:
    from bot.app import build_app

    clock = FakeClock(datetime.fromisoformat(when))
    app = await build_app(Settings(_env_file=None, database_url=url), clock=clock, with_runner=False)
    publisher, close = await real_publisher(platform, api_url)
    app.publisher.register(platform, DieBeforeSend(publisher) if crash_at == "before-send" else publisher)
    print(await app.daily.post_now(where_of(platform)), flush=True)  # never reached: killed
    await close()
    await app.db.dispose()


if __name__ == "__main__":
    if sys.argv[1] == "crash":
        asyncio.run(crash(*sys.argv[2:7]))
    else:
        asyncio.run(race(sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])))
