"""The console mock tests (tests/mock/console/): the mock bank, the app `build_app` wires on it,
and a member playing /quiz and /mock in the console.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.adapters.console.play import ConsoleAdapter
from bot.adapters.console.screen import Screen
from bot.app import App, build_app
from bot.config import Settings
from bot.core.domain.actions import decode
from bot.core.domain.clock import FakeClock
from bot.core.reveal.posts import order_of
from bot.storage.models import MockItem, Post
from tests.support.community_banks import bank_yaml, mcq
from tests.support.console_fixtures import Term

ML_TOPICS = ("tensors", "autograd", "nn-modules", "losses", "optimization", "training-loop", "data",
             "debugging")


BANK = bank_yaml("mockbank", [
    *(mcq(f"m{n}-{t}", f"Which is right about {t} ({n})?", "right", ["wrong a", "wrong b", "wrong c"],
          topic=t) for t in ML_TOPICS for n in (1, 2)),
    {"id": "dd-graph", "kind": "deep_dive", "topic": "autograd", "difficulty": 2,
     "prompt": "How does autograd build its graph?",
     "answer": "It records operations.\n\n- Each op adds a node.\n- The graph is rebuilt every forward.\n"
               "- backward() frees it.\n",
     "explanation": "Autograd records a graph per forward pass and frees it after backward."},
    {"id": "fc-view", "kind": "flashcard", "topic": "tensors", "difficulty": 2,
     "prompt": "What is a view?",
     "answer": "- It shares storage.\n- Writes show through.\n",
     "explanation": "A view shares its base's storage."},
], title="Mock bank")


START = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


def flat(text: str) -> str:
    """The console wraps long lines; joined back they read as the member sees them."""
    return " ".join(text.split())


async def make_app(db_url: str, content: Path, clock: FakeClock) -> App:
    app = await build_app(Settings(database_url=db_url, content_dir=content), clock=clock,
                          with_runner=False)
    app.drill.rng.seed(7)
    return app


def console_of(app: App, term: Term, tmp_path: Path) -> ConsoleAdapter:
    adapter = ConsoleAdapter(app, name="ana", screen=Screen(term.console), files_dir=tmp_path / "files")
    app.publisher.register(adapter.platform, adapter.publisher)
    return adapter


async def say(console: ConsoleAdapter, term: Term, line: str) -> str:
    assert await console.handle(line)
    return flat(term.take())


async def quiz_all_right(app: App, console: ConsoleAdapter, term: Term, clock: FakeClock, count: int) -> None:
    """A /quiz answered right, 20 s per question: the member's median before the mock."""
    await say(console, term, f"quiz {count}")
    for n in range(count):
        post_id = decode(console.screen.keys[0].button.action_id).post_id
        async with app.drill.db.read() as s:
            post = await s.get(Post, post_id)
            assert post is not None
            question = app.drill.library[post.question_id]
        clock.advance(20)
        if question.choices:
            await say(console, term, "abcd"[order_of(post).index(question.answer_index)])
        else:  # a flashcard: shown and graded Good
            await say(console, term, "show")
            await say(console, term, "good")
        if n + 1 < count:
            await say(console, term, "next")


async def letter(app: App, console: ConsoleAdapter, right: bool) -> str:
    """The key of the right (or a wrong) choice of the MCQ on screen."""
    post_id_of_mock = decode(console.screen.keys[0].button.action_id)
    index = post_id_of_mock.arg // 100
    async with app.drill.db.read() as s:
        item = await s.get(MockItem, (post_id_of_mock.post_id, index))
        assert item is not None and item.post_id is not None
        post = await s.get(Post, item.post_id)
        assert post is not None
        keyed = order_of(post).index(app.drill.library[post.question_id].answer_index)
    return "abcd"[keyed if right else (keyed + 1) % 4]
