"""Run inside the bot container by tools/stack_test.sh: one job through the bot image's
runner client, the Redis queue and the runner container's worker; prints what came back."""

from __future__ import annotations

import asyncio
import sys

from runner.factory import make_runner
from runner.jobs import JobRequest, JobResult

CODE = "import torch\nprint(torch.arange(4).sum().item(), torch.__version__)"
TIMEOUT_S = 180


async def main() -> int:
    runner = make_runner("redis")
    done: asyncio.Future[JobResult] = asyncio.get_running_loop().create_future()

    async def deliver(result: JobResult) -> None:
        if not done.done():
            done.set_result(result)

    runner.on_result(deliver)
    await runner.start()
    try:
        await runner.submit(JobRequest(code=CODE, requester="stack-test:probe", reply_to={}))
        result = await asyncio.wait_for(done, TIMEOUT_S)
    finally:
        await runner.close()
    print(f"job {result.state.value}: exit {result.exit_code}, {result.duration_s:.1f} s, "
          f"device {result.device_used}, torch {result.torch_version}")
    print(f"stdout: {result.stdout.strip()}")
    return 0 if result.state.value == "done" and result.stdout.startswith("6 ") else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
