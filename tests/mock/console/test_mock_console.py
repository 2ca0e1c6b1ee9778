"""/mock in the console playground, on the app ``build_app`` wires (as ``serve`` does), with
a fake clock: a whole mock to its report, the deadline ending a mock whatever the member is
doing (the scheduler's tick), and a mock that survives a restart. Exact texts throughout."""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path

from sqlalchemy import select

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.domain.topics import TOPICS
from bot.storage.models import MockItem, SrsCard
from tests.support.console_fixtures import Term
from tests.support.mock_console import console_of, flat, letter, make_app, quiz_all_right, say

FIRST = ("Mock · MCQ 1/8 · Loss functions · ★★☆ Which is right about losses (2)? "
         "A. right B. wrong b C. wrong a D. wrong c Type a · b · c · d (or 1-4) "
         "⏱ 30:00 left · ends 10:34 UTC · item 1/11 · ML engineer")


async def test_a_whole_mock_to_its_report(app: App, clock: FakeClock, tmp_path: Path) -> None:
    term = Term()
    console = console_of(app, term, tmp_path)
    await quiz_all_right(app, console, term, clock, 12)
    assert await say(console, term, "mock ml 30") == FIRST
    for n in range(8):  # the 3rd and 6th wrong; each slower than the one before
        clock.advance(30 + 10 * n)
        shown = await say(console, term, await letter(app, console, right=n not in (2, 5)))
    assert shown == (
        "Mock · Explain-it 1/2 · Tensors · ★★☆ Answer recorded; results come in the report. "
        "What is a view? Write your answer with /mock answer … as you would say it in the interview; "
        "then tick the key points you covered (self-graded). Type skip (or 1) "
        "⏱ 21:20 left · ends 10:34 UTC · item 9/11 · ML engineer")
    clock.advance(60)
    answer = "It's sharing storage with its base <@everyone>."  # an apostrophe, a mention: as typed, inert
    checklist = await say(console, term, f"mock answer {answer}")
    assert checklist.startswith(f"Mock · Explain-it 1/2 · your answer {answer} Model answer — key points "
                                "(self-graded: tick each point your answer covered, then Done): "
                                "☐ 1. It shares storage. ☐ 2. Writes show through. ")
    assert await say(console, term, "1") == (
        f"Mock · Explain-it 1/2 · your answer {answer} Model answer — key points (self-graded: tick each "
        "point your answer covered, then Done): ☑ 1. It shares storage. ☐ 2. Writes show through. "
        "Type 1 = 1 · 2 = 2 · done (or 1-3) ⏱ 20:20 left · ends 10:34 UTC · item 9/11 · ML engineer")
    await say(console, term, "done")  # 1 of 2 key points
    assert (await say(console, term, "skip")).startswith(
        "Mock · Coding 1/1 · 🧩 Clipping the global gradient norm, in mixed precision · ★★☆ · The training loop Write clip_grad")
    clock.advance(300)
    report = await say(console, term, "done")
    assert report == (
        "📋 Mock interview report · ML engineer · 30 min Finished with 15 min 20 s to spare. "
        "Score: 6.5/11 (59%) · MCQs 6/8 · Explain-it (self-graded) 0.5/2 · Coding 0/1 "
        "By topic: Autograd 1/2 · Datasets and DataLoader 1/1 · Debugging 1/1 · Loss functions 1/1 · "
        "nn.Module and layers 0/1 · Optimizers and schedulers 0/1 · Tensors 1.5/2 · The training loop 1/2 "
        "Time per question (your median MCQ answer before this mock: 20 s): "
        "1. MCQ · Loss functions · ✅ · 30 s (slower than your median 20 s) "
        "2. MCQ · Debugging · ✅ · 40 s (slower than your median 20 s) "
        "3. MCQ · Optimizers and schedulers · ❌ · 50 s (slower than your median 20 s) "
        "4. MCQ · Autograd · ✅ · 1 min (slower than your median 20 s) "
        "5. MCQ · The training loop · ✅ · 1 min 10 s (slower than your median 20 s) "
        "6. MCQ · nn.Module and layers · ❌ · 1 min 20 s (slower than your median 20 s) "
        "7. MCQ · Datasets and DataLoader · ✅ · 1 min 30 s (slower than your median 20 s) "
        "8. MCQ · Tensors · ✅ · 1 min 40 s (slower than your median 20 s) "
        "9. Explain-it · Tensors · 0.5 · 1 min "
        "10. Explain-it · Autograd · ❌ · not answered "
        "11. Coding · The training loop · ❌ · 5 min "
        "Missed: • Which is right about optimization (2)? — answer: right. right is right. "
        "• Which is right about nn-modules (2)? — answer: right. right is right. "
        "• What is a view? — 1/2 key points (self-graded). A view shares its base's storage. "
        "• How does autograd build its graph? — 0/3 key points (self-graded). "
        "Autograd records a graph per forward pass and frees it after backward. "
        "• Coding: Clipping the global gradient norm, in mixed precision — no verdict "
        "Readiness (expected share right on a difficulty-3 question): 38% before → 39% after "
        "Next steps: /review brings back the 4 misses (now in your spaced-repetition deck); "
        "drill your weakest topics: nn.Module and layers, Optimizers and schedulers (/quiz nn-modules).")
    # every miss is in the member's deck, due again soon (Again, or Hard for half the points)
    async with app.drill.db.read() as s:
        cards = {c.question_id: c for c in await s.scalars(select(SrsCard))}
    for missed in ("m2-optimization", "m2-nn-modules", "fc-view", "dd-graph"):
        assert missed in cards and cards[missed].due.replace(tzinfo=UTC) < clock.now() + timedelta(days=1)
    assert await say(console, term, "mock status") == "You have no mock running. Start one with mock (e.g. mock ml 30)."
    assert await say(console, term, "mock ml thirty") == (
        "I don't know what 'thirty' means here: mock [track] [minutes] starts a mock, mock answer … answers "
        "an explain-it question, mock date YYYY-MM-DD sets your interview date.")
    assert await say(console, term, "mock ml 5") == "minutes must be between 10 and 90 (got 5)"
    assert await say(console, term, "mock answer") == "You have no mock running. Start one with mock (e.g. mock ml 30)."
    stats = await say(console, term, "stats")
    assert ("🎤 Mock interviews: 1 taken · last 59% (ML engineer, 2026-03-04) · best 59% "
            "🎯 Readiness per track (expected share right on a difficulty-3 question): ML engineer 39% · "
            "Research engineer 38% · Training/infra engineer 41% attached: stats.png, mocks.png") in stats
    assert stats.endswith("mocks.png")  # the chart itself, saved where the playground keeps files
    [chart] = [a for a in (await app.commands.stats_of(console.who, None)).attachments if a.filename == "mocks.png"]
    assert chart.description == "Mock interview scores over time: 2026-03-04 ML engineer 59%"
    assert chart.content.startswith(b"\x89PNG")


async def test_the_deadline_ends_the_mock_whatever_the_member_is_doing(
    app: App, clock: FakeClock, tmp_path: Path
) -> None:
    term = Term()
    console = console_of(app, term, tmp_path)
    assert (await say(console, term, "mock infra 10")).endswith("⏱ 10:00 left · ends 10:10 UTC · item 1/10 · "
                                                                  "Training/infra engineer")
    clock.advance(40)
    await say(console, term, await letter(app, console, right=True))
    clock.advance(9 * 60)
    await app.scheduler.tick()  # the scheduler's tick: nothing is due yet
    assert term.take() == ""
    clock.advance(60)  # past the deadline, a question on screen and unanswered
    await app.scheduler.tick()
    told = flat(term.take())
    assert told.startswith("✉ direct message to ana 📋 Mock interview report · Training/infra engineer · 10 min "
                           "⏰ Time ran out at 10:10 UTC. Score: 1/10 (10%) · MCQs 1/8 · "
                           "Explain-it (self-graded) 0/1 · Coding 0/1")
    assert "2. MCQ · " in told and " · — · not answered" in told
    assert "Next steps: /review brings back the 8 misses (now in your spaced-repetition deck)" in told
    await app.scheduler.tick()  # told once
    assert term.take() == ""
    # a key of the mock pressed after the end shows the report again, changes nothing
    again = await say(console, term, "a")
    assert again.startswith("📋 Mock interview report · Training/infra engineer · 10 min ⏰ Time ran out at 10:10 UTC.")
    async with app.drill.db.read() as s:
        cards = list(await s.scalars(select(SrsCard)))
    assert len(cards) == 10 - 1  # every question of the mock; the coding challenge has no card


async def test_a_mock_survives_a_restart(db_url: str, content: Path, clock: FakeClock, tmp_path: Path) -> None:
    first = await make_app(db_url, content, clock)
    term = Term()
    try:
        console = console_of(first, term, tmp_path)
        await say(console, term, "mock research 20")
        first_key = console.screen.keys[0].button.action_id
        clock.advance(45)
        await say(console, term, await letter(first, console, right=True))
    finally:
        await first.close()
    clock.advance(15)
    second = await make_app(db_url, content, clock)
    try:
        console = console_of(second, term, tmp_path)
        status = await say(console, term, "mock status")
        assert status.startswith("Mock · MCQ 2/8 · ")
        assert status.endswith("⏱ 19:00 left · ends 10:20 UTC · item 2/11 · Research engineer")
        again = flat((await second.commands.execute_text(console.caller, "mock", "infra 30")).plain())
        assert again.startswith("**Mock · MCQ 2/8 · ") and "You already have a mock running; here is where you are." in again
        stale = flat((await second.commands.press(console.who, first_key)).reply.plain())
        assert "That button belongs to an earlier item of your mock; here is the current one." in stale
        assert stale.startswith("**Mock · MCQ 2/8 · ")
        other = Who("console", "local", "ben", "ben")
        assert (await second.commands.press(other, first_key)).reply.plain() == (
            "This is someone else's mock. Start your own with /mock.")
        clock.advance(20)
        await say(console, term, await letter(second, console, right=False))
        clock.advance(19 * 60)
        await second.scheduler.tick()
        told = flat(term.take())
        assert "⏰ Time ran out at 10:20 UTC. Score: 1/11 (9%) · MCQs 1/8" in told
        assert "1. MCQ · " in told and " · ✅ · 45 s" in told and "2. MCQ · " in told and " · ❌ · 35 s" in told
    finally:
        await second.close()


async def test_a_judged_submission_counts_for_the_coding_item(app: App, clock: FakeClock, tmp_path: Path) -> None:
    """The verdict comes the /submit way (the challenge desk delivers the runner's result);
    the mock's coding item keeps the best mark while it is on screen."""
    from runner.jobs import Device, JobRequest, JobResult, JobState

    term = Term()
    console = console_of(app, term, tmp_path)
    await say(console, term, "mock ml 10")
    for _ in range(8):
        await say(console, term, await letter(app, console, right=True))
    coding = await say(console, term, "skip")
    async with app.drill.db.read() as s:
        item = await s.get(MockItem, (1, 9))
        assert item is not None and item.kind == "code"
        challenge = app.commands.services.challenges.bank.get(item.ref)
        assert challenge is not None
    assert coding.startswith(f"Mock · Coding 1/1 · 🧩 {challenge.title} · ")
    assert await app.commands.services.challenges.current(console.who) == challenge  # what /submit judges
    reply_to = {"platform": "console", "workspace": "local", "channel_id": "playground", "user_id": "ana",
                "display_name": "ana", "kind": "challenge", "challenge": challenge.id}
    request = JobRequest("code", "console:local:ana", reply_to, Device.CPU)
    for passed in (3, 2):  # the better of two attempts counts
        verdict = {"passed": passed, "total": 5, "failure": "test 4: values differ"}
        await app.commands.services.challenges.deliver(JobResult("j", request, JobState.DONE, verdict=verdict),
                                              app.publisher)
        assert f"❌ {passed}/5 tests passed: {challenge.title}" in flat(term.take())
    clock.advance(120)
    report = await say(console, term, "done")
    assert "Score: 8.6/10 (86%) · MCQs 8/8 · Explain-it (self-graded) 0/1 · Coding 0.6/1 " in report
    assert f"10. Coding · {TOPICS[challenge.topic]} · 0.6 · 2 min " in report
    assert f"• Coding: {challenge.title} — 3/5 tests passed " in report
