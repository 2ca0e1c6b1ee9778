"""Survivors of the sampled mutation run of 2026-12-04 in bot/core/play/runs.py: a result of
another kind of job (a judged /challenge) goes to its own desk, not to the channel as a plain
/run result."""

from __future__ import annotations

from bot.core.play.runs import RunDesk, result_message
from runner.explain import explain
from runner.jobs import JobRequest, JobResult, JobState
from tests.test_mutants_runs import Channel, Runner

REPLY = {"platform": "discord", "workspace": "g1", "channel_id": "c1", "user_id": "u1"}


async def test_a_result_of_a_registered_kind_goes_to_its_desk_only() -> None:
    runner, channel = Runner(), Channel()
    desk = RunDesk(runner, channel)  # type: ignore[arg-type]
    judged: list[str] = []

    async def judge(result: JobResult) -> None:
        judged.append(result.job_id)

    desk.handlers["challenge"] = judge
    request = JobRequest("print(1)", "discord:g1:u1", {**REPLY, "kind": "challenge"})
    await desk.deliver(JobResult("job-challenge", request, JobState.DONE, stdout="1\n", duration_s=0.5))
    assert (judged, channel.posts) == (["job-challenge"], [])
    plain = JobRequest("print(2)", "discord:g1:u1", REPLY)  # no kind: a plain /run result
    await desk.deliver(JobResult("job-plain", plain, JobState.DONE, stdout="2\n", duration_s=0.5))
    assert judged == ["job-challenge"]
    assert [message.title for _, message, _ in channel.posts] == ["✅ Finished"]


def test_an_explained_error_without_a_library_has_no_practice_list() -> None:
    stderr = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n"
    explanation = explain(stderr)
    assert explanation is not None and explanation.related  # the explanation names questions
    msg = result_message(JobResult("j5", JobRequest("x", "discord:g1:u1", REPLY), JobState.FAILED,
                                   stderr=stderr, explanation=explanation), None)
    lines = msg.plain().splitlines()
    assert lines[0] == "**❌ Failed**"
    assert f"**Fix:** {explanation.fix}" in lines
    assert not any(line.startswith("**Practise this**") for line in lines)
