"""/challenge in the core as members read it (issue 21: mutation survivors of
bot/core/challenges/desk.py and bot/core/content/challenges.py): the problem and verdict
texts, filters, hints, refusals, the judging job the runner is asked for, the verdict posted in
the thread, points once, the board and a member's tally; the bank's own checks.

Submissions go to the recording stand-in runner of tests/runs/test_run_command.py; the verdicts the
worker would send are computed in this process from our own reference and known-wrong solutions
with runner.judge_host.judge_locally (no sandbox: tests/challenges/test_challenge_flow.py,
tests/challenges/test_judge_sandbox.py and tests/challenges/test_judge_redis.py run the real thing)."""

from __future__ import annotations

import ast
import logging
import random
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pydantic import ValidationError
from sqlalchemy import select

from bot.app import challenge_desk
from bot.core.challenges import desk as desk_module
from bot.core.challenges.desk import ChallengeDesk, challenge_message, verdict_message
from bot.core.content.bank import Problem
from bot.core.content.challenges import (
    CHALLENGE_DIR,
    Challenge,
    ChallengeBank,
    check_challenges,
    load_challenge,
    load_challenges,
)
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import CodeBlock, TextBlock
from bot.core.domain.topics import TOPICS
from bot.storage.db import Database
from bot.storage.models import ChallengeProgress, Workspace
from runner.jobs import Device, JobRequest, JobResult, JobState
from runner.judge import JudgeSpec, Verdict, judge_job
from runner.judge_host import judge_locally
from tests.support.challenge_bank import BANK
from tests.support.reveal import C1, who
from tests.support.run_fakes import Channel, Runner

ONE_HOT = BANK.get("one-hot")  # tensors, ★, 2 hints, 5 tests, no limits of its own
SOFTMAX = BANK.get("stable-softmax")  # tensors, ★, time_limit_s 10, memory_mb 1024
ATTENTION = BANK.get("causal-attention")  # nn-modules, ★★★, 3 hints, forbids sdpa
LAST_TOKEN = BANK.get("last-token")  # tensors, ★★
PAIRWISE = BANK.get("pairwise-distances")  # tensors, ★★
HUBER = BANK.get("huber-loss")  # losses, ★
ZERO_GRAD = BANK.get("fix-zero-grad")  # debugging, ★, 1 hint
HOW = "`/submit` to submit your solution; `/challenge hint` for a hint"
NONE_OPEN = "You have no open challenge. Start one with /challenge."


class JudgeRunner(Runner):
    """The recording runner, with the wall limit a judging job is sized against."""

    def __init__(self, position: int = 0, refuse: str | None = None, timeout_s: float | None = 20.0) -> None:
        super().__init__(position, refuse)
        self.settings = SimpleNamespace(timeout_s=timeout_s)  # type: ignore[assignment]
        if timeout_s is None:
            del self.settings  # a runner that tells no limits


def judged(challenge: Challenge, code: str, *, output: str = "", elapsed: float = 0.25,
           peak: float | None = None) -> dict:
    """The verdict the worker sends for our own (trusted) code, computed here."""
    verdict = judge_locally(challenge.spec, challenge.reference, code, 1).to_dict()
    return {**verdict, "output": output, "elapsed_s": elapsed, "peak_memory_mb": peak}


@pytest.fixture
def desk(drill) -> ChallengeDesk:
    return challenge_desk(drill.db, drill.clock, BANK, rng=random.Random(5))


async def rows(db: Database) -> list[tuple]:
    async with db.read() as session:
        found = await session.scalars(select(ChallengeProgress).order_by(ChallengeProgress.member_id, ChallengeProgress.challenge_id))
        return [(r.challenge_id, r.topic, r.hints_shown, r.attempts, r.points, r.solved_at is not None)
                for r in found]


# ---- the problem and the verdict, word for word ------------------------------------------------

def test_the_problem_as_members_read_it() -> None:
    msg = challenge_message(ONE_HOT, HOW)
    assert (msg.title, msg.ephemeral) == ("🧩 One-hot encoding · ★☆☆ · Tensors", True)
    assert msg.blocks == [TextBlock(ONE_HOT.statement.strip()), CodeBlock(ONE_HOT.stub.rstrip(), "python")]
    assert msg.footer == ("10 points for a first solve · 2 hints · "
                          "`/submit` to submit your solution; `/challenge hint` for a hint")
    hard = challenge_message(ATTENTION, "submit")
    assert hard.title == "🧩 Multi-head causal self-attention · ★★★ · nn.Module and layers"
    assert hard.footer == "30 points for a first solve · 3 hints · submit"


def test_a_first_solve_a_resolve_and_what_the_code_printed() -> None:
    solved = Verdict(5, 5, None, output="  hello\n", elapsed_s=0.123, peak_memory_mb=35.6)
    first = verdict_message(ONE_HOT, solved, 10)
    assert (first.title, first.ephemeral) == ("✅ Solved: One-hot encoding", False)
    assert [getattr(b, "text", None) for b in first.blocks[:-1]] == [
        "Passed 5/5 tests.", "0.12 s · peak RAM 36 MB · device: cpu", "🏅 +10 points (first solve)",
        f"**Why it works:** {ONE_HOT.explanation.strip()}", "Your code printed:"]
    assert first.blocks[-1] == CodeBlock("  hello", "text")
    again = verdict_message(ONE_HOT, Verdict(5, 5, None, elapsed_s=1.0), 0).plain()
    assert again == ("**✅ Solved: One-hot encoding**\nPassed 5/5 tests.\n1.00 s · device: cpu\n"
                     "Solved before: resubmissions earn no extra points.\n"
                     f"**Why it works:** {ONE_HOT.explanation.strip()}")
    unscored = verdict_message(ONE_HOT, Verdict(5, 5, None, output="\n \n"), None).plain()
    assert unscored == ("**✅ Solved: One-hot encoding**\nPassed 5/5 tests.\ndevice: cpu\n"
                        f"**Why it works:** {ONE_HOT.explanation.strip()}")
    long = verdict_message(ONE_HOT, Verdict(5, 5, None, output="x" * 900), 10)
    assert long.blocks[-1] == CodeBlock("x" * 786 + "\n… (truncated)", "text")
    exact = verdict_message(ONE_HOT, Verdict(5, 5, None, output="y" * 800), 10)
    assert exact.blocks[-1] == CodeBlock("y" * 800, "text")


def test_a_failure_names_the_test_and_explains_a_well_known_error() -> None:
    from runner.explain import explain

    failure = "test 'basic' (inputs 5×3, 4×3): your code raised an error"
    error = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (5x3 and 4x3)"
    known = explain(error)
    assert known is not None
    msg = verdict_message(PAIRWISE, Verdict(1, 6, failure, error, elapsed_s=0.02, peak_memory_mb=12.0,
                                            device="cuda:0 (NVIDIA H200)"), None)
    assert msg.plain() == (
        "**❌ 1/6 tests passed: Pairwise distances without loops**\n"
        f"First failure: {failure}\n```text\n{error}\n```\n"
        "0.02 s · peak RAM 12 MB · device: cuda:0 (NVIDIA H200)\n"
        f"💡 **Matrix shapes cannot be multiplied** — {known.explanation}")
    quiet = verdict_message(ONE_HOT, Verdict(0, 5, "no verdict: killed: wall-time limit 20 s"), 0).plain()
    assert quiet == ("**❌ 0/5 tests passed: One-hot encoding**\n"
                     "First failure: no verdict: killed: wall-time limit 20 s\ndevice: cpu")
    nothing = verdict_message(ONE_HOT, Verdict(0, 0, None, output="oops"), None).plain()
    assert nothing == "**❌ Not judged: One-hot encoding**\ndevice: cpu\nYour code printed:\n```text\noops\n```"


@pytest.mark.parametrize(("failure", "detail", "asked"), [
    ("test 'basic' (inputs 5×3): your code raised an error", "RuntimeError: boom", ["RuntimeError: boom"]),
    ("your code did not load", "SyntaxError: bad", ["SyntaxError: bad"]),
    ("test 'x': output: wrong value (off by up to 10× the allowed error)", None, []),
])
def test_the_error_looked_up_is_the_members_own(monkeypatch: pytest.MonkeyPatch, failure: str,
                                                detail: str | None, asked: list[str]) -> None:
    import runner.explain

    seen: list[str] = []

    def explain(error: str) -> SimpleNamespace:
        seen.append(error)
        return SimpleNamespace(title="Known", explanation="Why.")

    monkeypatch.setattr(runner.explain, "explain", explain)
    msg = verdict_message(ONE_HOT, Verdict(0, 5, failure, detail), None)
    assert seen == asked
    assert (msg.plain().splitlines()[-1] == "💡 **Known** — Why.") is bool(asked)


def test_a_catalogue_that_fails_or_is_missing_never_loses_the_verdict(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import runner.explain

    def broken(error: str) -> None:
        raise KeyError(error)

    expected = ("**❌ 2/5 tests passed: One-hot encoding**\nFirst failure: test 'x': your code raised an error\n"
                "```text\nValueError: v\n```\ndevice: cpu")
    failed = Verdict(2, 5, "test 'x': your code raised an error", "ValueError: v")
    monkeypatch.setattr(runner.explain, "explain", broken)
    with caplog.at_level(logging.ERROR, logger=desk_module.log.name):
        assert verdict_message(ONE_HOT, failed, None).plain() == expected
    assert [r.getMessage() for r in caplog.records] == ["explain() failed on a challenge verdict"]
    monkeypatch.setattr(runner.explain, "explain", lambda error: None)
    assert verdict_message(ONE_HOT, failed, None).plain() == expected
    monkeypatch.setitem(sys.modules, "runner.explain", None)  # the runner's extras not installed
    assert verdict_message(ONE_HOT, failed, None).plain() == expected


# ---- opening, the current problem, hints ------------------------------------------------------

async def test_the_bank_is_loaded_once_on_first_use(db: Database, clock: FakeClock) -> None:
    desk = challenge_desk(db, clock)
    bank = desk.bank
    assert desk.bank is bank
    assert [c.id for c in bank.challenges] == [c.id for c in BANK.challenges]


async def test_filters_pick_unsolved_problems_of_this_member_with_the_desks_rng(drill) -> None:
    desk = challenge_desk(drill.db, drill.clock, BANK, rng=random.Random(5))
    mirror = random.Random(5)  # the same draws as the desk's
    tensors2 = [LAST_TOKEN, PAIRWISE]
    assert [c for c in BANK.challenges if c.topic == "tensors" and c.difficulty == 2] == tensors2
    await desk.open(who(2), "tensors", 2, HOW)  # another member opens ...
    await desk.record(who(2), PAIRWISE, solved=True)  # ... and solves: not this member's solve
    await desk.open_id(who(1), PAIRWISE.id, HOW)  # opened, not solved: still fresh
    mirror.choice(tensors2)
    expected = mirror.choice(tensors2)
    assert expected is PAIRWISE  # (the draw that tells a filtered pool from the whole one)
    opened = await desk.open(who(1), "tensors", 2, HOW)
    assert (opened.title, opened.plain()) == (challenge_message(PAIRWISE, HOW).title,
                                              challenge_message(PAIRWISE, HOW).plain())
    assert await desk.current(who(1)) is PAIRWISE
    await desk.record(who(1), PAIRWISE, solved=True)
    assert await desk.open(who(1), "tensors", 2, HOW) == challenge_message(LAST_TOKEN, HOW)  # unsolved
    mirror.choice([LAST_TOKEN])
    await desk.record(who(1), LAST_TOKEN, solved=True)
    expected = mirror.choice(tensors2)  # all solved: the whole pool again
    assert await desk.open(who(1), "tensors", 2, HOW) == challenge_message(expected, HOW)
    hard = [c for c in BANK.challenges if c.difficulty == 3]
    assert await desk.open(who(3), None, 3, HOW) == challenge_message(mirror.choice(hard), HOW)
    losses = [c for c in BANK.challenges if c.topic == "losses"]
    assert await desk.open(who(3), "losses", None, HOW) == challenge_message(mirror.choice(losses), HOW)
    everything = BANK.challenges
    assert await desk.open(who(4), None, None, HOW) == challenge_message(mirror.choice(everything), HOW)


async def test_filters_that_match_nothing_say_which(drill) -> None:
    desk = challenge_desk(drill.db, drill.clock, BANK)
    topic = await desk.open(who(1), "no-such-topic", None, HOW)
    assert (topic.plain(), topic.ephemeral) == ("No challenge matches topic no-such-topic.", True)
    empty = challenge_desk(drill.db, drill.clock, ChallengeBank([], []))
    assert (await empty.open(who(1), None, None, HOW)).plain() == "No challenge matches this filter."
    unknown = await desk.open_id(who(1), "nope", HOW)
    assert (unknown.plain(), unknown.ephemeral) == ("No challenge matches id nope.", True)
    assert await desk.current(who(1)) is None
    assert await rows(drill.db) == []


async def test_the_last_opened_is_current_and_reopening_keeps_its_hints(drill, desk) -> None:
    assert await desk.open_id(who(1), ONE_HOT.id, HOW) == challenge_message(ONE_HOT, HOW)
    first = await desk.hint(who(1), "/challenge")
    assert (first.title, first.ephemeral, first.footer) == ("💡 Hint 1/2: One-hot encoding", True, None)
    assert [b.text for b in first.blocks] == [f"1. {ONE_HOT.hints[0]}"]
    drill.clock.advance(60)
    await desk.open_id(who(1), SOFTMAX.id, HOW)
    assert await desk.current(who(1)) is SOFTMAX
    assert (await desk.hint(who(1), "/challenge")).title == "💡 Hint 1/2: Numerically stable softmax"
    drill.clock.advance(60)
    await desk.open_id(who(1), ONE_HOT.id, HOW)  # back to the first: its hint count stays
    assert await desk.current(who(1)) is ONE_HOT
    second = await desk.hint(who(1), "/challenge")
    assert (second.title, second.footer) == ("💡 Hint 2/2: One-hot encoding", "That was the last hint.")
    assert [b.text for b in second.blocks] == [f"1. {ONE_HOT.hints[0]}", f"2. {ONE_HOT.hints[1]}"]
    assert await rows(drill.db) == [("one-hot", "tensors", 2, 0, 0, False),
                                    ("stable-softmax", "tensors", 1, 0, 0, False)]
    assert await desk.current(who(2)) is None
    await desk.open_id(who(2), ZERO_GRAD.id, HOW)
    only = await desk.hint(who(2), "/challenge")
    assert (only.title, only.footer) == ("💡 Hint 1/1: Fix the bug: gradients pile up", "That was the last hint.")


async def test_a_current_problem_gone_from_the_bank_is_no_open_problem(drill, desk) -> None:
    await desk.open_id(who(1), ONE_HOT.id, HOW)
    smaller = challenge_desk(drill.db, drill.clock, ChallengeBank([SOFTMAX], []))
    assert await smaller.current(who(1)) is None
    gone = await smaller.hint(who(1), "`/play challenge`")
    assert (gone.plain(), gone.ephemeral) == ("You have no open challenge. Start one with `/play challenge`.", True)


# ---- submitting ------------------------------------------------------------------------------

async def test_refusals_say_why_and_queue_nothing(drill, desk) -> None:
    runner = JudgeRunner()
    empty = await desk.submit(runner, who(1), C1, "  \n\t\n")  # type: ignore[arg-type]
    assert (empty.plain(), empty.ephemeral) == (
        "There is no code to judge. Paste your solution (the stub filled in).", True)
    too_long = await desk.submit(runner, who(1), C1, "x" * 3001)  # type: ignore[arg-type]
    assert (too_long.plain(), too_long.ephemeral) == (
        "Your solution is 3,001 characters; submissions take at most 3,000. "
        "Trim comments or helper code and submit again.", True)
    assert desk.precheck("x" * 3000) is None
    assert (await desk.submit(runner, who(1), C1, "x" * 3000)).plain() == NONE_OPEN  # type: ignore[arg-type]
    fenced = "Here it is:\n```python\n" + "x = 1\n" + "```\n" + "#" * 3000
    custom = await desk.submit(runner, who(1), C1, fenced, open_how="/play challenge")  # type: ignore[arg-type]
    assert (custom.plain(), custom.ephemeral) == ("You have no open challenge. Start one with /play challenge.", True)
    await desk.open_id(who(1), ATTENTION.id, HOW)
    code = ("import torch.nn.functional as F\n"
            "def causal_mha(x, w_qkv, w_out, n_heads):\n"
            "    return F.scaled_dot_product_attention(x, x, x, is_causal=True)\n")
    forbidden = await desk.submit(runner, who(1), C1, code)  # type: ignore[arg-type]
    assert (forbidden.plain(), forbidden.ephemeral) == (
        "This challenge asks you to write it yourself: "
        "torch.nn.functional.scaled_dot_product_attention is not allowed here.", True)
    both = code + "layer = torch.nn.MultiheadAttention(8, 2)\n"
    assert (await desk.submit(runner, who(1), C1, both)).plain() == (  # type: ignore[arg-type]
        "This challenge asks you to write it yourself: torch.nn.MultiheadAttention, "
        "torch.nn.functional.scaled_dot_product_attention is not allowed here.")
    assert runner.requests == []
    busy = JudgeRunner(refuse="you already have 2 jobs waiting")
    await desk.open_id(who(1), ONE_HOT.id, HOW)
    refused = await desk.submit(busy, who(1), C1, ONE_HOT.reference)  # type: ignore[arg-type]
    assert (refused.plain(), refused.ephemeral) == ("you already have 2 jobs waiting", True)


async def test_a_submission_is_queued_as_a_judging_job_with_where_to_answer(drill, desk) -> None:
    runner = JudgeRunner(position=0)
    await desk.open_id(who(1), ONE_HOT.id, HOW)
    fenced = f"My go:\n```python\n{ONE_HOT.reference}```"
    ack = await desk.submit(runner, who(1), C1, fenced, thread_of="m7")  # type: ignore[arg-type]
    assert (ack.plain(), ack.ephemeral) == (
        "⏳ Judging your solution to **One-hot encoding** (judging now); the verdict will appear here.", False)
    code = ONE_HOT.reference.strip("\n")
    assert runner.requests == [JobRequest(
        code, "discord:g1:u1",
        {"platform": "discord", "workspace": "g1", "channel_id": "c1", "user_id": "u1",
         "display_name": "Player 1", "kind": "challenge", "challenge": "one-hot", "thread_of": "m7"},
        Device.CPU, limits={}, judge=judge_job("one-hot", ONE_HOT.spec, ONE_HOT.reference))]
    runner.position = 1
    queued = await desk.submit(runner, who(1), C1, code)  # type: ignore[arg-type]
    assert queued.plain() == ("⏳ Judging your solution to **One-hot encoding** (position 1 in the queue); "
                              "the verdict will appear here.")
    assert "thread_of" not in runner.requests[-1].reply_to


@pytest.mark.parametrize(("challenge", "limits"), [
    (ONE_HOT, {}), (SOFTMAX, {"timeout_s": 10.0, "memory_mb": 1024.0}),
], ids=["no-limits", "own-limits"])
async def test_the_judge_job_asks_for_the_problems_own_limits(drill, desk, challenge: Challenge,
                                                              limits: dict[str, float]) -> None:
    runner = JudgeRunner(timeout_s=None)
    await desk.open_id(who(1), challenge.id, HOW)
    await desk.submit(runner, who(1), C1, challenge.reference)  # type: ignore[arg-type]
    [request] = runner.requests
    assert (request.code, request.limits, request.device) == (challenge.reference.strip("\n"), limits, Device.CPU)
    assert request.judge is not None and request.judge["spec"] == challenge.spec.to_dict()


# ---- the verdict in the thread ----------------------------------------------------------------

async def _submitted(desk: ChallengeDesk, member: Who, challenge: Challenge, thread_of: str | None) -> JobRequest:
    runner = JudgeRunner()
    await desk.open_id(member, challenge.id, HOW)
    await desk.submit(runner, member, C1, challenge.reference, thread_of=thread_of)  # type: ignore[arg-type]
    return runner.requests[0]


async def test_verdicts_land_in_the_thread_and_a_first_solve_scores_once(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    right = JobResult("j1", request, JobState.DONE,
                      verdict=judged(ONE_HOT, ONE_HOT.reference, output="hi\n", peak=40.2))
    await desk.deliver(right, channel)  # type: ignore[arg-type]
    [(where, msg, thread)] = channel.posts
    assert (where, thread, msg.mention) == (Where("discord", "g1", "c1"), "m7", "u1")
    assert msg.plain() == (
        "**✅ Solved: One-hot encoding**\nPassed 5/5 tests.\n0.25 s · peak RAM 40 MB · device: cpu\n"
        f"🏅 +10 points (first solve)\n**Why it works:** {ONE_HOT.explanation.strip()}\n"
        "Your code printed:\n```text\nhi\n```")
    await desk.deliver(right, channel)  # type: ignore[arg-type]
    assert "Solved before: resubmissions earn no extra points." in channel.posts[-1][1].plain().splitlines()
    assert "🏅" not in channel.posts[-1][1].plain()
    wrong_request = await _submitted(desk, who(2), ONE_HOT, None)
    zeros = "import torch\n\ndef one_hot(labels, num_classes):\n    return torch.zeros(*labels.shape, num_classes, dtype=torch.long)\n"
    verdict = judged(ONE_HOT, zeros)
    assert 0 < verdict["passed"] < 5 and verdict["failure"]  # (all zeros pass the empty test only)
    await desk.deliver(JobResult("j2", wrong_request, JobState.DONE, verdict=verdict), channel)  # type: ignore[arg-type]
    where, msg, thread = channel.posts[-1]
    assert (thread, msg.mention, msg.title) == (
        None, "u2", f"❌ {verdict['passed']}/5 tests passed: One-hot encoding")
    assert msg.plain().splitlines()[1:3] == [f"First failure: {verdict['failure']}", "0.25 s · device: cpu"]
    assert (await desk.board("discord", "g1", "server")).plain() == (
        "**🧩 Challenges board · this server**\n1. Player 1 — 10 pts · 1 solved")
    assert await rows(drill.db) == [("one-hot", "tensors", 0, 2, 10, True), ("one-hot", "tensors", 0, 1, 0, False)]


async def test_the_verdict_is_read_from_the_wire_typed_and_capped(drill, desk) -> None:
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    forged = JobResult("j1", request, JobState.DONE, verdict={"passed": 9, "total": 5, "failure": None})
    assert desk.verdict(forged) == (ONE_HOT, Verdict(0, 0, "no verdict: the judge's answer could not be read"))
    silent = JobResult("j2", request, JobState.DONE)
    assert desk.verdict(silent) == (ONE_HOT, Verdict(0, 0, "no verdict: the judge's answer is missing"))
    long = JobResult("j3", request, JobState.DONE, verdict={"passed": 0, "total": 5, "failure": "f" * 500})
    assert desk.verdict(long) == (ONE_HOT, Verdict(0, 5, "f" * 300))


async def test_member_text_in_a_verdict_is_inert_in_code_blocks(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    verdict = judged(ONE_HOT, "def one_hot(labels, n):\n    raise ValueError('<!channel> [x](https://e.example)')\n",
                     output="@everyone <!here>")
    await desk.deliver(JobResult("j1", request, JobState.DONE, verdict=verdict), channel)  # type: ignore[arg-type]
    msg = channel.posts[-1][1]
    assert msg.blocks[0] == TextBlock("First failure: test 'basic' (inputs 6, int): your code raised an error")
    assert msg.blocks[1] == CodeBlock("ValueError: <!channel> [x](https://e.example)", "text")
    assert msg.blocks[-1] == CodeBlock("@everyone <!here>", "text")
    assert not any("<!" in b.text or "@everyone" in b.text for b in msg.blocks if isinstance(b, TextBlock))


async def test_a_sandbox_kill_is_the_verdict_with_the_device_and_memory(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    killed = JobResult("j1", request, JobState.FAILED, device_used="cuda:0 (NVIDIA H200)",
                       peak_rss_mb=512.4, error_message="interrupted: the runner restarted")
    await desk.deliver(killed, channel)  # type: ignore[arg-type]
    msg = channel.posts[-1][1]
    assert msg.plain().splitlines()[:3] == [
        "**❌ Not judged: One-hot encoding**", "First failure: no verdict: interrupted: the runner restarted",
        "peak RAM 512 MB · device: cuda:0 (NVIDIA H200)"]
    assert await rows(drill.db) == [("one-hot", "tensors", 0, 1, 0, False)]


async def test_a_submission_its_author_cancelled_is_not_judged_nor_an_attempt(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    before = await rows(drill.db)
    await desk.deliver(JobResult("j1", request, JobState.CANCELLED, error_message="cancelled"), channel)  # type: ignore[arg-type]
    [(where, msg, thread)] = channel.posts
    assert (where, thread, msg.mention) == (Where("discord", "g1", "c1"), "m7", "u1")
    assert msg.plain() == "**🛑 Cancelled: One-hot encoding**\nCancelled by its author."
    assert await rows(drill.db) == before


async def test_a_problem_gone_from_the_bank_is_said_in_the_thread(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    smaller = challenge_desk(drill.db, drill.clock, ChallengeBank([SOFTMAX], []))
    result = JobResult("j1", request, JobState.DONE, verdict=judged(ONE_HOT, ONE_HOT.reference))
    assert smaller.verdict(result) is None
    await smaller.deliver(result, channel)  # type: ignore[arg-type]
    [(where, msg, thread)] = channel.posts
    assert (where, thread, msg.plain(), msg.ephemeral) == (
        Where("discord", "g1", "c1"), "m7", "That challenge is no longer in the bank.", True)
    unnamed = JobRequest("print(1)", "discord:g1:u1", {"platform": "discord", "workspace": "g1",
                                                       "channel_id": "c1", "user_id": "u1"})
    await desk.deliver(JobResult("j2", unnamed, JobState.DONE, stdout=""), channel)  # type: ignore[arg-type]
    assert (channel.posts[-1][2], channel.posts[-1][1].plain()) == (None, "That challenge is no longer in the bank.")
    assert await rows(drill.db) == [("one-hot", "tensors", 0, 0, 0, False)]


# ---- points, the board, a member's tally -----------------------------------------------------

async def test_attempts_count_and_only_a_first_solve_scores(drill, desk) -> None:
    await desk.open_id(who(1), ONE_HOT.id, HOW)
    await desk.hint(who(1), "/challenge")
    assert await desk.record(who(1), ONE_HOT, solved=False) == 0
    assert await rows(drill.db) == [("one-hot", "tensors", 1, 1, 0, False)]
    drill.clock.advance(60)
    solved_at = drill.clock.now()
    assert await desk.record(who(1), ONE_HOT, solved=True) == 10
    drill.clock.advance(60)
    assert await desk.record(who(1), ONE_HOT, solved=True) == 0
    assert await desk.record(who(1), LAST_TOKEN, solved=True) == 20  # never opened: counted all the same
    assert await desk.record(who(2), ATTENTION, solved=True) == 30
    assert await rows(drill.db) == [("last-token", "tensors", 0, 1, 20, True), ("one-hot", "tensors", 1, 3, 10, True),
                                    ("causal-attention", "nn-modules", 0, 1, 30, True)]
    async with drill.db.read() as session:
        first = await session.scalar(select(ChallengeProgress).where(ChallengeProgress.challenge_id == "one-hot"))
        g1 = await session.scalar(select(Workspace.id).where(Workspace.external_id == "g1"))
        assert first is not None and first.solved_at.replace(tzinfo=None) == solved_at.replace(tzinfo=None)
        assert first.workspace_id == g1


async def test_the_board_ranks_points_then_the_earlier_last_solve_ten_lines_this_workspace(drill, desk) -> None:
    await desk.record(who(1), ONE_HOT, solved=True)  # Player 1: 10 ...
    drill.clock.advance(60)
    await desk.record(who(2), LAST_TOKEN, solved=True)  # Player 2: 20, last solve at +1 min
    drill.clock.advance(60)
    await desk.record(who(1), SOFTMAX, solved=True)  # ... Player 1: 20, last solve at +2 min
    await desk.record(who(3), ATTENTION, solved=False)  # tried, never solved: not on the board
    await desk.open_id(who(4), ONE_HOT.id, HOW)  # opened only: not on the board
    await desk.record(Who("slack", "g1", "u1", "Sam"), ATTENTION, solved=True)  # same id, other platform
    board = await desk.board("discord", "g1", "server")
    assert (board.plain(), board.ephemeral) == ("**🧩 Challenges board · this server**\n"
                                                "1. Player 2 — 20 pts · 1 solved\n"
                                                "2. Player 1 — 20 pts · 2 solved", False)
    assert (await desk.board("slack", "g1", "workspace")).plain() == (
        "**🧩 Challenges board · this workspace**\n1. Sam — 30 pts · 1 solved")
    await desk.record(Who("slack", "g1", "u2", "Sam"), HUBER, solved=True)  # another Sam
    assert (await desk.board("slack", "g1", "workspace")).plain().splitlines()[1:] == [
        "1. Sam — 30 pts · 1 solved", "2. Sam — 10 pts · 1 solved"]
    for n in range(5, 15):
        drill.clock.advance(60)
        await desk.record(who(n), HUBER, solved=True)
    lines = (await desk.board("discord", "g1", "server")).plain().splitlines()
    assert lines[1:] == ["1. Player 2 — 20 pts · 1 solved", "2. Player 1 — 20 pts · 2 solved"] + [
        f"{i}. Player {n} — 10 pts · 1 solved" for i, n in enumerate(range(5, 13), 3)]


async def test_mine_counts_this_members_solves_per_topic_of_the_bank(drill) -> None:
    desk = challenge_desk(drill.db, drill.clock, ChallengeBank([ONE_HOT, SOFTMAX, HUBER], []))
    assert (await desk.mine(who(1))).plain() == (
        "**🧩 Your challenges**\nSolved 0 of 3.\nLoss functions: 0/1\nTensors: 0/2")
    await desk.record(who(1), ONE_HOT, solved=True)
    await desk.record(who(1), HUBER, solved=False)  # never opened: a row, no points
    assert ("huber-loss", "losses", 0, 1, 0, False) in await rows(drill.db)
    await desk.record(who(2), HUBER, solved=True)
    await desk.record(who(2), SOFTMAX, solved=True)
    mine = await desk.mine(who(1))
    assert (mine.plain(), mine.ephemeral) == (
        "**🧩 Your challenges**\nSolved 1 of 3.\nLoss functions: 0/1\nTensors: 1/2", True)
    assert await desk.solved_by_topic(who(2)) == {"losses": 1, "tensors": 1}
    assert await desk.solved_by_topic(who(3)) == {}


async def test_only_the_unsolved_problem_of_a_topic_is_offered(drill, desk) -> None:
    tensors = [c for c in BANK.challenges if c.topic == "tensors"]
    left = BANK.get("logsumexp")
    assert left in tensors and len(tensors) >= 5
    for c in tensors:
        if c is not left:
            await desk.record(who(1), c, solved=True)
    for _ in range(4):
        assert (await desk.open(who(1), "tensors", None, HOW)).title == challenge_message(left, HOW).title


async def test_a_verdict_for_someone_new_names_them_as_the_job_said(drill, desk) -> None:
    channel = Channel()
    request = await _submitted(desk, who(1), ONE_HOT, "m7")
    verdict = judged(ONE_HOT, ONE_HOT.reference)
    for user, extra in (("u8", {"display_name": "Zed"}), ("u9", {})):
        reply = {"platform": "discord", "workspace": "g1", "channel_id": "c1", "user_id": user,
                 "kind": "challenge", "challenge": "one-hot", **extra}
        await desk.deliver(JobResult(user, JobRequest(request.code, f"discord:g1:{user}", reply),  # type: ignore[arg-type]
                                     JobState.DONE, verdict=verdict), channel)
        drill.clock.advance(60)
    assert (await desk.board("discord", "g1", "server")).plain().splitlines()[1:] == [
        "1. Zed — 10 pts · 1 solved", "2. u9 — 10 pts · 1 solved"]


# ---- the bank's own checks -------------------------------------------------------------------

def test_points_limits_and_the_judges_spec_come_from_the_file() -> None:
    assert [ONE_HOT.points, LAST_TOKEN.points, ATTENTION.points] == [10, 20, 30]
    assert ONE_HOT.job_limits == {}
    assert SOFTMAX.job_limits == {"timeout_s": 10.0, "memory_mb": 1024.0}
    assert all(type(v) is float for v in SOFTMAX.job_limits.values())
    only_time = ONE_HOT.model_copy(update={"time_limit_s": 5})
    assert only_time.job_limits == {"timeout_s": 5.0}
    assert ATTENTION.forbid[0] == "torch.nn.functional.scaled_dot_product_attention"
    assert ATTENTION.forbid_ops[0] == "aten.scaled_dot_product_attention"
    assert ATTENTION.spec == JudgeSpec(tests=ATTENTION.tests, call="causal_mha", grad=True,
                                       forbid=ATTENTION.forbid, forbid_ops=ATTENTION.forbid_ops,
                                       atol=1e-4, rtol=1e-4)
    warmup = BANK.get("warmup-cosine")
    assert warmup is not None and (warmup.spec.atol, warmup.spec.rtol, warmup.spec.call) == (1e-7, 1e-5, "")


def _raw(**update: object) -> dict[str, object]:
    raw = yaml.safe_load((CHALLENGE_DIR / "one-hot.yaml").read_text(encoding="utf-8"))
    raw.update(update)
    return raw


@pytest.mark.parametrize(("field", "ok", "bad", "error"), [
    ("id", "abc", "ab", "string_pattern_mismatch"),
    ("id", "a" + "b" * 40, "a" + "b" * 41, "string_pattern_mismatch"),
    ("id", "a-0", "-ab", "string_pattern_mismatch"),
    ("id", "one-hot", "One-hot", "string_pattern_mismatch"),
    ("title", "abc", "ab", "string_too_short"),
    ("title", "x" * 80, "x" * 81, "string_too_long"),
    ("difficulty", 1, 0, "greater_than_equal"),
    ("difficulty", 3, 4, "less_than_equal"),
    ("statement", "s" * 20, "s" * 19, "string_too_short"),
    ("statement", "s" * 1500, "s" * 1501, "string_too_long"),
    ("stub", "s" * 10, "s" * 9, "string_too_short"),
    ("stub", "s" * 3000, "s" * 3001, "string_too_long"),
    ("hints", ["h"], [], "too_short"),
    ("hints", ["h"] * 5, ["h"] * 6, "too_long"),
    ("explanation", "e" * 20, "e" * 19, "string_too_short"),
    ("explanation", "e" * 1500, "e" * 1501, "string_too_long"),
    ("wrong", ["a", "b"], ["a"], "too_short"),
    ("time_limit_s", 2, 1.9, "greater_than_equal"),
    ("time_limit_s", 60, 60.1, "less_than_equal"),
    ("memory_mb", 256, 255, "greater_than_equal"),
    ("memory_mb", 8192, 8193, "less_than_equal"),
    ("atol", 1e-12, 0, "greater_than"),
    ("rtol", 0, -1e-9, "greater_than_equal"),
])
def test_the_schema_takes_its_limits_and_refuses_one_past(field: str, ok: object, bad: object, error: str) -> None:
    assert getattr(Challenge.model_validate(_raw(**{field: ok})), field) == (
        tuple(ok) if isinstance(ok, list) else ok)
    with pytest.raises(ValidationError) as err:
        Challenge.model_validate(_raw(**{field: bad}))
    assert [(e["loc"], e["type"]) for e in err.value.errors()] == [((field,), error)]


def test_a_challenge_is_frozen_and_its_topic_is_one_of_ours() -> None:
    with pytest.raises(ValidationError):
        ONE_HOT.title = "Another"  # type: ignore[misc]
    with pytest.raises(ValidationError) as err:
        Challenge.model_validate(_raw(topic="tensor-magic"))
    assert [e["msg"] for e in err.value.errors()] == [
        "Value error, unknown topic 'tensor-magic'; choose one of: " + ", ".join(TOPICS)]
    assert (ONE_HOT.atol, ONE_HOT.rtol, ONE_HOT.grad, ONE_HOT.gradcheck, ONE_HOT.time_limit_s, ONE_HOT.memory_mb) == (
        1e-5, 1e-4, False, False, None, None)
    bare = Challenge.model_validate({k: v for k, v in _raw().items() if k not in ("call", "forbid")})
    assert (bare.call, bare.forbid, bare.forbid_ops) == ("", (), ())
    with pytest.raises(ValidationError) as err:
        Challenge.model_validate(_raw(forbid_ops=["aten._softmax", "torch.softmax"]))
    assert [e["msg"] for e in err.value.errors()] == [
        "Value error, forbid_ops names aten overload packets (aten._softmax), not 'torch.softmax'"]


def _syntax(source: str) -> str:
    with pytest.raises(SyntaxError) as err:
        ast.parse(source)
    return f"line {err.value.lineno}: {err.value.msg}"


def test_code_problems_name_what_the_schema_cannot_see() -> None:
    def problems(**update: object) -> list[str]:
        return ONE_HOT.model_copy(update=update).code_problems()

    assert problems() == []
    assert problems(tests="def other():\n    pass\n") == ["tests must define cases()"]
    runs = "def cases():\n    yield 'a', ()\n\ndef run(sol):\n    return sol\n"
    assert problems(tests=runs, call="") == []
    assert problems(call="") == ["set call: (the function to test) or define run(sol, *args) in tests",
                                 "stub does not define ", "reference does not define "]
    assert problems(call="nope") == ["stub does not define nope", "reference does not define nope"]
    nested = "def outer():\n    def one_hot(labels, num_classes):\n        return labels\n    return outer\n"
    assert problems(reference=nested) == ["reference does not define one_hot"]
    assert problems(stub="class one_hot:\n    pass\n") == []
    bad = "def cases(:\n"
    assert problems(tests=bad) == [f"tests does not parse: {_syntax(bad)}"]
    assert problems(stub=bad) == [f"stub does not parse: {_syntax(bad)}"]
    assert problems(wrong=(ONE_HOT.wrong[0], bad)) == [f"wrong[1] does not parse: {_syntax(bad)}"]
    assert problems(wrong=(ONE_HOT.wrong[0], ONE_HOT.wrong[0])) == ["two wrong: solutions are the same"]
    assert problems(forbid=("torch.arange", "torch.Tensor.long")) == [
        "the reference uses forbidden torch.Tensor.long, torch.arange"]
    assert problems(forbid=("torch.nn.functional.one_hot",),
                    reference="import torch\ndef one_hot(l, n):\n    return torch.nn.functional.one_hot(l, n)\n") == [
        "the reference uses forbidden torch.nn.functional.one_hot"]


def test_files_that_cannot_be_read_or_are_not_a_challenge(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert load_challenge(missing) == (None, [
        Problem(missing, 1, f"cannot read challenge: [Errno 2] No such file or directory: '{missing}'")])
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe")
    challenge, [problem] = load_challenge(binary)
    assert (challenge, problem.line, problem.message) == (
        None, 1, "cannot read challenge: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte")
    listed = tmp_path / "listed.yaml"
    listed.write_text("- a\n- b\n", encoding="utf-8")
    challenge, [problem] = load_challenge(listed)
    assert (challenge, problem.path, problem.line, problem.message) == (
        None, listed, 1, "a challenge file must be a mapping")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n", encoding="utf-8")
    challenge, [problem] = load_challenge(broken)
    assert challenge is None and problem.line == 1 and problem.message.startswith("cannot read challenge: ")


def test_schema_errors_point_at_their_key_and_the_id_must_match_the_file(tmp_path: Path) -> None:
    good = (CHALLENGE_DIR / "one-hot.yaml").read_text(encoding="utf-8")
    lines = good.splitlines()
    renamed = tmp_path / "other-name.yaml"
    renamed.write_text(good, encoding="utf-8")
    assert load_challenge(renamed)[1] == [Problem(renamed, 1, "id 'one-hot' must match the file name")]
    assert load_challenge(renamed)[0] is None
    bad = tmp_path / "one-hot.yaml"
    wrong_at = next(i for i, line in enumerate(lines, 1) if line.startswith("wrong:"))
    text = good.replace("title: One-hot encoding\n", "").replace("wrong:\n", "wrong:\n  - 7\n")
    bad.write_text(text + "colour: blue\n", encoding="utf-8")
    challenge, problems = load_challenge(bad)
    assert challenge is None
    assert [(p.line, p.message) for p in problems] == [
        (1, "title: Field required"),
        (wrong_at - 1, "wrong.0: Input should be a valid string"),
        (len(text.splitlines()) + 1, "colour: Extra inputs are not permitted")]
    duplicate = tmp_path / "dup" / "one-hot.yaml"
    duplicate.parent.mkdir()
    duplicate.write_text(good.replace("wrong:\n", f"wrong:\n  - |\n{_indent(ONE_HOT.wrong[0])}"), encoding="utf-8")
    assert load_challenge(duplicate)[1] == [Problem(duplicate, 1, "one-hot: two wrong: solutions are the same")]


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in code.splitlines())


def test_a_directory_loads_its_good_files_and_reports_the_others(tmp_path: Path) -> None:
    assert check_challenges(tmp_path) == []  # no challenges/ folder: nothing to report
    folder = tmp_path / "challenges"
    folder.mkdir()
    for name in ("one-hot", "huber-loss"):
        (folder / f"{name}.yaml").write_text((CHALLENGE_DIR / f"{name}.yaml").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    (folder / "a-list.yaml").write_text("- a\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not a challenge", encoding="utf-8")
    bank = load_challenges(folder)
    assert [c.id for c in bank.challenges] == ["huber-loss", "one-hot"]
    assert [(p.path.name, p.message) for p in bank.problems] == [("a-list.yaml", "a challenge file must be a mapping")]
    assert check_challenges(tmp_path) == bank.problems
    assert bank.get("one-hot") == ONE_HOT and bank.get("nope") is None
