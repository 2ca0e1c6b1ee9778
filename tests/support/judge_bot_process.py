"""The bot's side of /challenge and /submit in a process where torch cannot be imported (the
bot's image has no torch): built through bot/app.py with the Redis runner, it submits each code
given on stdin and prints the verdict messages as posted in the acknowledgement's thread.

Run by tests/challenges/test_judge_redis.py: `python tests/support/judge_bot_process.py DB_PATH REDIS_URL PREFIX`.
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

BLOCKED = ("torch", "safetensors")


class NoTorch(importlib.abc.MetaPathFinder):
    """Makes `import torch` (and safetensors) fail as on a host that does not have it."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: the bot has no torch)")
        return None


sys.meta_path.insert(0, NoTorch())

import asyncio  # noqa: E402
import json  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

from bot.app import build_app  # noqa: E402
from bot.config import RunnerBackend, Settings  # noqa: E402
from bot.core.commands.dispatch import Caller  # noqa: E402
from bot.core.domain.clock import FakeClock  # noqa: E402
from tests.support.challenge_flow import ANA, HERE, PLATFORM, Ack, Recorder  # noqa: E402


async def main(db_path: str, redis_url: str, prefix: str, problem: str, codes: list[str]) -> None:
    settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{db_path}",  # type: ignore[call-arg]
                        runner_backend=RunnerBackend.REDIS, redis_url=redis_url)
    app = await build_app(settings, clock=FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC)),
                          with_runner=False)
    app.runner_overrides.update(key_prefix=prefix, redis_url=redis_url, rate_per_minute=60)
    why_not = await app.start_runner()
    assert why_not is None, why_not
    recorder = Recorder()
    app.publisher.register(PLATFORM, recorder)
    desk = app.commands
    await desk.services.challenges.open_id(ANA, problem, "/submit")
    verdicts = []
    for code in codes:
        ack = Ack(recorder)
        refused = await desk.submit_challenge(Caller(ANA, HERE), code, ack)
        assert refused is None, refused.plain()
        [verdict] = await recorder.in_thread(f"m{len(recorder.posts)}", 1)
        verdicts.append({"title": verdict.title, "plain": verdict.plain()})
    assert app.runs is not None
    await app.runs.runner.close()
    await app.db.dispose()
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps({"verdicts": verdicts, "loaded": loaded}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.stdin.read())))
