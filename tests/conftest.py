"""Shared fixtures: real SQLite files and a real PostgreSQL database, both migrated by Alembic.

PostgreSQL tests skip locally when the server is unreachable, but fail when
TORCHDRILL_REQUIRE_SERVICES=1 (set by .ci/run) so CI can never silently skip them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import build_drill
from bot.core.content.bank import Bank, Kind, Library, Question, Snippet
from bot.core.domain.clock import FakeClock
from bot.core.drill.service import Drill
from bot.storage.db import Database, migrate

# Shared fixtures, registered once: test modules never import fixtures (tests/codebase/
# test_test_imports.py). Discord, Slack and console tests name their platform with
# pytest.mark.platform(...) and get its ``fake`` and ``app`` (tests/support/platforms.py).
pytest_plugins = [
    "tests.support.platforms",
    "tests.support.discord_fixtures",
    "tests.support.slack_fixtures",
    "tests.support.slack_oauth_fixtures",
    "tests.support.console_fixtures",
    "tests.support.posting_race",
    "tests.support.community_banks",
    "tests.support.redis_runner",
    "tests.support.run_desk",
    "tests.support.logs",
]

# Marked `not_for_mutation`, left out of `make mutate` (pytest --mutation): platform flows
# through the fake servers, CLI subprocesses, restarts and the content's own snippets. Each of their tests takes
# 0.5-5 s (measured 2026-12-04) and reaches the core through paths the faster tests reach
# directly; with them, the mutants of a whole-tree run would not fit in the hour. Also left out:
# the attack tests. Their snippets are hostile (signal every process they can see, fill /tmp and
# /dev/shm) and a mutant that weakens the sandbox lets them loose on the host, as root. While
# the first whole-tree run ran runner mutants, files in the host's /tmp and PostgreSQL's shared
# memory in /dev/shm disappeared (the exact mutant was not pinned down). And the import-graph
# test: it calls no function of ours (it parses the sources), so it kills nothing, and parsing
# mutmut's mutated copies takes it 30 s in each of a run's two full passes.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--mutation", action="store_true",
                     help="the test selection of `make mutate` (leaves out tests marked not_for_mutation)")


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture scope
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--mutation"):
        return
    skipped = [i.get_closest_marker("not_for_mutation") is not None for i in items]
    if any(skipped):
        config.hook.pytest_deselected(items=[i for i, s in zip(items, skipped, strict=True) if s])
        items[:] = [i for i, s in zip(items, skipped, strict=True) if not s]
    fastest_modules_first(items, Path("mutmut-stats.json"))


def fastest_modules_first(items: list[pytest.Item], stats: Path) -> None:
    """Order a mutant's tests by mutmut's measured durations, module by module.

    mutmut stops at the first failing test, and hands the tests over in no particular order: a
    mutant a 10 ms test kills could first wait for a 5 s sandbox test. Whole modules move (by
    their fastest selected test) so module-scoped fixtures are still set up once. mutmut runs
    the tests from its own tree, where it keeps the stats file; without it nothing moves.
    """
    if not stats.exists():
        return
    durations: dict[str, float] = json.loads(stats.read_text()).get("duration_by_test", {})
    fastest: dict[str, float] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        fastest[module] = min(fastest.get(module, float("inf")), durations.get(item.nodeid, float("inf")))
    items.sort(key=lambda item: fastest[item.nodeid.split("::")[0]])  # stable: a module keeps its order


PG_ADMIN_URL = os.environ.get("TORCHDRILL_TEST_PG", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
REQUIRE_SERVICES = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"
TABLES = (
    "answers", "srs_cards", "streaks", "group_members", "study_groups", "served", "daily_claims",
    "weekly_claims", "suggestions", "community_questions", "community_banks",
    "posts", "quizzes", "rounds", "schedules", "channels", "members", "workspaces",
    "slack_installations", "slack_bots", "slack_oauth_states",
    "post_answer_counts", "member_abilities", "question_difficulties", "question_difficulty_stripes",
    "role_rewards", "role_grants", "group_mock_takers", "group_mock_claims", "group_mocks", "community_tracks",
    "mock_items", "mock_sessions", "question_reports", "interview_dates",
)


def _mcq(i: int, topic: str, difficulty: int = 1) -> Question:
    return Question(
        id=f"t-mcq-{i}", bank="test", kind=Kind.MCQ, topic=topic, difficulty=difficulty,
        prompt=f"Test question {i}?", choices=[f"right {i}", f"wrong a{i}", f"wrong b{i}", f"wrong c{i}"],
        answer=f"right {i}", explanation=f"Because {i} is right.",
        code=[Snippet(code=f"print({i})")],
    )


def make_library() -> Library:
    topics = ["tensors", "autograd", "optimization"]
    questions = [_mcq(i, topics[i % 3], 1 + i % 3) for i in range(12)]
    questions += [
        Question(
            id=f"t-card-{i}", bank="test", kind=Kind.FLASHCARD, topic="autograd", difficulty=2,
            prompt=f"Flashcard {i}?", answer=f"Answer {i}.", explanation=f"Key point {i}.",
        )
        for i in range(3)
    ]
    return Library(banks=[Bank(id="test", title="Test bank", path=Path("test.yaml"), questions=questions)])


@pytest.fixture
def library() -> Library:
    return make_library()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))  # a Wednesday


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    _in_thread(migrate, f"sqlite+aiosqlite:///{path}")
    return path


async def _pg_available() -> bool:
    try:
        db = Database(PG_ADMIN_URL)
        async with db.engine.connect():
            pass
        await db.dispose()
        return True
    except Exception:
        return False


def _in_thread(fn, *args):
    """Run blocking/asyncio.run code from fixtures that may be inside a running loop."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test session, dropped at the end."""
    if not _in_thread(asyncio.run, _pg_available()):
        if REQUIRE_SERVICES:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_ADMIN_URL}")
        pytest.skip("PostgreSQL not reachable at 127.0.0.1:5432")
    name = f"torchdrill_t_{uuid.uuid4().hex[:10]}"

    async def admin(sql: str) -> None:
        db = Database(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        async with db.engine.connect() as conn:
            await conn.exec_driver_sql(sql)
        await db.dispose()

    _in_thread(asyncio.run, admin(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    _in_thread(migrate, url)
    yield url
    _in_thread(asyncio.run, admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> AsyncIterator[Database]:
    """The same tests run on both databases."""
    if request.param == "sqlite":
        path = tmp_path / "test.db"
        shutil.copy(sqlite_template, path)
        database = Database(f"sqlite+aiosqlite:///{path}")
    else:
        url = request.getfixturevalue("pg_url")
        database = Database(url)
        async with database.engine.begin() as conn:
            await conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    yield database
    await database.dispose()


@pytest.fixture
def drill(db: Database, library: Library, clock: FakeClock) -> Drill:
    import random

    return build_drill(db, library, clock, rng=random.Random(7))


class RecordingPublisher:
    """A Publisher that remembers what the core posted (used to test the core without a chat)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, object, str | None]] = []
        self.updates: list[tuple[str, object]] = []

    async def publish(self, where, message, *, thread_of=None) -> str:
        ref = f"m{len(self.posts) + 1}"
        self.posts.append((ref, message, thread_of))
        return ref

    async def update(self, where, ref, message) -> None:
        self.updates.append((ref, message))


@pytest.fixture
def publisher() -> RecordingPublisher:
    return RecordingPublisher()
