"""Table-driven: the weekly options of /daily (digest, challenge) as an admin sends them on
Discord (slash options), Slack (slash text) and the console (text), each answered with the
same core text; a member who is not an admin is refused on Discord and Slack."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.console.play import ConsoleAdapter
from bot.adapters.console.screen import Screen
from bot.app import App, build_app
from bot.config import Settings
from bot.storage.db import migrate
from tests.support.console_fixtures import Term
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import FakeDiscord, User
from tests.support.fake_discord import text_of as discord_text
from tests.support.weekly_options import STEPS, _flat, _text

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

ADMIN = User(800_000_000_000_000_001, "alice")
MEMBER = User(800_000_000_000_000_002, "bob")


async def test_discord_admin_sets_and_stops_the_weekly_posts(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    for sub, options, expected in STEPS:
        token = await fake.slash("daily", ADMIN, admin=True, sub=sub, **options)
        assert expected in _flat(discord_text(await fake.original_of(token))), (sub, options)
    token = await fake.slash("daily", MEMBER, admin=False, sub="digest", day="mon", time="09:00")
    assert _flat(discord_text(await fake.original_of(token))) == \
        "Only members with the **Manage Server** permission can use /daily digest."


@pytest.fixture
def console_db(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"
    migrate(url)  # sync: runs its own event loop
    return url


async def test_console_sets_and_stops_the_weekly_posts(console_db: str, tmp_path: Path) -> None:
    app: App = await build_app(Settings(database_url=console_db), with_runner=False)
    term = Term()
    try:
        console = ConsoleAdapter(app, name="ana", screen=Screen(term.console), files_dir=tmp_path)
        for sub, options, expected in STEPS:
            await console.handle(f"daily {_text(sub, options)}")
            assert expected in _flat(term.take()), (sub, options)
    finally:
        await app.close()
