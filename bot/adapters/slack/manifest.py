"""The Slack app manifest: paste it at api.slack.com/apps → "Create New App" → "From a manifest".

Slack learns an app's slash commands, shortcuts and scopes only from its configuration, so the
manifest is generated from the core's command catalogue, the same table the listeners are
registered from; a command cannot be served without being declared, or declared without
being served.
"""

from __future__ import annotations

from typing import Any

from bot.adapters.slack.handlers import RUN_SHORTCUT_ID, WORDS
from bot.adapters.slack.listeners import served_commands

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
]


def manifest(
    name: str = "torchdrill", request_url: str | None = None
) -> dict[str, Any]:
    """Socket Mode without ``request_url``; HTTP mode points everything at ``request_url``."""
    commands = []
    for name, command in served_commands().items():
        description = command.description.replace("{workspace}", WORDS.workspace)
        entry: dict[str, Any] = {"command": name, "description": description,
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
    return {
        "display_information": {"name": name, "description": "Daily PyTorch interview drills"},
        "features": {
            "bot_user": {"display_name": name, "always_online": True},
            "slash_commands": commands,
            "shortcuts": [{"name": "Run code", "type": "message", "callback_id": RUN_SHORTCUT_ID,
                           "description": "Run this message's code block in the sandbox"}],
        },
        "oauth_config": {"scopes": {"bot": BOT_SCOPES}},
        "settings": {
            "interactivity": interactivity,
            "org_deploy_enabled": False,
            "socket_mode_enabled": request_url is None,
        },
    }
