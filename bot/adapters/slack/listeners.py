"""Bolt listener registration: every listener acks first, then hands the payload to Handlers.

Every command of the core's catalogue is served under the name the manifest declares
(``manifest.py``; Slack reserves ``/help``, so help is ``/drill-help``). Buttons route by the
core's action-id pattern.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.adapters.slack.handlers import (
    ASK_SHORTCUT_ID,
    CODE_BLOCK_ID,
    FORM_MODAL_ID,
    RUN_MODAL_ID,
    RUN_SHORTCUT_ID,
    WORDS,
    Handlers,
    Respond,
    submitted_code,
)
from bot.core.commands import replies
from bot.core.commands.catalogue import COMMANDS, Command
from bot.core.domain.actions import ACTION_PATTERN
from bot.core.runs.desk import clean_code

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
PRE_ACK_BUDGET_S = 1.5  # of the 3 s Slack allows for the acknowledgement


def slack_name(command: Command) -> str:
    """The slash command Slack knows: the catalogue name, or its Slack rename (help)."""
    return WORDS.command(command.name)


def served_commands() -> dict[str, Command]:
    return {slack_name(c): c for c in COMMANDS.commands}


def _command_listener(h: Handlers, command: Command) -> Callable[..., Awaitable[None]]:
    async def listener(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        if command.code_input and not command.takes_words(str(body.get("text", ""))):
            await ack()
            await h.open_run_modal(body, respond, command.name)
            return
        form = h.form_leaf(command, str(body.get("text", "")))
        if form is not None:
            await ack()
            await h.open_form(body, respond, *form)
            return
        # The durable first step (a /daily now claim) before the ack, unless Slack's own API
        # (the admin lookup) is slow: the ack never waits past PRE_ACK_BUDGET_S.
        preparing = asyncio.ensure_future(h.prepare(command.name, body))
        await asyncio.wait({preparing}, timeout=PRE_ACK_BUDGET_S)
        await ack()
        await h.finish(command.name, await preparing, body, respond)

    return listener


def register(bolt: AsyncApp, h: Handlers) -> None:
    for name, command in served_commands().items():
        bolt.command(name)(_command_listener(h, command))

    @bolt.command(re.compile(r"^/.+"))  # registered last: only commands we do not serve
    async def on_unknown_command(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.command(str(body.get("command", "")), body, respond)

    @bolt.action(re.compile(f"^{ACTION_PATTERN}$"))
    async def on_action(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.on_action(body, respond)

    @bolt.event("app_home_opened")
    async def on_home_opened(ack: Ack, event: dict[str, Any], context: dict[str, Any]) -> None:
        await ack()
        await h.on_home_opened(str(context.get("team_id") or ""), event)

    @bolt.view_submission(RUN_MODAL_ID)
    async def on_run_submitted(ack: Ack, body: dict[str, Any]) -> None:
        if not clean_code(submitted_code(body)).strip():  # keep the modal open, say why
            await ack(response_action="errors", errors={CODE_BLOCK_ID: replies.PASTE_SOME_CODE})
            return
        await ack()
        await h.on_run_submitted(body)

    @bolt.view_submission(FORM_MODAL_ID)
    async def on_form_submitted(ack: Ack, body: dict[str, Any]) -> None:
        await ack()
        await h.on_form_submitted(body)

    @bolt.shortcut(ASK_SHORTCUT_ID)
    async def on_ask_shortcut(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.on_ask_shortcut(body, respond)

    @bolt.shortcut(RUN_SHORTCUT_ID)
    async def on_run_shortcut(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        await ack()
        await h.on_run_shortcut(body, respond)

    @bolt.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("slack listener failed (%s)", body.get("type") or body.get("command"), exc_info=error)
