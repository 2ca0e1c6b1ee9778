"""The Slack adapter: a slack-bolt AsyncApp wired to the core, in Socket Mode or HTTP mode.

Socket Mode (default) needs no public URL, only an app-level token. HTTP mode serves
``POST /slack/events`` (commands, interactivity and shortcuts share that URL; bolt verifies
the v0 signature and rejects stale timestamps) plus the health routes on the same port, so
it can sit behind a load balancer with several replicas.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from aiohttp import web
from pydantic import SecretStr
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.slack.handlers import PLATFORM, Handlers
from bot.adapters.slack.listeners import register
from bot.adapters.slack.publisher import SlackPublisher
from bot.config import ConfigError, Settings, SlackMode

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
RATE_LIMIT_RETRIES = 2


class SlackConfigError(ConfigError):
    pass


def _secret(value: SecretStr | None, name: str, why: str) -> str:
    text = value.get_secret_value().strip() if value is not None else ""
    if not text:
        raise SlackConfigError(f"{name} is not set ({why})")
    return text


def make_client(settings: Settings) -> AsyncWebClient:
    """Web API client on SLACK_API_BASE_URL (a REST proxy, or a fake in tests); retries 429s."""
    base = settings.slack_api_base_url
    return AsyncWebClient(
        token=_secret(settings.slack_bot_token, "SLACK_BOT_TOKEN", "the bot token, xoxb-…"),
        base_url=base if base.endswith("/") else base + "/",
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)],
    )


class SlackAdapter:
    platform = PLATFORM

    def __init__(self, app: App) -> None:
        settings = app.settings
        self.app = app
        self.mode = settings.slack_mode
        self.serves_http = self.mode is SlackMode.HTTP
        if self.serves_http:
            signing_secret = _secret(
                settings.slack_signing_secret, "SLACK_SIGNING_SECRET", "needed in HTTP mode"
            )
            self.app_token = None
        else:
            signing_secret = ""
            self.app_token = _secret(
                settings.slack_app_token, "SLACK_APP_TOKEN", "needed in Socket Mode, xapp-…"
            )
        self.client = make_client(settings)
        self.bolt = AsyncApp(
            client=self.client,
            signing_secret=signing_secret,
            request_verification_enabled=self.serves_http,
            name="torchdrill",
            # bolt names its logger after the app and sets its level; without our own logger
            # that would be "torchdrill", the parent of every torchdrill.* logger of ours
            logger=logging.getLogger("slack_bolt.AsyncApp"),
        )
        self.publisher = CoalescingPublisher(SlackPublisher(self.client))
        self.handlers = Handlers(app, self.client, self.publisher)
        register(self.bolt, self.handlers)
        self.http: web.AppRunner | None = None
        self.socket: AsyncSocketModeHandler | None = None
        self._stopped = asyncio.Event()

    # ---- HTTP mode -----------------------------------------------------------------------
    async def on_events(self, request: web.Request) -> web.Response:
        response = await self.bolt.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    def web_app(self) -> web.Application:
        from bot.observability.health import add_health_routes

        web_app = web.Application()
        web_app.router.add_post(EVENTS_PATH, self.on_events)
        add_health_routes(web_app, self.app.health_checks())  # type: ignore[arg-type]
        return web_app

    @property
    def port(self) -> int:
        """The port HTTP mode listens on (useful with HTTP_PORT=0)."""
        if self.http is None:
            raise RuntimeError("the Slack adapter is not serving HTTP")
        return int(self.http.addresses[0][1])

    # ---- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Serve HTTP or connect Socket Mode; the publisher works from construction on."""
        settings = self.app.settings
        if self.serves_http:
            from bot.observability.health import start_http

            self.http = await start_http(self.web_app(), settings.http_host, settings.http_port)
            log.info("slack HTTP mode listening", extra={"port": self.port, "path": EVENTS_PATH})
            return
        self.socket = AsyncSocketModeHandler(self.bolt, self.app_token, web_client=self.client)
        await self.socket.connect_async()
        log.info("slack socket mode connected")

    async def run_forever(self) -> None:
        await self._stopped.wait()

    async def close(self) -> None:
        self._stopped.set()
        await self.publisher.flush()  # the last answer counts reach the messages
        if self.socket is not None:
            await self.socket.close_async()
            self.socket = None
        if self.http is not None:
            await self.http.cleanup()
            self.http = None
