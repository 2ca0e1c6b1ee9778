"""Bolt listener registration: every listener acks first, then hands the payload to Handlers.

Command names are the ones the app manifest declares (``manifest.py``); Slack reserves
``/help``, so help is ``/drill-help``. Buttons route by the core's action-id pattern.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.adapters.slack.handlers import (
    CODE_BLOCK_ID,
    HELP_COMMAND,
    RUN_MODAL_ID,
    RUN_SHORTCUT_ID,
    Handlers,
    Respond,
    submitted_code,
)
from bot.core.actions import ACTION_PATTERN
from bot.core.runs import clean_code

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
CommandHandler = Callable[[dict[str, Any], Respond], Awaitable[None]]


# Slash command → Handlers method; manifest.py declares the same names to Slack.
COMMANDS: dict[str, str] = {
    "/quiz": "quiz",
    "/review": "review",
    "/round": "round",
    "/stats": "stats",
    "/leaderboard": "leaderboard",
    "/group": "group",
    "/daily": "daily",
    "/run": "open_run_modal",
    f"/{HELP_COMMAND}": "help",
}


def _command_listener(handler: CommandHandler) -> Callable[..., Awaitable[None]]:
    async def listener(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await handler(body, respond)

    return listener


def register(bolt: AsyncApp, h: Handlers) -> None:
    for name, method in COMMANDS.items():
        bolt.command(name)(_command_listener(getattr(h, method)))

    @bolt.action(re.compile(f"^{ACTION_PATTERN}$"))
    async def on_action(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.on_action(body, respond)

    @bolt.view_submission(RUN_MODAL_ID)
    async def on_run_submitted(ack: Ack, body: dict[str, Any]) -> None:
        if not clean_code(submitted_code(body)).strip():  # keep the modal open, say why
            await ack(response_action="errors", errors={CODE_BLOCK_ID: "Paste some code to run."})
            return
        await ack()
        await h.on_run_submitted(body)

    @bolt.shortcut(RUN_SHORTCUT_ID)
    async def on_run_shortcut(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.on_run_shortcut(body, respond)

    @bolt.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("slack listener failed (%s)", body.get("type") or body.get("command"), exc_info=error)
