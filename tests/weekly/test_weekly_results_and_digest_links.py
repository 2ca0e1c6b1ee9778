"""Survivors of the sampled mutation run of 2026-12-04 in bot/core/runs/desk.py and weekly.py:
a result of another kind of job (a judged /challenge) goes to its own desk, an explained error
without a library, and the weekly digest post's link to the hardest question and its button."""

from __future__ import annotations

from sqlalchemy import select

from bot.app import build_daily, weekly_posting
from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where
from bot.core.drill.service import Drill
from bot.core.runs.desk import RunDesk, result_message
from bot.core.weekly.service import WeeklyKind
from bot.storage.identity import channel_row
from bot.storage.models import Post
from runner.explain import explain
from runner.jobs import JobRequest, JobResult, JobState
from tests.support.run_fakes import Channel, Runner
from tests.support.weekly_digest import HERE, two_weeks
from tests.support.weekly_platform import BANK, Platform

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


class LinkingPlatform(Platform):
    """A platform that makes links to its messages (as Slack and Discord do)."""

    async def permalink(self, where: Where, ref: str) -> str:
        return f"https://chat.example/{where.channel_id}/{ref}"


async def test_the_digest_links_the_hardest_question_and_its_button_opens_progress(drill: Drill,
                                                                                   publisher: object) -> None:
    q = await two_weeks(drill, publisher)
    platform = LinkingPlatform()
    await build_daily(drill, platform).set_schedule(HERE, at="09:00", timezone="UTC")
    weekly = weekly_posting(drill.db, drill.clock, platform, bank=BANK, library=drill.library)
    await weekly.set_weekly(HERE, WeeklyKind.DIGEST, "mon", "09:00")
    drill.clock.advance(days=6, hours=20)  # Mon 16 Mar, after 09:00: the digest of the week of 9 Mar
    async with drill.db.write() as session:
        pk = (await channel_row(session, HERE)).id
        # the hardest question of that week is C (1 of 3 right); its post in the channel:
        ref = await session.scalar(select(Post.platform_ref).where(Post.question_id == q["c"]))
    claim_id = await weekly.fire(pk, WeeklyKind.DIGEST)
    assert claim_id is not None and ref
    [(_, message, _, _)] = [m for m in platform.messages if m[2]]
    hardest = [line for line in message.plain().splitlines() if line.startswith("🧠")]
    assert hardest == [f"🧠 **Hardest question:** “{drill.library[q['c']].prompt}” (1 of 3 right, 33%; posted Mon 09 Mar)"
                       f" · its thread: https://chat.example/c1/{ref}"]
    assert [(b.action_id, b.label) for b in message.buttons] == [
        (Action(Verb.PROGRESS, claim_id).encode(), "📈 My progress")]
