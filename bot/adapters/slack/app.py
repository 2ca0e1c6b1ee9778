"""The Slack adapter: a slack-bolt AsyncApp wired to the core, in Socket Mode or HTTP mode.

Socket Mode (default) needs no public URL, only an app-level token. HTTP mode serves
``POST /slack/events`` (commands, interactivity and shortcuts share that URL; bolt verifies
the v0 signature and rejects stale timestamps) plus the health routes on the same port, so
it can sit behind a load balancer with several replicas.

One workspace runs on SLACK_BOT_TOKEN. Many workspaces (HTTP mode, SLACK_CLIENT_ID and its
companions) install through OAuth: ``GET /slack/install`` → Slack's consent screen →
``GET /slack/oauth_redirect``; each workspace's token lives encrypted in our database
(installs.py) and every Web API call picks its workspace's token (workspaces.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import ClientOSError, ServerConnectionError, ServerDisconnectedError, web
from pydantic import SecretStr
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.handlers import PLATFORM, Handlers
from bot.adapters.slack.install_pages import NOT_INSTALLED
from bot.adapters.slack.listeners import register
from bot.adapters.slack.manifest import EVENTS_PATH
from bot.adapters.slack.oauth import OAuthInstalls
from bot.adapters.slack.workspaces import SlackClients, adapter_publisher
from bot.config import ConfigError, Settings, SlackMode

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 2  # 429: after Slack's Retry-After
SIGNATURE_MAX_AGE_S = 300
SERVER_ERROR_RETRIES = 2  # 500/503 and dropped connections: bounded exponential backoff


class SlackConfigError(ConfigError):
    pass


def _secret(value: SecretStr | None, name: str, why: str) -> str:
    text = value.get_secret_value().strip() if value is not None else ""
    if not text:
        raise SlackConfigError(f"{name} is not set ({why})")
    return text


def make_client(settings: Settings, token: str | None = None) -> AsyncWebClient:
    """Web API client on SLACK_API_BASE_URL (a REST proxy, or a fake in tests): posts, edits
    and replies retry 429s, 5xx, timeouts and dropped connections, a bounded number of times.

    ``token``: an installed workspace's; by default SLACK_BOT_TOKEN (one workspace); "" for
    the token-less client of OAuth mode (oauth.v2.access authenticates with the app's id)."""
    base = settings.slack_api_base_url
    if token is None:
        token = _secret(settings.slack_bot_token, "SLACK_BOT_TOKEN", "the bot token, xoxb-…")
    return AsyncWebClient(
        token=token or None,
        base_url=base if base.endswith("/") else base + "/",
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
            AsyncServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
            AsyncConnectionErrorRetryHandler(
                max_retry_count=SERVER_ERROR_RETRIES,
                error_types=[ServerConnectionError, ServerDisconnectedError, ClientOSError, TimeoutError],
            ),
        ],
    )


def signed(secret: bytes, raw: bytes, headers: Mapping[str, str], now: float) -> bool:
    """Slack's v0 signature over the exact bytes received, at most 5 minutes old."""
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not timestamp.isdigit() or abs(now - int(timestamp)) > SIGNATURE_MAX_AGE_S:
        return False
    base = b"v0:" + timestamp.encode() + b":" + raw
    expected = "v0=" + hmac.new(secret, base, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def _is_id_of(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


# Per interaction type, the fields bolt and our listeners read before acknowledging.
_SHAPES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "block_actions": lambda b: _is_id_of(b.get("user")) and isinstance(b.get("actions"), list)
    and bool(b["actions"]) and all(isinstance(a, dict) and isinstance(a.get("action_id"), str)
                                   for a in b["actions"]),
    "view_submission": lambda b: _is_id_of(b.get("user")) and isinstance(b.get("view"), dict)
    and isinstance(b["view"].get("callback_id"), str)
    and isinstance((b["view"].get("state") or {}).get("values"), dict),
    "view_closed": lambda b: _is_id_of(b.get("user")) and isinstance(b.get("view"), dict),
    "message_action": lambda b: _is_id_of(b.get("user")) and isinstance(b.get("callback_id"), str)
    and isinstance(b.get("message"), dict),
    "shortcut": lambda b: _is_id_of(b.get("user")) and isinstance(b.get("callback_id"), str),
    "event_callback": lambda b: isinstance(b.get("event"), dict)
    and isinstance(b["event"].get("type"), str),
    "url_verification": lambda b: isinstance(b.get("challenge"), str),
}
_COMMAND_FIELDS = ("command", "user_id", "team_id", "channel_id")


def shape_problem(body: Any) -> str | None:
    """What HTTP mode accepts: a slash command, or an interaction or event of a known shape."""
    if not isinstance(body, dict):
        return "the body is not an object"
    if "command" in body:
        missing = [f for f in _COMMAND_FIELDS if not isinstance(body.get(f), str) or not body[f]]
        return f"slash command without {', '.join(missing)}" if missing else None
    kind = body.get("type")
    if not isinstance(kind, str):
        return "neither a slash command nor a typed interaction or event"
    check = _SHAPES.get(kind)
    if check is None:
        return f"unsupported type {kind[:40]!r}"
    return None if check(body) else f"malformed {kind}"


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
        self.oauth = OAuthInstalls(settings, app.commands.services.daily, self.serves_http) \
            if settings.slack_oauth else None
        if self.oauth is not None:
            self.client = make_client(settings, token="")
            self.clients = SlackClients(lambda token: make_client(settings, token),
                                        self.oauth.store.bot_token)
        else:
            self.client = make_client(settings)
            self.clients = SlackClients.single(self.client)
        self.bolt = AsyncApp(
            client=self.client,
            signing_secret=signing_secret,
            request_verification_enabled=self.serves_http,
            name="torchdrill",
            # bolt names its logger after the app and sets its level; without our own logger
            # that would be "torchdrill", the parent of every torchdrill.* logger of ours
            logger=logging.getLogger("slack_bolt.AsyncApp"),
            oauth_settings=self.oauth.bolt_settings() if self.oauth else None,
            installation_store_bot_only=True if self.oauth else None,
            user_facing_authorize_error_message=NOT_INSTALLED,
        )
        self.publisher = adapter_publisher(self.clients)
        self.handlers = Handlers(app, self.clients, self.publisher)
        register(self.bolt, self.handlers)
        if self.oauth is not None:
            self.oauth.register(self.bolt)
        self.signing_secret = signing_secret.encode()
        self.http: web.AppRunner | None = None
        self.socket: AsyncSocketModeHandler | None = None
        self._stopped = asyncio.Event()

    # ---- HTTP mode -----------------------------------------------------------------------
    async def on_events(self, request: web.Request) -> web.Response:
        """Signature on the raw bytes first (401), then decode and check the shape (400)."""
        raw = await request.read()
        if not signed(self.signing_secret, raw, request.headers, time.time()):
            return web.Response(status=401, text="invalid or stale Slack signature")
        try:
            text = raw.decode("utf-8")
            problem = shape_problem(parse_body(text, request.content_type))
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError included
            problem = f"unreadable request body ({type(exc).__name__})"
        if problem:
            log.warning("signed Slack request refused: %s", problem)
            return web.Response(status=400, text=problem)
        bolt_request = AsyncBoltRequest(
            body=text, query=request.query_string, headers=request.headers  # type: ignore[arg-type]  # a multidict; bolt reads it as a mapping
        )
        response = await self.bolt.async_dispatch(bolt_request)
        return await to_aiohttp_response(response)

    def web_app(self) -> web.Application:
        from bot.observability.health import add_health_routes

        web_app = web.Application()
        web_app.router.add_post(EVENTS_PATH, self.on_events)
        if self.oauth is not None:
            self.oauth.add_routes(web_app, self.bolt)
        add_health_routes(web_app, self.app.health_checks())
        return web_app

    @property
    def port(self) -> int:
        """The port HTTP mode listens on (useful with HTTP_PORT=0)."""
        if self.http is None:
            raise RuntimeError("the Slack adapter is not serving HTTP")
        return int(self.http.addresses[0][1])

    # ---- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Serve HTTP or connect Socket Mode; the publisher works from construction on.

        One workspace's bot token is checked first (auth.test): an unreachable Slack or a
        refused token stops start-up with one line, where Socket Mode would retry for ever."""
        settings = self.app.settings
        if self.oauth is None:
            await self.client.auth_test()
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
