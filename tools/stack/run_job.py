"""Run inside the bot container by tools/stack_test.sh: a /run job and a /submit judge job
through the bot image's runner client (no torch there), the Redis queue and the runner
container's worker; prints what came back."""

from __future__ import annotations

import asyncio
import sys

from bot.core.content.challenges import load_challenges
from runner.factory import make_runner
from runner.jobs import Device, JobRequest, JobResult
from runner.judge import Verdict, judge_job

CODE = "import torch\nprint(torch.arange(4).sum().item(), torch.__version__)"
PROBLEM = "stable-softmax"
TIMEOUT_S = 300


async def main() -> int:
    runner = make_runner("redis")
    arrived: dict[str, JobResult] = {}
    changed = asyncio.Condition()

    async def deliver(result: JobResult) -> None:
        async with changed:
            arrived[result.job_id] = result
            changed.notify_all()

    async def result_of(job_id: str) -> JobResult:
        async with changed:
            await asyncio.wait_for(changed.wait_for(lambda: job_id in arrived), TIMEOUT_S)
        return arrived[job_id]

    challenge = load_challenges().get(PROBLEM)
    assert challenge is not None, PROBLEM
    runner.on_result(deliver)
    await runner.start()
    try:
        run_job = await runner.submit(JobRequest(code=CODE, requester="stack-test:run", reply_to={}))
        run = await result_of(run_job.job_id)
        judged = await runner.submit(JobRequest(
            challenge.reference, "stack-test:submit", {}, Device.CPU, limits=challenge.job_limits,
            judge=judge_job(challenge.id, challenge.spec, challenge.reference)))
        submit = await result_of(judged.job_id)
    finally:
        await runner.close()
    print(f"/run job {run.state.value}: exit {run.exit_code}, {run.duration_s:.1f} s, "
          f"device {run.device_used}, torch {run.torch_version}")
    print(f"stdout: {run.stdout.strip()}")
    verdict = Verdict.from_dict(submit.verdict) if submit.verdict is not None else None
    print(f"/submit {PROBLEM} (the reference): {submit.state.value}, "
          + (f"{verdict.passed}/{verdict.total} passed, solved {verdict.solved}" if verdict
             else f"no verdict: {submit.error_message}"))
    ran = run.state.value == "done" and run.stdout.startswith("6 ")
    return 0 if ran and verdict is not None and verdict.solved else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
