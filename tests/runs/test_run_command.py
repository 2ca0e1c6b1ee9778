"""/run as the member meets it, in the core (issue 21 survivors of the whole-tree run): the
acknowledgement, what the runner is asked, the refusals, and where the result is posted.

The runner here is a stand-in that records requests (the real one, sandbox and all, is
tested in tests/runner/test_runner_embedded.py and the platforms' /run tests)."""

from __future__ import annotations

import pytest

from bot.core.domain.identity import Where, Who
from bot.core.runs.desk import RunDesk
from runner.jobs import Device, JobRequest, JobResult, JobState
from tests.support.run_fakes import Channel, Runner

HERE = Where("discord", "g1", "c1", "general")
ADA = Who("discord", "g1", "u1", "Ada")


async def test_a_fenced_snippet_is_queued_with_where_to_answer() -> None:
    runner, channel = Runner(), Channel()
    desk = RunDesk(runner, channel)  # type: ignore[arg-type]
    ack = await desk.submit(ADA, HERE, "look:\n```python\nprint(1)\n```", thread_of="m9", device="GPU")
    assert ack.plain() == "⏳ Job `abcdef1234567890` queued (position 2 in the queue). The result will appear in this thread."
    assert runner.requests == [JobRequest(
        code="print(1)", requester="discord:g1:u1", device=Device.GPU,
        reply_to={"platform": "discord", "workspace": "g1", "channel_id": "c1", "user_id": "u1", "thread_of": "m9"})]
    runner.position = 0
    now = await desk.submit(ADA, HERE, "\nprint(2)\n")
    assert now.plain() == "⏳ Job `abcdef1234567890` queued (running now). The result will appear in this thread."
    assert runner.requests[-1].code == "print(2)" and runner.requests[-1].device is Device.AUTO
    assert "thread_of" not in runner.requests[-1].reply_to
    assert runner.deliver == desk.deliver  # results come back to this desk


@pytest.mark.parametrize(("code", "device", "refuse", "said"), [
    ("   \n", "auto", None, "There is no code to run. Paste a snippet or a ```python block."),
    ("x" * 41, "auto", None,
     "code too large: 41 bytes (the limit is 40 bytes); trim it or split it into smaller snippets"),
    ("print(1)", "tpu", None, "unknown device 'tpu'; use auto, gpu or cpu"),
    ("print(1)", "cpu", "you already have 2 jobs waiting", "you already have 2 jobs waiting"),
])
async def test_refusals_are_private_and_say_why(code: str, device: str, refuse: str | None, said: str) -> None:
    runner = Runner(refuse=refuse)
    reply = await RunDesk(runner, Channel()).submit(ADA, HERE, code, device=device)  # type: ignore[arg-type]
    assert (reply.plain(), reply.ephemeral) == (said, True)
    assert runner.requests == []


async def test_a_result_is_posted_in_the_thread_and_names_the_member() -> None:
    runner, channel = Runner(), Channel()
    desk = RunDesk(runner, channel)  # type: ignore[arg-type]
    await desk.submit(ADA, HERE, "print(1)", thread_of="m9")
    await desk.deliver(JobResult("abcdef1234567890", runner.requests[0], JobState.DONE, stdout="1\n",
                                 duration_s=0.5))
    [(where, message, thread)] = channel.posts
    assert (where, thread, message.mention, message.title) == (
        Where("discord", "g1", "c1"), "m9", "u1", "✅ Finished")
    assert "stdout:" in message.plain() and "1" in message.plain()
