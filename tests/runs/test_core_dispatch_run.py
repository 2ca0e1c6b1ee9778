"""/run, /submit and /bank check through the CommandDesk, with a fake runner and a recording
channel: what is refused before anything is public, the public acknowledgement, and what is
edited or retracted after the runner answers (issue 21: survivors and "no tests" mutants of
bot/core/commands/dispatch.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
import yaml

from bot.app import build_daily, build_services
from bot.core.challenges.desk import KIND
from bot.core.commands.dispatch import Caller, CodeForm, CommandDesk, PublishedAck
from bot.core.content.challenges import Challenge
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import CodeBlock, Message, TextBlock, Upload
from bot.core.drill.service import Drill
from bot.core.runs.desk import RunDesk
from runner.jobs import JobRejected, JobRequest, JobResult, JobState, Submitted
from tests.support.dispatch import ADA, BANK, HERE, SORRY, NoRunner, admin, member, notice_of

CY = Who("discord", "g1", "u-cy")  # no display name: the acknowledgement names the id
NOT_AVAILABLE = "The code runner is not available on this deployment."


class QueueRunner:
    """A RunnerService that queues nothing: it records requests and answers like a queue."""

    def __init__(self, max_code_bytes: int = 100) -> None:
        self.settings = SimpleNamespace(max_code_bytes=max_code_bytes, timeout_s=20)
        self.requests: list[JobRequest] = []
        self.callbacks: list[object] = []
        self.position = 2
        self.reject: str | None = None
        self.broken = False

    def on_result(self, callback: object) -> None:
        self.callbacks.append(callback)

    async def submit(self, request: JobRequest) -> Submitted:
        if self.broken:
            raise RuntimeError("queue unreachable")
        if self.reject is not None:
            raise JobRejected(self.reject)
        self.requests.append(request)
        return Submitted("abcdef1234", self.position)


class Runner:
    """RunnerAccess with a desk (or none, and why)."""

    def __init__(self, desk: RunDesk | None) -> None:
        self._desk = desk

    def desk(self) -> RunDesk | None:
        return self._desk

    def unavailable(self) -> str:
        return NOT_AVAILABLE


class Chat:
    """A Publisher that records every call with its arguments."""

    def __init__(self) -> None:
        self.posts: list[tuple[Where, Message, str | None]] = []
        self.updates: list[tuple[Where, str, Message]] = []

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        self.posts.append((where, message, thread_of))
        return f"m{len(self.posts)}"

    async def update(self, where: Where, ref: str, message: Message) -> None:
        self.updates.append((where, ref, message))

    async def tell(self, who: Who, message: Message) -> bool:
        return True


class Channel:
    """An AckChannel: records the acknowledgement, its edit or its retraction."""

    def __init__(self, ref: str | None = "ack-1") -> None:
        self.ref = ref
        self.posted: list[Message] = []
        self.edits: list[tuple[str, Message, Message]] = []
        self.retracted: list[str] = []

    async def post(self, ack: Message) -> str | None:
        self.posted.append(ack)
        return self.ref

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        self.edits.append((ref, ack, status))

    async def retract(self, ref: str) -> None:
        self.retracted.append(ref)


@dataclass
class World:
    desk: CommandDesk
    queue: QueueRunner
    runs: RunDesk
    chat: Chat


@pytest.fixture
async def world(drill: Drill) -> AsyncIterator[World]:
    chat, queue = Chat(), QueueRunner()
    runs = RunDesk(queue, chat)  # type: ignore[arg-type]
    desk = CommandDesk(build_services(drill, build_daily(drill, chat), chat, Runner(runs)))  # type: ignore[arg-type]
    yield World(desk, queue, runs, chat)
    await desk.close()


async def open_challenge(desk: CommandDesk, who: Who = ADA) -> Challenge:
    await desk.execute_text(Caller(who, HERE), "challenge", "new tensors 1")
    challenge = await desk.services.challenges.current(who)
    assert challenge is not None
    return challenge


# ---- /run ------------------------------------------------------------------------------------

async def test_run_without_a_runner_says_why_and_posts_nothing(drill: Drill) -> None:
    chat = Chat()
    desk = CommandDesk(build_services(drill, build_daily(drill, chat), chat, Runner(None)))  # type: ignore[arg-type]
    channel = Channel()
    assert notice_of(await desk.run_code(member(), "print(1)", channel)) == NOT_AVAILABLE  # type: ignore[arg-type]
    assert notice_of(await desk.submit_challenge(member(), "print(1)", channel)) == NOT_AVAILABLE  # type: ignore[arg-type]
    starting = CommandDesk(build_services(drill, build_daily(drill, chat), chat, NoRunner()))  # type: ignore[arg-type]
    assert notice_of(await starting.run_code(member(), "print(1)", channel)) == (  # type: ignore[arg-type]
        "The code runner is starting; try again in a few seconds.")
    assert channel.posted == [] and chat.posts == []


async def test_run_refusals_before_anything_is_public(world: World) -> None:
    channel = Channel()
    assert notice_of(await world.desk.run_code(member(where=None), "print(1)", channel)) == (  # type: ignore[arg-type]
        "/drill-run works in a channel, not in a direct message.")
    assert notice_of(await world.desk.run_code(member(), "```python\n\n```", channel)) == (  # type: ignore[arg-type]
        "There is no code to run. Paste a snippet or a ```python block.")
    big = "x = 1\n" * 25  # 150 bytes, over the runner's 100
    assert notice_of(await world.desk.run_code(member(), big, channel)) == (  # type: ignore[arg-type]
        "code too large: 149 bytes (the limit is 100 bytes); trim it or split it into smaller snippets")
    assert channel.posted == [] and world.queue.requests == []


async def test_run_acknowledges_publicly_then_edits_in_the_queue_status(world: World) -> None:
    channel = Channel("ack-7")
    said = await world.desk.run_code(member(), "look:\n```python\nprint(1)\n```\n", channel)  # type: ignore[arg-type]
    assert said is None
    [ack] = channel.posted
    status = "⏳ Job `abcdef1234` queued (position 2 in the queue). The result will appear in this thread."
    assert (ack.title, ack.blocks, ack.ephemeral) == (
        "/drill-run by Ada", [CodeBlock("print(1)"), TextBlock(status)], False)
    [(ref, edited, shown)] = channel.edits
    assert (ref, edited) == ("ack-7", ack) and shown.plain() == status
    [request] = world.queue.requests
    assert (request.code, request.requester, request.reply_to) == (
        "print(1)", "discord:g1:u-ada",
        {"platform": "discord", "workspace": "g1", "channel_id": "c-1", "user_id": "u-ada", "thread_of": "ack-7"})
    assert channel.retracted == []
    world.queue.position = 0
    await world.desk.run_code(Caller(CY, HERE), "print(2)", channel)  # type: ignore[arg-type]
    assert channel.posted[-1].plain() == (
        "**/run by u-cy**\n```python\nprint(2)\n```\n"
        "⏳ Job `abcdef1234` queued (running now). The result will appear in this thread.")


async def test_run_where_the_bot_cannot_post_says_how_to_invite_it(world: World) -> None:
    channel = Channel(None)
    said = await world.desk.run_code(member(), "print(1)", channel)  # type: ignore[arg-type]
    assert notice_of(said) == "I cannot post in that channel. Add me with the Apps button first."  # type: ignore[arg-type]
    assert world.queue.requests == [] and channel.edits == []


async def test_a_run_the_queue_refuses_is_retracted(world: World) -> None:
    channel = Channel("ack-2")
    world.queue.reject = "you already have a running job (j1); wait for its result in its thread, then run again"
    said = await world.desk.run_code(member(), "print(1)", channel)  # type: ignore[arg-type]
    assert notice_of(said) == world.queue.reject  # type: ignore[arg-type]
    assert (len(channel.posted), channel.retracted, channel.edits) == (1, ["ack-2"], [])


async def test_a_run_that_fails_to_submit_is_sorry_and_retracted(world: World, caplog) -> None:
    channel = Channel("ack-3")
    world.queue.broken = True
    with caplog.at_level(logging.ERROR, logger="bot.core.commands.dispatch"):
        said = await world.desk.run_code(member(), "print(1)", channel)  # type: ignore[arg-type]
    assert notice_of(said) == SORRY  # type: ignore[arg-type]
    assert (channel.retracted, channel.edits) == (["ack-3"], [])
    assert [r.getMessage() for r in caplog.records] == ["/run submission failed"]


# ---- code boxes ----------------------------------------------------------------------------------

async def test_code_forms_for_run_and_submit(world: World) -> None:
    assert await world.desk.code_form(member(), "run") == CodeForm("Run a PyTorch snippet", "Run", "", None)
    none_open = await world.desk.code_form(member(), "submit")
    assert notice_of(none_open) == "You have no open challenge. Start one with /drill-challenge."  # type: ignore[arg-type]
    challenge = await open_challenge(world.desk)
    assert await world.desk.code_form(member(), "submit") == CodeForm(
        "Submit your solution", "Submit", challenge.stub, 3000)


async def test_submit_code_judges_a_submit_and_runs_anything_else(world: World) -> None:
    channel, dm = Channel(), member(where=None)
    assert notice_of(await world.desk.submit_code(dm, "submit", "x", channel)) == (  # type: ignore[arg-type]
        "/drill-submit works in a channel, not in a direct message.")
    assert notice_of(await world.desk.submit_code(dm, "run", "x", channel)) == (  # type: ignore[arg-type]
        "/drill-run works in a channel, not in a direct message.")
    assert await world.desk.submit_code(member(), "run", "print(1)", channel) is None  # type: ignore[arg-type]
    assert [r.code for r in world.queue.requests] == ["print(1)"]


async def test_submit_code_hands_the_code_and_the_channel_to_the_judge(world: World, monkeypatch) -> None:
    challenge = await open_challenge(world.desk)
    judge = Judge(Message().text("⏳ queued"))
    monkeypatch.setattr(world.desk.services.challenges, "submit", judge)
    channel = Channel("ack-9")
    assert await world.desk.submit_code(member(), "submit", "def f(): return 2", channel) is None  # type: ignore[arg-type]
    assert [call[3:5] for call in judge.calls] == [("def f(): return 2", "ack-9")]
    assert [a.title for a in channel.posted] == [f"🧩 Ada submitted a solution to {challenge.title}"]


# ---- /submit: judged challenges ------------------------------------------------------------------

async def test_submit_refusals_before_anything_is_public(world: World) -> None:
    channel = Channel()
    assert notice_of(await world.desk.submit_challenge(member(), "def f(): pass", channel)) == (  # type: ignore[arg-type]
        "You have no open challenge. Start one with /drill-challenge.")
    await open_challenge(world.desk)
    assert notice_of(await world.desk.submit_challenge(member(), "```python\n\n```", channel)) == (  # type: ignore[arg-type]
        "There is no code to judge. Paste your solution (the stub filled in).")
    assert notice_of(await world.desk.submit_challenge(member(), "#" * 3001, channel)) == (  # type: ignore[arg-type]
        "Your solution is 3,001 characters; submissions take at most 3,000. "
        "Trim comments or helper code and submit again.")
    assert channel.posted == [] and world.queue.requests == []


async def test_submit_attaches_the_challenge_desk_to_the_runs_once(world: World) -> None:
    assert KIND not in world.runs.handlers
    await world.desk.submit_challenge(member(), "", Channel())  # type: ignore[arg-type]
    handler = world.runs.handlers[KIND]
    result = JobResult("j9", JobRequest("x", "r", {"platform": "discord", "workspace": "g1", "channel_id": "c-1",
                                                   "user_id": "u-ada", "kind": KIND, "challenge": "gone",
                                                   "thread_of": "ack-4"}), JobState.DONE)
    await handler(result)
    [(where, message, thread)] = world.chat.posts
    assert (where, message.plain(), thread) == (
        Where("discord", "g1", "c-1"), "That challenge is no longer in the bank.", "ack-4")
    world.desk.attach_runs(world.runs)
    assert world.runs.handlers[KIND] is handler  # kept, not replaced


class Judge:
    """Stands in for ChallengeDesk.submit: records what it was given, answers ``status``."""

    def __init__(self, status: Message | Exception) -> None:
        self.status = status
        self.calls: list[tuple[object, ...]] = []

    async def __call__(self, runner: object, who: Who, where: Where, code: str, *,
                       thread_of: str | None = None, open_how: str = "/challenge",
                       cancel_with: str = "/run cancel") -> Message:
        self.calls.append((runner, who, where, code, thread_of, open_how))
        if isinstance(self.status, Exception):
            raise self.status
        return self.status


async def test_submit_acknowledges_without_the_code_and_edits_in_the_status(world: World, monkeypatch) -> None:
    challenge = await open_challenge(world.desk)
    judge = Judge(Message().text("⏳ Judging your solution (judging now); the verdict will appear here."))
    monkeypatch.setattr(world.desk.services.challenges, "submit", judge)
    channel = Channel("ack-5")
    code = "```python\ndef f():\n    return 1\n```"
    assert await world.desk.submit_challenge(member(), code, channel) is None  # type: ignore[arg-type]
    [ack] = channel.posted
    assert ack.plain() == (f"**🧩 Ada submitted a solution to {challenge.title}**\n"
                           "⏳ Judging your solution (judging now); the verdict will appear here.")
    assert judge.calls == [(world.queue, ADA, HERE, code, "ack-5", "/drill-challenge")]
    assert [(ref, a) for ref, a, _ in channel.edits] == [("ack-5", ack)]
    assert channel.edits[0][2] is judge.status and channel.retracted == []
    theirs = await open_challenge(world.desk, CY)
    await world.desk.submit_challenge(Caller(CY, HERE), "def f(): pass", channel)  # type: ignore[arg-type]
    assert channel.posted[-1].title == f"🧩 u-cy submitted a solution to {theirs.title}"


async def test_a_refused_or_failed_submission_is_retracted(world: World, monkeypatch, caplog) -> None:
    await open_challenge(world.desk)
    refused = Judge(Message(ephemeral=True).text("This challenge asks you to write it yourself."))
    monkeypatch.setattr(world.desk.services.challenges, "submit", refused)
    channel = Channel("ack-6")
    said = await world.desk.submit_challenge(member(), "def f(): pass", channel)  # type: ignore[arg-type]
    assert said is refused.status
    assert (channel.retracted, channel.edits) == (["ack-6"], [])
    monkeypatch.setattr(world.desk.services.challenges, "submit", Judge(RuntimeError("judge crashed")))
    with caplog.at_level(logging.ERROR, logger="bot.core.commands.dispatch"):
        failed = await world.desk.submit_challenge(member(), "def f(): pass", channel)  # type: ignore[arg-type]
    assert notice_of(failed) == SORRY  # type: ignore[arg-type]
    assert (channel.retracted, channel.edits) == (["ack-6", "ack-6"], [])
    assert [r.getMessage() for r in caplog.records] == ["/challenge submission failed"]
    nowhere = Channel(None)
    assert notice_of(await world.desk.submit_challenge(member(), "def f(): pass", nowhere)) == (  # type: ignore[arg-type]
        "I cannot post in that channel. Add me with the Apps button first.")


async def test_a_real_submission_queues_the_judging_job(world: World) -> None:
    challenge = await open_challenge(world.desk)
    channel = Channel("ack-8")
    assert await world.desk.submit_challenge(member(), challenge.stub, channel) is None  # type: ignore[arg-type]
    [request] = world.queue.requests
    assert request.reply_to == {"platform": "discord", "workspace": "g1", "channel_id": "c-1", "user_id": "u-ada",
                                "display_name": "Ada", "kind": KIND, "challenge": challenge.id,
                                "thread_of": "ack-8"}
    assert request.judge is not None  # the worker judges it: the problem and its reference travel
    assert (request.judge["problem"], request.judge["reference"]) == (challenge.id, challenge.reference)
    assert request.code == challenge.stub.strip()  # the member's code (trimmed) is the job's code
    assert channel.edits[0][2].plain() == (
        f"⏳ Judging your solution to **{challenge.title}** (position 2 in the queue); the verdict will appear here.")
    assert BANK.get(challenge.id) == challenge


# ---- /bank check: a run a command starts, acknowledged as a plain channel message ----------------

SNIPPET_BANK = yaml.safe_dump({"bank": "ours", "title": "Ours", "questions": [{
    "id": "ours-sum", "kind": "mcq", "topic": "tensors", "difficulty": 1,
    "prompt": "What does the snippet print?", "choices": [{"text": "6"}, {"text": "5", "why_not": "1+2+3."}],
    "answer": "6", "explanation": "It sums 1, 2 and 3.",
    "code": [{"setup": "values = [1, 2, 3]", "code": "print(sum(values))"}]}]}).encode()


async def test_bank_check_runs_the_snippet_with_a_published_acknowledgement(world: World) -> None:
    stored = await world.desk.execute_values(admin(), ("bank", "upload"), {"file": Upload("ours.yaml", SNIPPET_BANK)})
    assert stored.title == "Bank ours stored: 1 question"
    assert notice_of(await world.desk.execute_text(admin(), "bank", "check nope")) == (
        "No question 'nope' in this community's banks; /bank show ID lists their ids.")
    started = await world.desk.execute_text(admin(), "bank", "check ours-sum")
    assert notice_of(started) == "Running the snippet of ours-sum; the output lands in the thread."
    [(where, ack, thread)] = world.chat.posts
    assert (where, thread, ack.title) == (HERE, None, "/drill-run by Ada")
    [request] = world.queue.requests
    assert request.reply_to["thread_of"] == "m1"
    assert "values = [1, 2, 3]" in request.code and "print(sum(values))" in request.code
    [(where, ref, edited)] = world.chat.updates
    assert (where, ref, edited) == (HERE, "m1", ack)
    assert edited.plain().endswith(
        "⏳ Job `abcdef1234` queued (position 2 in the queue). The result will appear in this thread.")
    world.queue.reject = "the queue is full; try again in a minute"
    refused = await world.desk.execute_text(admin(), "bank", "check ours-sum")
    assert notice_of(refused) == "the queue is full; try again in a minute"
    assert world.chat.updates[-1][:2] == (HERE, "m2")
    assert notice_of(world.chat.updates[-1][2]) == "(This run was not started.)"


async def test_bank_check_without_a_runner_says_why(drill: Drill) -> None:
    chat = Chat()
    desk = CommandDesk(build_services(drill, build_daily(drill, chat), chat, Runner(None)))  # type: ignore[arg-type]
    await desk.execute_values(admin(), ("bank", "upload"), {"file": Upload("ours.yaml", SNIPPET_BANK)})
    assert notice_of(await desk.execute_text(admin(), "bank", "check ours-sum")) == NOT_AVAILABLE
    assert chat.posts == []


async def test_a_published_acknowledgement_posts_edits_and_withdraws() -> None:
    chat = Chat()
    ack = PublishedAck(chat, HERE)  # type: ignore[arg-type]
    shown = Message(title="/run by Ada")
    assert await ack.post(shown) == "m1"
    await ack.edit("m1", shown, Message().text("queued"))
    await ack.retract("m1")
    assert chat.posts == [(HERE, shown, None)]
    assert [(w, r, m.plain(), m.ephemeral) for w, r, m in chat.updates] == [
        (HERE, "m1", "**/run by Ada**", False), (HERE, "m1", "(This run was not started.)", True)]


