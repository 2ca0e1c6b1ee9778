"""/challenge through the command desk, a real embedded runner (sandboxed when bubblewrap is
here) and a real SQLite file: open a problem, take a hint, submit a wrong and a right
solution, see the verdicts in the acknowledgement's thread, points once, the board."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import App, build_app, challenge_desk
from bot.config import Settings
from bot.core.challenges.desk import SUBMISSION_MAX
from bot.core.commands.dispatch import Caller
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.runs.desk import RunDesk
from bot.storage.db import Database
from tests.support.challenge_flow import ANA, HERE, PLATFORM, WORKSPACE, Ack, Recorder

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

BEN = Who(PLATFORM, WORKSPACE, "u-ben", "ben")


@pytest.fixture
async def app(tmp_path: Path, sqlite_template: Path) -> AsyncIterator[App]:
    path = tmp_path / "c.db"
    shutil.copy(sqlite_template, path)
    settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{path}")  # type: ignore[call-arg]
    built = await build_app(settings, clock=FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC)),
                            with_runner=False)
    yield built
    await built.db.dispose()


def caller(who: Who) -> Caller:
    return Caller(who, HERE)


async def test_open_hint_submit_wrong_then_right_then_again(app: App, runs: RunDesk) -> None:
    recorder = Recorder()
    app.publisher.register(PLATFORM, recorder)
    desk = app.commands

    shown = await desk.execute_text(caller(ANA), "challenge", "losses 1")
    challenge = await desk.services.challenges.current(ANA)
    assert challenge is not None and challenge.topic == "losses" and challenge.difficulty == 1
    assert shown.ephemeral and challenge.title in (shown.title or "")
    assert challenge.stub.rstrip() in shown.plain()

    hint = await desk.execute_text(caller(ANA), "challenge", "hint")
    assert hint.plain().count("1. ") == 1 and challenge.hints[0] in hint.plain()

    ack = Ack(recorder)
    assert await desk.submit_challenge(caller(ANA), challenge.wrong[0], ack) is None
    ref = f"m{len(recorder.posts)}"
    assert "Judging your solution" in ack.status[-1].plain()
    [wrong] = await recorder.in_thread(ref, 1)
    assert (wrong.title or "").startswith("❌") and "tests passed" in (wrong.title or "")
    assert "First failure: test '" in wrong.plain() and "device: cpu" in wrong.plain()
    assert wrong.mention == ANA.user_id

    assert await desk.submit_challenge(caller(ANA), challenge.reference, ack) is None
    ref = f"m{len(recorder.posts)}"
    [right] = await recorder.in_thread(ref, 1)
    assert (right.title or "") == f"✅ Solved: {challenge.title}"
    assert f"🏅 +{challenge.points} points (first solve)" in right.plain()
    assert challenge.explanation.strip()[:40] in right.plain()

    assert await desk.submit_challenge(caller(ANA), challenge.reference, ack) is None
    ref = f"m{len(recorder.posts)}"
    [again] = await recorder.in_thread(ref, 1)
    assert "resubmissions earn no extra points" in again.plain()
    assert "🏅" not in again.plain()

    board = await desk.execute_text(caller(BEN), "challenge", "board")
    assert board.plain().splitlines()[-1] == f"1. ana — {challenge.points} pts · 1 solved"
    mine = await desk.execute_text(caller(ANA), "challenge", "mine")
    assert "Loss functions: 1/" in mine.plain()
    stats = await desk.execute_text(caller(ANA), "stats", "")
    assert stats.plain().splitlines()[-1] == "🧩 Challenges solved: Loss functions 1"


def test_a_verdict_explains_a_well_known_error_and_names_the_test() -> None:
    from bot.core.challenges.desk import verdict_message
    from bot.core.content.challenges import load_challenges
    from runner.judge import Verdict

    challenge = load_challenges().get("pairwise-distances")
    assert challenge is not None
    failure = "test 'basic' (inputs 5×3, 4×3): your code raised an error"
    error = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (5x3 and 4x3)"
    text = verdict_message(challenge, Verdict(0, 6, failure, error, elapsed_s=0.02, peak_memory_mb=12.0),
                           None).plain()
    assert text.startswith("**❌ 0/6 tests passed: Pairwise distances without loops**")
    assert f"First failure: {failure}\n```text\n{error}\n```" in text
    assert "0.02 s · peak RAM 12 MB · device: cpu" in text
    assert "💡 **Matrix shapes cannot be multiplied**" in text


async def test_refusals_say_why_and_post_nothing(app: App, runs: RunDesk) -> None:
    recorder = Recorder()
    app.publisher.register(PLATFORM, recorder)
    desk = app.commands
    ack = Ack(recorder)

    none_open = await desk.submit_challenge(caller(BEN), "def f(): pass", ack)
    assert none_open is not None and none_open.plain() == (
        "You have no open challenge. Start one with /challenge.")
    hint = await desk.execute_text(caller(BEN), "challenge", "hint")
    assert hint.plain() == "You have no open challenge. Start one with /challenge."

    await desk.execute_text(caller(BEN), "challenge", "tensors 1")
    too_long = await desk.submit_challenge(caller(BEN), "x = 1\n" * 600, ack)
    assert too_long is not None and too_long.plain() == (
        f"Your solution is 3,599 characters; submissions take at most {SUBMISSION_MAX:,}. "
        "Trim comments or helper code and submit again.")
    assert recorder.posts == []

    unknown = await desk.execute_text(caller(BEN), "challenge", "difficulty:4")
    assert "difficulty" in unknown.plain() and "3" in unknown.plain()
    nothing = await desk.execute_text(caller(BEN), "challenge", "compile-export 1")
    assert nothing.plain() == "No challenge matches topic compile-export and difficulty 1."


async def test_a_forbidden_name_is_refused_before_any_job(app: App, runs: RunDesk) -> None:
    recorder = Recorder()
    app.publisher.register(PLATFORM, recorder)
    desk = app.commands
    await desk.services.challenges.open_id(ANA, "causal-attention", "/submit")  # several nn-modules 3 exist
    challenge = await desk.services.challenges.current(ANA)
    assert challenge is not None and challenge.id == "causal-attention"
    ack = Ack(recorder)
    code = ("import torch.nn.functional as F\n"
            "def causal_mha(x, w_qkv, w_out, n_heads):\n"
            "    return F.scaled_dot_product_attention(x, x, x, is_causal=True)\n")
    refused = await desk.submit_challenge(caller(ANA), code, ack)
    assert refused is not None and refused.plain() == (
        "This challenge asks you to write it yourself: "
        "torch.nn.functional.scaled_dot_product_attention is not allowed here.")
    assert ack.retracted == [f"m{len(recorder.posts)}"]


async def test_the_playground_opens_and_judges_a_pasted_solution(app: App, runs: RunDesk,
                                                                  tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from bot.adapters.console.play import ConsoleAdapter
    from bot.adapters.console.screen import Screen

    buffer = io.StringIO()
    console = ConsoleAdapter(app, name="ana", files_dir=tmp_path / "files",
                             screen=Screen(Console(file=buffer, width=160, color_system=None)))
    app.publisher.register(console.platform, console.publisher)
    assert await console.handle("challenge data 1")
    challenge = await app.commands.services.challenges.current(console.who)
    assert challenge is not None and challenge.id == "window-dataset"
    assert "submit to submit your solution; challenge hint for a hint" in buffer.getvalue()

    pasted = [*challenge.reference.splitlines(), "."]

    async def typed(prompt: str = "") -> str | None:
        return pasted.pop(0) if pasted else None

    console.screen.read = typed  # type: ignore[method-assign]  # the member pastes these lines
    assert await console.handle("submit")
    async with asyncio.timeout(60):
        while "✅ Solved: A sliding-window Dataset" not in buffer.getvalue():
            await asyncio.sleep(0.05)
    assert f"+{challenge.points} points (first solve)" in buffer.getvalue()


async def test_the_board_breaks_ties_by_the_earlier_solve(db: Database) -> None:
    clock = FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    desk = challenge_desk(db, clock)  # SQLite and PostgreSQL alike
    one, other = desk.bank.get("one-hot"), desk.bank.get("rms-norm")  # both difficulty 1
    assert one is not None and other is not None and one.points == other.points
    assert await desk.record(BEN, one, solved=True) == one.points
    clock.advance(60)
    assert await desk.record(ANA, other, solved=True) == other.points
    assert await desk.record(ANA, other, solved=True) == 0  # a resubmission earns nothing
    assert await desk.record(ANA, one, solved=False) == 0
    board = await desk.board(PLATFORM, WORKSPACE, "workspace")
    assert board.plain().splitlines()[-2:] == [f"1. ben — {one.points} pts · 1 solved",
                                               f"2. ana — {other.points} pts · 1 solved"]


async def test_an_admin_checks_a_community_snippet_through_the_run_sandbox(app: App, runs: RunDesk) -> None:
    """/bank check runs a community question's snippet (setup included) like /run: a public
    acknowledgement, the output in its thread; snippets are never run at upload."""
    import yaml

    from bot.core.domain.messages import Upload

    recorder = Recorder()
    app.publisher.register(PLATFORM, recorder)
    question = {"id": "ours-sum", "kind": "mcq", "topic": "tensors", "difficulty": 1,
                "prompt": "What does the snippet print?", "choices": [{"text": "6"}, {"text": "5", "why_not": "1+2+3."}],
                "answer": "6", "explanation": "It sums 1, 2 and 3.",
                "code": [{"setup": "values = [1, 2, 3]", "code": "print(sum(values))"}]}
    bank = yaml.safe_dump({"bank": "ours", "title": "Ours", "questions": [question]}).encode()
    admin = Caller(ANA, HERE, is_admin=True)
    stored = await app.commands.execute_values(admin, ("bank", "upload"), {"file": Upload("ours.yaml", bank)})
    assert stored.title == "Bank ours stored: 1 question"
    assert not recorder.posts  # nothing ran at upload
    member = await app.commands.execute_text(caller(BEN), "bank", "check ours-sum")
    assert member.plain() == "Only workspace admins can use /bank check."
    missing = await app.commands.execute_text(admin, "bank", "check nope")
    assert "No question 'nope' in this community's banks" in missing.plain()
    started = await app.commands.execute_text(admin, "bank", "check ours-sum")
    assert started.plain() == "Running the snippet of ours-sum; the output lands in the thread."
    [(thread, ack)] = [(t, m) for t, m in recorder.posts if t is None]
    assert "print(sum(values))" in ack.plain() and "values = [1, 2, 3]" in ack.plain()
    [result] = await recorder.in_thread("m1", 1)
    assert "6" in result.plain().split("```")[1]
