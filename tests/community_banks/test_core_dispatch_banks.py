"""/bank and /suggest through the CommandDesk: each subcommand reaches its own feature with the
option it was given (issue 21: survivors and "no tests" mutants of bot/core/commands/dispatch.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.app import build_daily, build_services
from bot.core.commands.dispatch import Caller, CommandDesk
from bot.core.domain.messages import Upload
from bot.core.drill.service import Drill
from tests.support.community_banks import GOOD, SUGGESTION, Publisher
from tests.support.dispatch import ADA, BO, HERE, WORDS, NoRunner, admin, member, notice_of


@pytest.fixture
async def world(drill: Drill) -> AsyncIterator[tuple[CommandDesk, Publisher]]:
    publisher = Publisher()
    desk = CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner()))  # type: ignore[arg-type]
    yield desk, publisher
    await desk.close()


async def test_upload_by_path_list_show_disable_enable_export(world) -> None:
    desk, _ = world
    opened: list[str] = []

    def open_file(path: str) -> Upload:
        opened.append(path)
        return Upload(path.rsplit("/", 1)[-1], GOOD)

    unread = await desk.execute_text(admin(), "bank", "upload banks/our-loop.yaml")
    assert notice_of(unread) == "file: attach a file"
    stored = await (await desk.prepare_text(admin(), "bank", "upload banks/our-loop.yaml", open_file)).finish()
    assert (stored.title, opened) == ("Bank our-loop stored: 2 questions", ["banks/our-loop.yaml"])
    listed = await desk.execute_text(member(), "bank", "list")
    assert "`our-loop` **Our loop** · 2 questions · version 1" in listed.plain()
    shown = await desk.execute_text(member(), "bank", "show our-loop")
    assert "`ours-zero-grad` · Autograd · mcq · When does our team call `zero_grad`?" in shown.plain()
    assert notice_of(await desk.execute_text(member(), "bank", "show nope")) == (
        "There is no community bank 'nope' here; /bank list shows them.")
    assert notice_of(await desk.execute_text(admin(), "bank", "disable our-loop")) == (
        "Bank our-loop is disabled: no new posts use it; posts already out keep working. "
        "/bank enable serves it again.")
    assert (await desk.execute_text(member(), "bank", "list")).plain() == (
        "**Community banks of this server**\n`our-loop` **Our loop** · 2 questions · version 1 · ⏸ disabled")
    assert notice_of(await desk.execute_text(admin(), "bank", "enable our-loop")) == "Bank our-loop is served again."
    assert (await desk.execute_text(member(), "bank", "list")).plain() == (
        "**Community banks of this server**\n`our-loop` **Our loop** · 2 questions · version 1")
    exported = await desk.execute_text(admin(), "bank", "export our-loop")
    assert [a.filename for a in exported.attachments] == ["our-loop.yaml"]
    assert b"ours-zero-grad" in exported.attachments[0].content


async def test_import_turns_a_document_into_a_draft(world) -> None:
    desk, _ = world
    document = Upload("notes.txt", b"Q: What does zero_grad do? A: It clears the gradients.\n")
    draft = await desk.execute_values(admin(), ("bank", "import"), {"format": "qa", "file": document})
    assert (draft.title, draft.ephemeral) == ("Draft bank from notes.txt", True)
    assert draft.plain().splitlines()[1] == "Fill in what the draft marks (keys, why-nots, topics), then /bank upload it."
    assert [a.filename for a in draft.attachments] == ["notes.draft.yaml"]
    assert b"What does zero_grad do?" in draft.attachments[0].content
    assert notice_of(await desk.execute_values(admin(), ("bank", "import"), {"format": "qa"})) == (
        "/bank import needs file: the document, a text file")


async def test_suggest_then_review_next_approve_and_reject(world) -> None:
    desk, publisher = world
    assert notice_of(await desk.execute_text(admin(), "bank", "review")) == "No suggestions are waiting for review."
    queued = notice_of(await desk.execute_text(Caller(BO, HERE), "suggest", SUGGESTION))
    assert "is waiting" in queued
    await desk.execute_text(Caller(BO, HERE), "suggest", SUGGESTION.replace("accumulate into", "fill"))
    review = (await desk.execute_values(admin(), ("bank", "review"), {})).plain()
    assert "Suggestion #1 by Bo (2 waiting)" in review
    assert "\nAutograd · difficulty 1\n" in review
    assert notice_of(await desk.execute_text(admin(), "bank", "review approve")) == (
        "Name the suggestion: /drill-bank review approve id:N")
    assert notice_of(await desk.execute_text(admin(), "bank", "review reject")) == (
        "Name the suggestion: /drill-bank review reject id:N")
    approved = await desk.execute_text(admin(), "bank", "review approve id:1 bank:team")
    assert notice_of(approved) == "Suggestion #1 approved into bank team as `suggestion-1`."
    assert [(w, m.plain()) for w, m in publisher.told] == [
        (BO, "Your suggestion #1 was approved and added to the bank team. Thank you!")]
    rejected = await desk.execute_text(admin(), "bank", 'review reject id:2 reason:"too close to #1"')
    assert notice_of(rejected) == "Suggestion #2 rejected; the author is told why."
    assert publisher.told[-1][0] == BO
    assert publisher.told[-1][1].plain() == "Your suggestion #2 was not accepted: too close to #1"
    assert notice_of(await desk.execute_text(admin(), "bank", "review approve id:7")) == (
        "There is no suggestion #7 here; /bank review shows the next one.")


async def test_suggest_passes_every_field(world) -> None:
    desk, _ = world
    await desk.execute_values(Caller(ADA, HERE, words=WORDS), ("suggest",), {
        "prompt": "Which call clears gradients?", "choices": "*zero_grad | ; step | it updates; backward | it fills",
        "explanation": "zero_grad resets .grad.", "topic": "optimization", "difficulty": 3})
    review = (await desk.execute_text(admin(BO), "bank", "review")).plain()
    assert review.splitlines()[1:7] == [
        "**Which call clears gradients?**", "✅ A. zero_grad", "▫️ B. step — _it updates_",
        "▫️ C. backward — _it fills_", "Optimizers and schedulers · difficulty 3", "zero_grad resets .grad."]
