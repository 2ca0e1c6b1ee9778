"""A bot replica in its own process, for the Redis routing test.

Usage: python tests/support/redis_replica.py REDIS_URL PREFIX NAME COUNT
Submits COUNT jobs (``print(NAME-i)``, one member each), prints a JSON line per submitted
job id, then a JSON line per result this process delivered, and exits once its own results
all came back (or after 60 s).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from runner.jobs import JobRequest, JobResult
from runner.redis_queue import RedisRunner
from runner.settings import RunnerSettings


async def main(url: str, prefix: str, name: str, count: int) -> None:
    settings = RunnerSettings(redis_url=url, key_prefix=prefix, cpu_slots=1, gpus=[],
                              queue_cap=50, rate_per_minute=100,
                              journal_path=Path(tempfile.mkdtemp()) / "unused")
    runner = RedisRunner(settings)
    delivered: list[JobResult] = []
    done = asyncio.Event()
    mine: set[str] = set()

    async def collect(result: JobResult) -> None:
        delivered.append(result)
        print(json.dumps({"delivered": result.job_id, "stdout": result.stdout}), flush=True)
        if mine <= {r.job_id for r in delivered}:
            done.set()

    runner.on_result(collect)
    await runner.start()
    for i in range(count):
        sub = await runner.submit(JobRequest(code=f"print('{name}-{i}')", requester=f"{name}:{i}",
                                             reply_to={"replica": name}))
        mine.add(sub.job_id)
        print(json.dumps({"submitted": sub.job_id}), flush=True)
    try:
        await asyncio.wait_for(done.wait(), 60)
        await asyncio.sleep(0.5)  # long enough to take someone else's result, if it would
    finally:
        await runner.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
