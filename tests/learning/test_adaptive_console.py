"""Readiness in /stats after quizzes played through the console adapter (the app built by
``build_app``), word for word. The app loads one bank written here: every question is a
multiple-choice question of difficulty 2, so the figures do not depend on which ones a quiz
happens to draw, and the topic mix behind the overall figure is known."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console.play import ConsoleAdapter
from bot.app import App, build_app
from bot.config import Settings
from bot.core.domain.actions import decode
from bot.core.domain.clock import FakeClock
from bot.core.reveal.posts import order_of
from bot.storage.models import Post
from tests.support.community_banks import bank_yaml, mcq
from tests.support.console_fixtures import Term, say

pytestmark = pytest.mark.platform("console")

BANK = bank_yaml("ready", [
    *(mcq(f"t{i}", f"Tensor question {i}?", "right", ["wrong a", "wrong b", "wrong c"], topic="tensors")
      for i in range(12)),
    *(mcq(f"a{i}", f"Autograd question {i}?", "right", ["wrong a", "wrong b", "wrong c"])
      for i in range(4)),
    *(mcq(f"d{i}", f"Distributed question {i}?", "right", ["wrong a", "wrong b", "wrong c"],
          topic="distributed") for i in range(8)),
], title="Readiness")


@pytest.fixture
async def app(db_url: str, fake_clock: FakeClock, tmp_path: Path) -> AsyncIterator[App]:
    banks = tmp_path / "banks"
    banks.mkdir()
    (banks / "ready.yaml").write_bytes(BANK)
    built = await build_app(Settings(database_url=db_url, content_dir=banks), clock=fake_clock,
                            with_runner=False)
    assert len(built.library) == 24 and not built.library.problems
    yield built
    await built.close()


async def answer_quiz(console: ConsoleAdapter, term: Term, app: App, command: str, right: bool) -> str:
    """Type ``command``, then the right (or a wrong) letter and next, to the summary."""
    await say(console, term, command)
    for _ in range(20):  # bounded: the quizzes here have at most 12 questions
        post_id = decode(console.screen.keys[0].button.action_id).post_id
        async with app.drill.db.read() as s:
            post = await s.get(Post, post_id)
            assert post is not None
            keyed = order_of(post).index(app.drill.library[post.question_id].answer_index)
        shown = await say(console, term, "abcd"[keyed if right else (keyed + 1) % 4])
        if "finished:" in shown:
            return shown
        await say(console, term, "next")
    raise AssertionError("the quiz never finished")


async def test_console_stats_show_readiness(console: ConsoleAdapter, term: Term, app: App) -> None:
    assert "Readiness" not in await say(console, term, "stats")  # no answers: nothing to estimate
    assert "12/12 correct" in await answer_quiz(console, term, app, "quiz tensors 12", True)
    assert "0/3 correct" in await answer_quiz(console, term, app, "quiz autograd 3", False)
    # the console wraps long lines; joined back they read as the member sees them
    shown = " ".join((await say(console, term, "stats")).split())
    assert shown.startswith(
        "Stats for ana 15 answered · 80% correct · streak 0 (best 0) "
        "Autograd: 0% of 3 · mastery 0/4 · readiness: too little data (3 answers) "
        "Tensors: 100% of 12 · mastery 12/12 · readiness 69% (43-87%) "
        "Weakest: Autograd — try /review "
        # weights 12 : 4 : 8 questions; Distributed never tried (prior: 27%), so the most headroom
        "Interview readiness (expected share right on a difficulty-3 question): 46% (24-74%) · "
        "raise it most with Distributed training, Tensors, Autograd "
        "Progress of ana: ")  # the chart's alt text follows
