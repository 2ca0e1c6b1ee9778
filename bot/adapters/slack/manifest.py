"""The Slack app manifest: paste it at api.slack.com/apps → "Create New App" → "From a manifest".

Slack learns an app's slash commands, shortcuts and scopes only from its configuration, so the
manifest is generated from the core's command catalogue, the same table the listeners are
registered from; a command cannot be served without being declared, or declared without
being served.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bot.adapters.slack.handlers import ASK_SHORTCUT_ID, RUN_SHORTCUT_ID, WORDS
from bot.adapters.slack.install_pages import REDIRECT_PATH
from bot.adapters.slack.listeners import served_commands

EVENTS_PATH = "/slack/events"  # commands, interactivity and events share it in HTTP mode
UNINSTALL_EVENTS = ["app_uninstalled", "tokens_revoked"]  # tokens forgotten, posts stopped
HOME_EVENTS = ["app_home_opened"]  # the member's dashboard is published when they open it

BOT_SCOPES = [
    "commands",  # slash commands and shortcuts
    "chat:write",  # questions, reveals, /run output
    "chat:write.public",  # post in public channels without being invited
    "users:read",  # /daily admin check (users.info)
    "files:write",  # full /run output and charts as files
    "files:read",  # /bank upload and /bank import: the file an admin attaches in the form
    "im:write",  # private charts (/stats) go to the member's direct messages with the bot
    "channels:history",  # before re-sending a daily post, look whether it already landed
    "groups:history",  # the same in private channels
    "channels:read",  # the Home tab lists today's question of the channels a member is in
    "groups:read",  # the same for private channels (users.conversations)
]


class ManifestError(ValueError):
    pass


def events_url(url: str) -> str:
    """``https://host`` → ``https://host/slack/events``; a URL with a path stays as given."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ManifestError(f"--url must be https://<host>[/slack/events], not {url!r}")
    return url if parts.path.strip("/") else f"{parts.scheme}://{parts.netloc}{EVENTS_PATH}"


def manifest(
    name: str = "torchdrill", request_url: str | None = None, *, distributed: bool = False
) -> dict[str, Any]:
    """Socket Mode without ``request_url``; HTTP mode points everything at ``request_url``.

    ``distributed``: installable in many workspaces through OAuth ("Add to Slack"): Slack
    sends installs back to ``/slack/oauth_redirect`` and tells the app when it is removed.
    """
    if distributed and not request_url:
        raise ManifestError("--distributed needs --url https://<host>: Slack sends installs "
                            f"back to https://<host>{REDIRECT_PATH}")
    if request_url:
        request_url = events_url(request_url)
    commands = []
    for slash, command in served_commands().items():
        description = command.description.replace("{workspace}", WORDS.workspace)
        entry: dict[str, Any] = {"command": slash, "description": description,
                                 "should_escape": False}
        hint = command.usage().partition(" ")[2].replace("{workspace}", WORDS.workspace)
        if hint:
            entry["usage_hint"] = hint
        if request_url:
            entry["url"] = request_url
        commands.append(entry)
    interactivity: dict[str, Any] = {"is_enabled": True}
    if request_url:
        interactivity["request_url"] = request_url
    oauth: dict[str, Any] = {"scopes": {"bot": BOT_SCOPES}}
    settings: dict[str, Any] = {
        "interactivity": interactivity,
        "org_deploy_enabled": False,
        "socket_mode_enabled": request_url is None,
    }
    events: dict[str, Any] = {"bot_events": list(HOME_EVENTS)}
    if request_url:
        events = {"request_url": request_url, **events}
    if distributed and request_url:
        parts = urlsplit(request_url)
        oauth["redirect_urls"] = [f"{parts.scheme}://{parts.netloc}{REDIRECT_PATH}"]
        events["bot_events"] = [*UNINSTALL_EVENTS, *HOME_EVENTS]
        settings["token_rotation_enabled"] = False  # bot tokens do not expire
    settings["event_subscriptions"] = events
    return {
        "display_information": {"name": name, "description": "Daily PyTorch interview drills"},
        "features": {
            "bot_user": {"display_name": name, "always_online": True},
            "app_home": {"home_tab_enabled": True, "messages_tab_enabled": True,
                         "messages_tab_read_only_enabled": False},
            "slash_commands": commands,
            "shortcuts": [{"name": "Run code", "type": "message", "callback_id": RUN_SHORTCUT_ID,
                           "description": "Run this message's code block in the sandbox"},
                          {"name": "Ask as a question", "type": "message", "callback_id": ASK_SHORTCUT_ID,
                           "description": "Admins: turn this message into a draft /suggest"}],
        },
        "oauth_config": oauth,
        "settings": settings,
    }
