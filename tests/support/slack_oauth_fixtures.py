"""Fixtures for Slack OAuth installs: one deployment in HTTP mode with SLACK_CLIENT_ID (no bot
token), a browser that walks "Add to Slack", and per-workspace senders.

Registered once in tests/conftest.py; the fixture names (``oauth_fake``, ``oauth_app``, ...) are
their own, so a module needs no marker for them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import pytest
from cryptography.fernet import Fernet

from bot.adapters.slack.app import EVENTS_PATH, SlackAdapter
from bot.adapters.slack.install_pages import INSTALL_PATH, REDIRECT_PATH
from bot.app import App, build_app
from bot.config import Settings, SlackMode
from bot.core.domain.clock import FakeClock
from tests.support.fake_slack import FakeSlack, SlackSender, User
from tests.support.slack_fixtures import SIGNING_SECRET

TOKEN_KEY = Fernet.generate_key().decode()
STATE_SECRET = "state-secret-for-tests-0123456789"
STATE_COOKIE = "slack-app-oauth-state"
ANN = User("U1ANN", "ann", admin=True, team="T1")
BEN = User("U1BEN", "ben", team="T1")
EVE = User("U2EVE", "eve", admin=True, team="T2")
DAN = User("U2DAN", "dan", team="T2")
WORKSPACES = {"T1": ("One Corp", "C1DRILLS"), "T2": ("Two Labs", "C2DRILLS")}


def oauth_settings(fake: FakeSlack, database_url: str, **extra: object) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret,
        slack_state_secret=STATE_SECRET,
        slack_token_key=TOKEN_KEY,
        slack_signing_secret=SIGNING_SECRET,
        slack_mode=SlackMode.HTTP,
        slack_api_base_url=fake.api_base_url,
        http_host="127.0.0.1",
        http_port=0,
        **extra,  # type: ignore[arg-type]
    )


@dataclass
class Browser:
    """A person clicking "Add to Slack", then "Allow" on Slack's consent screen."""

    base: str  # http://127.0.0.1:<port>
    fake: FakeSlack

    async def get(self, path: str, cookie: str | None = None) -> tuple[int, str, dict[str, str]]:
        headers = {"Cookie": f"{STATE_COOKIE}={cookie}"} if cookie else {}
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session, \
                session.get(self.base + path, headers=headers, allow_redirects=False) as response:
            cookies = {name: morsel.value for name, morsel in response.cookies.items()}
            return response.status, await response.text(), cookies

    async def start(self) -> tuple[str, str]:
        """GET /slack/install: (the state in the "Add to Slack" link, the state cookie)."""
        status, page, cookies = await self.get(INSTALL_PATH)
        assert status == 200, page
        [link] = re.findall(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', page)
        query = parse_qs(urlsplit(link.replace("&amp;", "&")).query)
        assert query["client_id"] == [self.fake.client_id]
        assert "chat:write" in query["scope"][0].split(",")
        return query["state"][0], cookies[STATE_COOKIE]

    async def come_back(self, query: dict[str, str], cookie: str | None) -> tuple[int, str]:
        status, page, _ = await self.get(f"{REDIRECT_PATH}?{urlencode(query)}", cookie)
        return status, page

    async def install(self, team: str) -> tuple[int, str]:
        state, cookie = await self.start()
        code = self.fake.issue_code(team, WORKSPACES[team][0])
        return await self.come_back({"code": code, "state": state}, cookie)


@pytest.fixture(name="oauth_fake")
async def oauth_fake_fixture() -> AsyncIterator[FakeSlack]:
    server = FakeSlack()
    for user in (ANN, BEN, EVE, DAN):
        server.users[user.id] = user
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(name="oauth_app")
async def oauth_app_fixture(
    oauth_fake: FakeSlack, tmp_path: Path, sqlite_template: Path, slack_clock: FakeClock
) -> AsyncIterator[App]:
    path = tmp_path / "slack-oauth.db"
    shutil.copy(sqlite_template, path)
    built = await build_app(oauth_settings(oauth_fake, f"sqlite+aiosqlite:///{path}"),
                            clock=slack_clock, with_runner=False)
    yield built
    await built.db.dispose()


@pytest.fixture(name="oauth_adapter")
async def oauth_adapter_fixture(oauth_app: App) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(oauth_app)
    oauth_app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    yield adapter
    await adapter.close()


@pytest.fixture(name="browser")
def browser_fixture(oauth_fake: FakeSlack, oauth_adapter: SlackAdapter) -> Browser:
    return Browser(f"http://127.0.0.1:{oauth_adapter.port}", oauth_fake)


def sender(fake: FakeSlack, adapter_or_port: SlackAdapter | int, team: str) -> SlackSender:
    port = adapter_or_port if isinstance(adapter_or_port, int) else adapter_or_port.port
    return SlackSender(fake, f"http://127.0.0.1:{port}{EVENTS_PATH}", SIGNING_SECRET,
                       team_id=team, channel_id=WORKSPACES[team][1])
