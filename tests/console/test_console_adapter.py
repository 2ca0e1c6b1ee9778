"""The console adapter in-process on a real SQLite app: rounds, schedules, day changes, files,
and the runner fallback — things too slow or too time-bound for the terminal scenario.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.adapters.console.play import ConsoleAdapter, files_dir_for
from bot.adapters.console.screen import Screen
from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.messages import Attachment, Message
from bot.storage.models import Answer, Post
from tests.support.console_fixtures import Term, say

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("console"),
]


async def test_a_round_plays_to_the_final_standings(console: ConsoleAdapter, term: Term, app: App) -> None:
    shown = await say(console, term, "round 2 10")
    assert "Round started: 2 questions, 10 s each" in shown
    for task in list(app.commands.tasks.tasks):
        await task  # the fake clock makes every wait instant
    shown = term.take()
    assert shown.count("Round ·") >= 2
    assert "Round — final standings" in shown
    async with app.db.read() as session:
        assert await session.scalar(select(func.count()).where(Post.kind == "round")) == 2


async def test_round_refusals_come_from_the_core(console: ConsoleAdapter, term: Term) -> None:
    assert "count must be between 1 and 20 (got 50)" in await say(console, term, "round 50")
    assert "too many numbers: 3 (expected count, seconds)" in await say(console, term, "round 1 2 3")
    assert "unknown topic 'nowhere'" in await say(console, term, "round 2 10 nowhere")


async def test_daily_schedule_and_a_new_question_the_next_day(
    console: ConsoleAdapter, term: Term, app: App, fake_clock: FakeClock
) -> None:
    shown = await say(console, term, "daily schedule 09:00 Mars/Olympus")
    assert "unknown timezone 'Mars/Olympus'" in shown
    shown = await say(console, term, "daily schedule 25:00")
    assert "invalid time '25:00'" in shown
    shown = await say(console, term, "daily schedule 09:00 Europe/Berlin daily")
    assert "Daily question scheduled" in shown
    assert "Europe/Berlin" in await say(console, term, "daily status")

    first = await say(console, term, "today")
    assert "Daily question" in first
    assert "Daily question" in await say(console, term, "today")
    fake_clock.advance(days=1)
    await say(console, term, "today")
    async with app.db.read() as session:
        dailies = list(await session.scalars(select(Post).where(Post.kind == "daily")))
    assert len(dailies) == 2
    assert dailies[0].local_date != dailies[1].local_date
    assert console.daily_post_id == dailies[1].id


async def test_an_expired_daily_shows_its_reveal(
    console: ConsoleAdapter, term: Term, fake_clock: FakeClock
) -> None:
    await say(console, term, "today")
    fake_clock.advance(hours=13)  # past the reveal time, before the next day's post
    assert "This question is closed" in await say(console, term, "a")  # the question's keys still
    shown = await say(console, term, "today")
    assert "· answer" in shown and "Explanation" in shown
    again = await say(console, term, "today")  # revealed already: shown, not published twice
    assert "· answer" in again and "Explanation" not in again
    assert "Type 1 = 🚩 Report" in again  # the reveal's key: report the question


async def test_answering_after_a_restart_uses_the_stored_post(
    app: App, term: Term, tmp_path: Path
) -> None:
    first = ConsoleAdapter(app, name="ana", screen=Screen(term.console), files_dir=tmp_path)
    app.publisher.register("console", first.publisher)
    await say(first, term, "today")
    second = ConsoleAdapter(app, name="bo", screen=Screen(term.console), files_dir=tmp_path)
    app.publisher.register("console", second.publisher)
    shown = await say(second, term, "today")
    assert "0 answered" in shown
    await say(second, term, "c")
    async with app.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Answer)) == 1
        assert await session.scalar(select(func.count()).select_from(Post)) == 1


async def test_groups_and_leaderboards(console: ConsoleAdapter, term: Term) -> None:
    assert "Created study group" in await say(console, term, "group create night owls")
    assert "night owls" in await say(console, term, "group list")
    shown = await say(console, term, "leaderboard group night owls month")
    assert "Leaderboard · group night owls ·" in shown and "Nobody has scored yet" in shown
    assert "Name the study group" in await say(console, term, "leaderboard group")
    assert "no study group called 'night'" in await say(console, term, "leaderboard group night")
    assert "unexpected argument 'x'" in await say(console, term, "lb channel week x")
    assert "group goes with scope group (got scope channel)" in await say(
        console, term, "lb scope:channel group:x"
    )
    assert "unknown period 'year'" in await say(console, term, "leaderboard channel year")
    assert "Leaderboard · this workspace · all time" in await say(console, term, "lb workspace all")


async def test_review_and_bad_counts(console: ConsoleAdapter, term: Term) -> None:
    review = await say(console, term, "review 3")
    assert "Review 1/3" in review
    keys = "show" if "Type show" in review else "a, b, c, d"
    assert "count must be between 1 and 50 (got 0)" in await say(console, term, "review 0")
    assert "unknown action 'soon'; choose one of: export" in await say(console, term, "review soon")
    assert "too many numbers: 3 (expected count, difficulty)" in await say(console, term, "quiz 1 2 3")
    assert f"its keys are: {keys}." in await say(console, term, "next")


async def test_keys_are_those_of_the_latest_message(console: ConsoleAdapter, term: Term) -> None:
    assert "Type today or quiz to get a question" in await say(console, term, "next")
    shown = await say(console, term, "quiz autograd 2")
    first = "a" if "Type a · b" in shown else "show"
    shown = await say(console, term, first)
    if first == "show":
        shown = await say(console, term, "easy")
    assert "Next question" in shown
    assert "its keys are: next, stop" in await say(console, term, "a")
    shown = await say(console, term, "stop")
    assert "Quiz finished:" in shown and "(1 of 2 answered)" in shown


async def test_attachments_are_saved_as_files(console: ConsoleAdapter, term: Term, tmp_path: Path) -> None:
    message = Message(title="Finished").text("long output")
    message.attachments = [Attachment("../out put.txt", b"line\n" * 3)]
    await console.publisher.publish(console.where, message)
    shown = term.take()
    saved = list((tmp_path / "files").iterdir())
    assert len(saved) == 1 and saved[0].read_bytes() == b"line\n" * 3
    assert saved[0].name.endswith("out_put.txt")
    assert str(saved[0]) in shown


async def test_update_of_an_unknown_ref_prints_the_whole_message(console: ConsoleAdapter, term: Term) -> None:
    await console.publisher.update(console.where, "console:old:1", Message(title="Results").text("42%"))
    shown = term.take()
    assert "✎ updated" in shown and "Results" in shown and "42%" in shown


async def test_run_without_a_runner_says_so(console: ConsoleAdapter, term: Term) -> None:
    shown = await say(console, term, "run print(1)")
    assert "The code runner is not available on this deployment." in shown


async def test_a_runner_that_cannot_start_is_reported(
    console: ConsoleAdapter, term: Term, app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_CPU_SLOTS", "0")
    monkeypatch.setenv("RUNNER_GPUS", "[]")
    monkeypatch.setenv("RUNNER_ALLOW_WEAK_ISOLATION", "true")
    app.runner_overrides["journal_path"] = tmp_path / "journal.sqlite3"
    app.runner_task = asyncio.create_task(app.start_runner())
    shown = await say(console, term, "run print(1)")
    assert "The code runner is not available on this deployment. (the code runner could not start here" in shown
    assert "no slots" in shown
    assert app.runs is None


def test_attachment_folder_follows_the_sqlite_file(tmp_path: Path) -> None:
    assert files_dir_for(f"sqlite+aiosqlite:///{tmp_path}/x.db") == tmp_path / "playground-files"
    assert files_dir_for("postgresql+asyncpg://u@h/db") == Path("data/playground-files")


async def test_stats_saves_the_chart_and_prints_its_path(
    console: ConsoleAdapter, term: Term, tmp_path: Path
) -> None:
    await say(console, term, "today")
    await say(console, term, "a")
    shown = await say(console, term, "stats")
    assert "Active on 1 of the last 84 days" in " ".join(shown.split())
    [saved] = list((tmp_path / "files").glob("*stats.png"))
    assert str(saved) in shown.replace("\n", "")
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_weekly_digest_and_challenge_in_the_console(
    console: ConsoleAdapter, term: Term, app: App, tmp_path: Path
) -> None:
    assert "Set this channel's daily schedule first" in await say(console, term, "daily digest now")
    await say(console, term, "daily schedule 09:00 UTC daily")
    assert "invalid day 'someday'" in await say(console, term, "daily digest someday 09:00")
    shown = await say(console, term, "daily digest now")
    assert "Weekly digest · week of Mon 23 Feb" in shown and "Posted last week's digest." in shown
    assert list((tmp_path / "files").glob("*leaderboard*.png"))  # the chart, saved as a file
    shown = await say(console, term, "daily challenge wed 10:00")
    assert "Weekly challenge: wed 10:00 UTC" in shown
    assert "Weekly challenge: wed 10:00 UTC" in await say(console, term, "daily status")
    assert "no weekly challenge this week" in await say(console, term, "challenge week")


async def test_community_bank_upload_export_and_suggestions_in_the_console(
    console: ConsoleAdapter, term: Term, tmp_path: Path
) -> None:
    from tests.support.community_banks import GOOD

    path = tmp_path / "our-loop.yaml"
    path.write_bytes(GOOD)
    out = await say(console, term, "bank upload /no/such/bank.yaml")
    assert "cannot read /no/such/bank.yaml: No such file or directory" in out
    out = await say(console, term, f"bank upload {path}")
    assert "Bank our-loop stored: 2 questions" in out
    out = await say(console, term, "quiz banks:community count:1")
    assert "When does our team call" in out or "model.eval()" in out
    out = await say(console, term, "bank export our-loop")
    [saved] = [Path(line.split("saved ", 1)[1].strip()) for line in out.splitlines() if "saved " in line]
    assert saved.read_bytes() == GOOD
    out = await say(console, term, 'suggest prompt:"Which call clears grads?" '
                                   'choices:"*`zero_grad()`; `step()` | it updates weights; `eval()` | it sets a mode" '
                                   'explanation:"`zero_grad()` resets `.grad`." topic:autograd')
    assert "Thanks! Suggestion #1 is waiting" in out
    out = await say(console, term, "bank review approve id:1")
    assert "✉ direct message to" in out and "was approved and added to the bank suggestions" in out


async def test_documented_forms_and_unknown_actions_in_the_console(
    console: ConsoleAdapter, term: Term, tmp_path: Path
) -> None:
    out = await say(console, term, "group frobnicate x")
    assert "unknown action 'frobnicate'; choose one of: create, join, leave, list, stats" in out
    assert "Study groups" not in out and "No study groups yet" not in out
    await say(console, term, "today")
    await say(console, term, "a")
    await say(console, term, "reveal")
    out = await say(console, term, "leaderboard workspace week chart")
    assert "Leaderboard · this workspace · week" in out
    assert list((tmp_path / "files").glob("*leaderboard*.png"))  # chart alone means chart:true
    out = await say(console, term, "quiz community")
    assert out.strip() == "no questions match in this community's banks"  # banks:community, not a topic


async def test_daily_now_extra_is_reached_by_today_and_reveal(
    console: ConsoleAdapter, term: Term, app: App
) -> None:
    await say(console, term, "today")
    out = await say(console, term, "daily now")
    async with app.db.read() as session:
        extra = await session.scalar(select(Post).where(Post.kind == "now"))
        daily = await session.scalar(select(Post).where(Post.kind == "daily"))
    assert extra is not None and daily is not None
    assert f"#{extra.id}" in out
    shown = await say(console, term, "today")  # today's question, then the extra, whose keys are on screen
    assert shown.count("0 answered") == 2
    out = await say(console, term, "reveal")  # the newest open question: the extra
    async with app.db.read() as session:
        assert (await session.get(Post, extra.id)).closed_at is not None  # type: ignore[union-attr]
        assert (await session.get(Post, daily.id)).closed_at is None  # type: ignore[union-attr]
    assert "· answer" in out
    await say(console, term, "reveal")  # then today's
    async with app.db.read() as session:
        assert (await session.get(Post, daily.id)).closed_at is not None  # type: ignore[union-attr]


async def test_stop_ends_a_quiz_on_a_question_not_answered_yet(console: ConsoleAdapter, term: Term) -> None:
    await say(console, term, "quiz autograd 2")
    shown = await say(console, term, "stop")
    assert "Quiz finished:" in shown and "(0 of 2 answered)" in shown
    assert "There is no stop on the message on screen. Type today or quiz to get a question." in \
        " ".join((await say(console, term, "stop")).split())
    await say(console, term, "today")
    assert "There is no stop on the message on screen; its keys are: a, b, c, d." in " ".join(
        (await say(console, term, "stop")).split())  # a channel question is not stopped


OLD_FORMAT = """bank: team-old
title: Our bank from before why-nots
questions:
  - id: old-zero-grad
    kind: mcq
    topic: autograd
    difficulty: 1
    prompt: "Why call `optimizer.zero_grad()` every step?"
    choices: ["Gradients add up in `.grad`", "It frees the weights", "It picks the GPU", "It sets eval mode"]
    answer: "Gradients add up in `.grad`"
    explanation: "`backward()` adds into `.grad`, so the last step's gradients must be cleared."
"""


async def test_a_community_bank_in_the_previous_format_is_stored_with_warnings(
    console: ConsoleAdapter, term: Term, tmp_path: Path
) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(OLD_FORMAT, encoding="utf-8")
    out = " ".join((await say(console, term, f"bank upload {path}")).split())
    assert "Bank team-old stored: 1 question" in out
    assert "Warnings (stored anyway):" in out
    assert ("line 9: old-zero-grad: distractor 'It frees the weights' has no why_not (members see no "
            "reason after a wrong pick; add a why_not under each distractor)") in out
