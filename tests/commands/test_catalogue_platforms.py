"""Table-driven from the catalogue: every out-of-range option gets the same refusal on every
platform, sent the way that platform sends it (Slack text, console text, Discord options)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.console.play import ConsoleAdapter
from bot.adapters.console.screen import Screen
from bot.app import App, build_app
from bot.config import Settings
from bot.storage.db import migrate
from tests.support.catalogue_cases import CASES, OutOfRange
from tests.support.console_fixtures import Term
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]

IDS = [case.id for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_slack_refuses_out_of_range_with_the_core_message(
    case: OutOfRange, fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    status, _ = await slack.command(f"/{case.path[0]}", ALICE, case.text())
    assert status == 200
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral"
    assert case.refusal in text_of(reply.data)


@pytest.fixture
def console_db(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"
    migrate(url)  # sync: runs its own event loop
    return url


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_console_refuses_out_of_range_with_the_core_message(
    case: OutOfRange, console_db: str, tmp_path: Path
) -> None:
    url = console_db
    app = await build_app(Settings(database_url=url), with_runner=False)
    term = Term()
    try:
        console = ConsoleAdapter(app, name="ana", screen=Screen(term.console), files_dir=tmp_path)
        await console.handle(f"{case.path[0]} {case.text()}")
        assert case.refusal in " ".join(term.take().split())
    finally:
        await app.close()


async def test_slack_unknown_command_names_help(fake: FakeSlack, slack: SlackSender) -> None:
    status, _ = await slack.command("/nosuch", ALICE, "x")
    assert status == 200
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral"
    assert "I don't know /nosuch — try /drill-help." in text_of(reply.data)
