"""The OAuth side of a many-workspace deployment: bolt's install flow on our stores, the pages
at its end, and the events that say a workspace removed the bot.

``GET /slack/install`` issues a signed, single-use state (and its browser cookie) and shows
"Add to Slack"; Slack's consent screen sends the person to ``GET /slack/oauth_redirect``, where
bolt checks the state, exchanges the code (``oauth.v2.access``) and saves the installation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.oauth.async_callback_options import (
    AsyncCallbackOptions,
    AsyncFailureArgs,
    AsyncSuccessArgs,
)
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.adapters.slack import install_pages, installs
from bot.adapters.slack.handlers import PLATFORM
from bot.adapters.slack.manifest import BOT_SCOPES
from bot.config import Settings
from bot.core.drill.installs import stop_workspace
from bot.storage.workspaces import StoredWorkspaces

if TYPE_CHECKING:
    from bot.core.daily.service import DailyPosting

log = logging.getLogger(__name__)
BOLT_LOG = logging.getLogger("slack_bolt.oauth")


class OAuthInstalls:
    def __init__(self, settings: Settings, daily: DailyPosting, serves_http: bool) -> None:
        if settings.slack_bot_token:
            raise installs.InstallConfigError(
                "set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID (OAuth installs, many "
                "workspaces), not both")
        if not serves_http:
            raise installs.InstallConfigError(
                "SLACK_CLIENT_ID (OAuth installs) needs SLACK_MODE=http: Slack sends installs "
                "back to /slack/oauth_redirect")
        self.settings = settings
        self.daily = daily
        self.client_secret = installs.required(settings.slack_client_secret, "SLACK_CLIENT_SECRET",
                                               "needed for OAuth installs")
        self.store = installs.installation_store(settings, daily.db)
        self.states = installs.state_store(settings, daily.db)
        self.workspaces = StoredWorkspaces(daily.db)  # bot.core.drill.installs' WorkspaceStore

    def bolt_settings(self) -> AsyncOAuthSettings:
        oauth = AsyncOAuthSettings(
            client_id=self.settings.slack_client_id,
            client_secret=self.client_secret,
            scopes=BOT_SCOPES,
            redirect_uri=self.settings.slack_redirect_uri,
            install_path=install_pages.INSTALL_PATH,
            redirect_uri_path=install_pages.REDIRECT_PATH,
            installation_store=self.store,
            installation_store_bot_only=True,
            state_store=self.states,
            state_expiration_seconds=installs.STATE_EXPIRATION_S,
            callback_options=AsyncCallbackOptions(success=self._installed, failure=self._not_installed),
            logger=BOLT_LOG,
        )
        # Each request still reads its workspace's token from the store (an uninstall through
        # another replica counts at once); only bolt's auth.test of a known token is cached,
        # which would otherwise cost a Slack round trip before every acknowledgement.
        oauth.authorize = AsyncInstallationStoreAuthorize(
            logger=BOLT_LOG, client_id=self.settings.slack_client_id,
            client_secret=self.client_secret, installation_store=self.store, bot_only=True,
            cache_enabled=True,
        )
        return oauth

    # ---- the pages -----------------------------------------------------------------------
    @staticmethod
    def _page(status: int, html: str, args: AsyncSuccessArgs | AsyncFailureArgs) -> BoltResponse:
        return BoltResponse(status=status, body=html, headers={
            "Content-Type": "text/html; charset=utf-8",
            "Set-Cookie": [args.settings.state_utils.build_set_cookie_for_deletion()],
        })

    async def _installed(self, args: AsyncSuccessArgs) -> BoltResponse:
        installation = args.installation
        log.info("slack workspace installed", extra={"team": installation.team_id})
        return self._page(200, install_pages.installed_page(installation.team_name), args)

    async def _not_installed(self, args: AsyncFailureArgs) -> BoltResponse:
        log.warning("slack install failed: %s", args.reason)
        return self._page(*install_pages.failed_page(args.reason), args)

    def add_routes(self, web_app: web.Application, bolt: AsyncApp) -> None:
        flow = bolt.oauth_flow
        assert flow is not None

        async def on_request(request: web.Request) -> web.Response:
            """``/slack/install`` and ``/slack/oauth_redirect``; never a 500."""
            bolt_request = AsyncBoltRequest(
                body="", query=request.query_string, headers=request.headers  # type: ignore[arg-type]  # a multidict; bolt reads it as a mapping
            )
            try:
                if request.path == install_pages.INSTALL_PATH:
                    response = await flow.handle_installation(bolt_request)
                else:
                    response = await flow.handle_callback(bolt_request)
            except Exception:
                log.exception("slack OAuth request failed")
                status, html = install_pages.failed_page("storage_error")
                return web.Response(status=status, text=html, content_type="text/html")
            return await to_aiohttp_response(response)

        web_app.router.add_get(install_pages.INSTALL_PATH, on_request)
        web_app.router.add_get(install_pages.REDIRECT_PATH, on_request)

    # ---- removal -------------------------------------------------------------------------
    async def forget(self, team: str | None, why: str) -> None:
        """The workspace's tokens go, its schedules stop; its data stays (purge deletes it)."""
        if not team:
            return
        await self.store.async_delete_all(enterprise_id=None, team_id=team)
        stopped = await stop_workspace(self.workspaces, self.daily, PLATFORM, team)
        log.info("slack workspace removed the bot", extra={
            "team": team, "event": why, "schedules_stopped": stopped})

    def register(self, bolt: AsyncApp) -> None:
        """``app_uninstalled`` and ``tokens_revoked`` (of the bot token) forget the workspace."""

        @bolt.event("app_uninstalled")
        async def on_uninstalled(ack: Callable[..., Any], context: dict[str, Any]) -> None:
            await ack()
            await self.forget(context.get("team_id"), "app_uninstalled")

        @bolt.event("tokens_revoked")
        async def on_revoked(ack: Callable[..., Any], event: dict[str, Any],
                             context: dict[str, Any]) -> None:
            await ack()
            tokens = event.get("tokens") or {}
            team = context.get("team_id")
            for user_id in tokens.get("oauth") or []:
                await self.store.async_delete_installation(enterprise_id=None, team_id=team,
                                                           user_id=user_id)
            if tokens.get("bot"):
                await self.forget(team, "tokens_revoked")
