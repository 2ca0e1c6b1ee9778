"""Slack payloads → core requests, core messages → Slack responses.

Slack allows 3 s to acknowledge. Every listener calls ``ack()`` before any database or Web API
work; bolt then answers Slack's HTTP request (or Socket Mode envelope) while the listener
carries on. Replies to commands go through the command's ``response_url`` (works in any
channel, even where the bot is not a member); answer feedback goes through chat.postEphemeral.
The only facts supplied here are Slack's: who, where, whether the member is a workspace admin.
"""

from __future__ import annotations

import html
import json
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.slack.blocks import render
from bot.adapters.slack.publisher import Ref, parse_ref
from bot.adapters.slack.workspaces import NotInstalledError, SlackClients
from bot.core.commands import replies
from bot.core.commands.catalogue import Command, Option, OptionType
from bot.core.commands.dispatch import Caller, CodeForm, Pending
from bot.core.commands.grammar import OptionError, resolve
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message, Upload

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

PLATFORM = "slack"
HELP_COMMAND = "drill-help"  # Slack reserves /help
WORDS = replies.Words(
    workspace="workspace", admins="workspace admins (or the bot's configured admins)",
    renames={"help": HELP_COMMAND}, invite="Invite me first: `/invite @torchdrill`.",
)
RUN_MODAL_ID = "td-run"
FORM_MODAL_ID = "td-form"
RUN_SHORTCUT_ID = "td-run-code"
CODE_BLOCK_ID = "code"
CODE_ACTION_ID = "code"
SLACK_INPUT_LIMIT = 3000  # plain_text_input max_length

_FENCED = re.compile(r"```(.*?)```", re.DOTALL)
_LANG_LINE = re.compile(r"(?:python|py|python3|pycon|text|console|bash|sh)?\n", re.IGNORECASE)

Respond = Callable[..., Awaitable[Any]]


def who_of(body: dict[str, Any]) -> Who:
    """Slash commands are flat (``user_id``); interactive payloads nest (``user.id``)."""
    if "user_id" in body:
        return Who(PLATFORM, body["team_id"], body["user_id"], body.get("user_name", ""))
    user = body["user"]
    team = (body.get("team") or {}).get("id") or user.get("team_id", "")
    return Who(PLATFORM, team, user["id"], user.get("username") or user.get("name", ""))


def where_of(body: dict[str, Any]) -> Where:
    if "channel_id" in body:
        return Where(PLATFORM, body["team_id"], body["channel_id"], body.get("channel_name"))
    channel = body.get("channel") or {}
    team = (body.get("team") or {}).get("id") or body["user"].get("team_id", "")
    return Where(PLATFORM, team, channel["id"], channel.get("name"))


class FileRefusedError(ValueError):
    """A file refused before or while downloading; the message is for the member."""


def form_block(option: Option) -> dict[str, Any]:
    """One catalogue option as a Block Kit input (file, menu or text box)."""
    label = {"type": "plain_text", "text": option.name.capitalize()}
    hint = {"type": "plain_text", "text": option.description.replace("{workspace}", WORDS.workspace)[:150]}
    element: dict[str, Any]
    if option.type is OptionType.FILE:
        element = {"type": "file_input", "action_id": option.name, "max_files": 1,
                   "filetypes": ["yaml", "yml", "txt", "md", "text"]}
    elif option.choices:
        element = {"type": "static_select", "action_id": option.name, "options": [
            {"text": {"type": "plain_text", "text": c.value}, "value": c.value} for c in option.choices]}
    else:
        element = {"type": "plain_text_input", "action_id": option.name, "multiline": option.multiline}
        if option.max_length:
            element["max_length"] = min(option.max_length, SLACK_INPUT_LIMIT)
    return {"type": "input", "block_id": option.name, "label": label, "hint": hint, "element": element,
            "optional": not option.required}


def submitted_from(body: dict[str, Any]) -> tuple[Who, Where, dict[str, Any]]:
    """Who submitted a modal and the channel it was opened in (its private_metadata):
    view submissions carry no channel of their own."""
    meta = json.loads(body["view"].get("private_metadata") or "{}")
    who = who_of(body)
    return who, Where(PLATFORM, meta.get("team") or who.workspace, meta["channel"], meta.get("name")), meta


def submitted_code(body: dict[str, Any]) -> str:
    values = body["view"]["state"]["values"]
    return values.get(CODE_BLOCK_ID, {}).get(CODE_ACTION_ID, {}).get("value") or ""


def code_from_slack(text: str) -> str:
    """Slack escapes &, <, > in message text and writes ```code``` without a newline."""

    def fence(match: re.Match[str]) -> str:
        inner = match.group(1)
        if _LANG_LINE.match(inner):
            return match.group(0)
        return "```\n" + inner.strip("\n") + "\n```"

    return _FENCED.sub(fence, html.unescape(text or ""))


class _ChannelAck:
    """The /run acknowledgement is a bot message; the result goes into its thread."""

    def __init__(self, handlers: Handlers, where: Where, thread_of: str | None) -> None:
        self.h, self.where, self.thread_of = handlers, where, thread_of

    async def post(self, ack: Message) -> str | None:
        try:
            return await self.h.publisher.publish(self.where, ack, thread_of=self.thread_of)
        except SlackApiError as exc:
            log.info("could not post the /run acknowledgement: %s", exc.response.get("error"))
            return None

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        await self.h.publisher.update(self.where, ref, ack)

    async def retract(self, ref: str) -> None:
        parsed = parse_ref(ref)
        try:
            client = await self.h.clients.client_for(self.where.workspace)
            await client.chat_delete(channel=parsed.channel, ts=parsed.ts)
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("could not delete a refused /run acknowledgement: %s", exc.response.get("error"))


class Handlers:
    def __init__(self, app: App, clients: SlackClients, publisher: CoalescingPublisher) -> None:
        self.app = app
        self.clients = clients  # every Web API call goes out with its workspace's token
        self.publisher = publisher

    async def client(self, team: str) -> AsyncWebClient:
        return await self.clients.client_for(team)

    # ---- replies -------------------------------------------------------------------------
    async def reply(
        self, respond: Respond, message: Message, *, public: bool = False,
        who: Who | None = None, where: Where | None = None,
    ) -> None:
        kind = "in_channel" if public and not message.ephemeral else "ephemeral"
        try:
            await respond(response_type=kind, replace_original=False, **render(message))
        except Exception as exc:  # the response_url is gone or Slack kept failing
            log.warning("could not reply through the response_url: %s: %s", type(exc).__name__, exc)
            return
        if message.attachments and who is not None:
            await self.attach(message, who, where if kind == "in_channel" else None)

    async def attach(self, message: Message, who: Who, where: Where | None) -> None:
        """A response_url cannot carry files: public ones go to the channel, private ones to
        the member's direct messages with the bot."""
        try:
            if where is None:
                opened = await (await self.client(who.workspace)).conversations_open(users=who.user_id)
                channel = str(opened["channel"]["id"])
            else:
                channel = where.channel_id
            await self.publisher.inner.upload_to(who.workspace, channel, message)  # type: ignore[attr-defined]
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("could not attach %d file(s): %s", len(message.attachments), exc.response.get("error"))

    async def tell(self, who: Who, where: Where, message: Message, respond: Respond | None) -> None:
        """Private feedback in the channel; else via the response_url, else a DM."""
        try:
            client = await self.client(who.workspace)
        except NotInstalledError:
            log.warning("cannot tell %s anything: its workspace is not installed", who.user_id)
            return
        try:
            await client.chat_postEphemeral(
                channel=where.channel_id, user=who.user_id, **render(message)
            )
            return
        except SlackApiError as exc:
            log.info("chat.postEphemeral failed (%s)", exc.response.get("error"))
        if respond is not None:
            await self.reply(respond, message)
            return
        try:
            await client.chat_postMessage(channel=who.user_id, **render(message))
        except SlackApiError:
            log.warning("could not tell %s privately", who.user_id, exc_info=True)

    async def is_admin(self, who: Who) -> bool:
        """Admins/owners of the member's own workspace (users.info with that workspace's
        token), or members listed in SLACK_ADMIN_USER_IDS."""
        user_id = who.user_id
        if user_id in self.app.settings.slack_admin_user_ids:
            return True
        try:
            info = await (await self.client(who.workspace)).users_info(user=user_id)
        except (SlackApiError, NotInstalledError) as exc:
            error = exc.response.get("error") if isinstance(exc, SlackApiError) else str(exc)
            log.warning("users.info failed (%s); treating %s as a member", error, user_id)
            return False
        user = info.get("user") or {}
        return bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))

    async def caller(self, body: dict[str, Any], *, needs_admin: bool) -> Caller:
        admin = await self.is_admin(who_of(body)) if needs_admin else False
        return Caller(who_of(body), where_of(body), admin, WORDS)

    # ---- slash commands ------------------------------------------------------------------
    async def prepare(self, name: str, body: dict[str, Any]) -> Pending:
        """Before the ack: the core parses and checks, and records what must survive a crash."""
        commands = self.app.commands
        command = commands.command(name.lstrip("/"))
        try:
            caller = await self.caller(body, needs_admin=bool(command and (
                command.admin_only or any(s.admin_only for s in command.subcommands))))
            return await commands.prepare_text(caller, name, body.get("text", ""))
        except Exception:
            log.exception("slack command failed", extra={"command": name})
            return Pending.done(replies.notice(replies.SORRY))

    async def finish(self, name: str, pending: Pending, body: dict[str, Any], respond: Respond) -> None:
        """After the ack: the core runs the command and words the reply."""
        command = self.app.commands.command(name.lstrip("/"))
        try:
            message = await pending.finish()
        except Exception:
            log.exception("slack command failed", extra={"command": name})
            message = replies.notice(replies.SORRY)
        await self.reply(respond, message, public=command is not None and not command.private,
                         who=who_of(body), where=where_of(body))

    async def command(self, name: str, body: dict[str, Any], respond: Respond) -> None:
        await self.finish(name, await self.prepare(name, body), body, respond)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, body: dict[str, Any], respond: Respond) -> None:
        who, where = who_of(body), where_of(body)
        action_id = body["actions"][0]["action_id"]
        try:
            outcome = await self.app.commands.press(who, action_id)
        except Exception:
            log.exception("button %s failed", action_id)
            await self.tell(who, where, replies.notice(replies.SORRY), respond)
            return
        await self.tell(who, where, outcome.reply, respond)
        container = body.get("container") or {}
        if outcome.public is None or container.get("is_ephemeral"):
            return
        ref = outcome.platform_ref
        if ref is None and body.get("message"):
            ref = str(Ref(where.channel_id, body["message"]["ts"]))
        if ref is None:
            return
        try:
            await self.publisher.refresh(where, ref, outcome.public)
        except SlackApiError:  # e.g. the message was deleted; the answer still counts
            log.warning("could not refresh the answer count of %s", ref, exc_info=True)

    # ---- forms: /suggest, and commands that take a file (/bank upload, /bank import) ------
    def form_leaf(self, command: Command, text: str) -> tuple[Command, tuple[str, ...]] | None:
        """The leaf this slash command text names, when it must be asked for in a form."""
        try:
            leaf, path, _ = resolve(command, text.split())
        except OptionError:
            return None
        if any(o.type is OptionType.FILE for o in leaf.options):
            return leaf, path  # a slash command cannot carry a file
        if leaf.form_input and not text.strip():
            return leaf, path  # typed options (name:value) work as for any command
        return None

    async def open_form(self, body: dict[str, Any], respond: Respond, leaf: Command,
                        path: tuple[str, ...]) -> None:
        caller = await self.caller(body, needs_admin=self.app.commands.catalogue.admin_only(path))
        refusal = self.app.commands.refusal_of(caller, path)
        if refusal is not None:
            await self.reply(respond, refusal)
            return
        where = where_of(body)
        meta = {"channel": where.channel_id, "name": where.name, "team": where.workspace, "path": list(path)}
        view = {
            "type": "modal", "callback_id": FORM_MODAL_ID,
            "external_id": f"{FORM_MODAL_ID}-{uuid.uuid4().hex}",
            "private_metadata": json.dumps(meta),
            "title": {"type": "plain_text", "text": f"/{' '.join(path)}"[:24]},
            "submit": {"type": "plain_text", "text": "Send"},
            "close": {"type": "plain_text", "text": "Cancel"},
            "blocks": [form_block(o) for o in leaf.options],
        }
        await self.open_view(body, respond, view)

    async def open_view(self, body: dict[str, Any], respond: Respond, view: dict[str, Any]) -> None:
        try:
            client = await self.client(who_of(body).workspace)
            await client.views_open(trigger_id=body["trigger_id"], view=view)
        except (SlackApiError, NotInstalledError) as exc:  # e.g. the trigger expired (3 s)
            log.warning("views.open failed: %s", exc)
            await self.reply(respond, replies.notice(replies.SORRY))

    async def on_form_submitted(self, body: dict[str, Any]) -> None:
        who, where, meta = submitted_from(body)
        path = tuple(meta.get("path") or ())
        try:
            values = await self.form_values(body["view"]["state"]["values"], who.workspace)
            admin = await self.is_admin(who) if self.app.commands.catalogue.admin_only(path) else False
            message = await self.app.commands.execute_values(Caller(who, where, admin, WORDS), path, values)
        except FileRefusedError as exc:
            message = replies.notice(str(exc))
        except Exception:
            log.exception("slack form failed", extra={"command": " ".join(path)})
            message = replies.notice(replies.SORRY)
        await self.tell(who, where, message, None)
        if message.attachments:
            await self.attach(message, who, None)

    async def form_values(self, state: dict[str, Any], team: str) -> dict[str, object]:
        values: dict[str, object] = {}
        for name, actions in state.items():
            value = actions.get(name) or {}
            kind = value.get("type")
            if kind == "file_input":
                files = value.get("files") or []
                if files:
                    values[name] = await self.download(files[0], team)
            elif kind == "static_select":
                selected = value.get("selected_option")
                if selected:
                    values[name] = selected["value"]
            elif value.get("value"):
                values[name] = value["value"]
        return values

    async def download(self, file: dict[str, Any], team: str) -> Upload:
        """A file from a file_input, fetched with the bot token (never over the size cap)."""
        size = int(file.get("size") or 0)
        if size > MAX_UPLOAD_BYTES:
            raise FileRefusedError(too_big(size))
        url = file.get("url_private_download") or file.get("url_private")
        if not url:
            raise FileRefusedError("Slack did not share that file with me; upload it again.")
        headers = {"Authorization": f"Bearer {(await self.client(team)).token}"}
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url, headers=headers) as got:
            if got.status != 200:
                raise FileRefusedError(f"I could not download {file.get('name', 'the file')} "
                                       f"(Slack answered {got.status}).")
            data = await got.content.read(MAX_UPLOAD_BYTES + 1)
        if len(data) > MAX_UPLOAD_BYTES:
            raise FileRefusedError(too_big(len(data)))
        return Upload(str(file.get("name") or "upload.yaml"), data)

    # ---- /run ----------------------------------------------------------------------------
    def run_modal(self, where: Where, initial: str, command: str = "run",
                  form: CodeForm | None = None) -> dict[str, Any]:
        """The channel travels in private_metadata: view submissions carry no channel.

        Each opened modal has its own external_id, so two members' modals never collide.
        """
        form = form or CodeForm("Run a PyTorch snippet", "Run")
        limit = min(form.max_chars or self.app.settings.runner_max_code_bytes, SLACK_INPUT_LIMIT)
        element: dict[str, Any] = {
            "type": "plain_text_input",
            "action_id": CODE_ACTION_ID,
            "multiline": True,
            "max_length": limit,
            "placeholder": {"type": "plain_text", "text": "print(torch.ones(2, 3) @ torch.ones(3, 2))"},
        }
        if initial:
            element["initial_value"] = initial[:limit]
        meta = {"channel": where.channel_id, "name": where.name, "team": where.workspace,
                "command": command}
        return {
            "type": "modal",
            "callback_id": RUN_MODAL_ID,
            "external_id": f"{RUN_MODAL_ID}-{uuid.uuid4().hex}",
            "private_metadata": json.dumps(meta),
            "title": {"type": "plain_text", "text": form.title},
            "submit": {"type": "plain_text", "text": form.submit_label},
            "close": {"type": "plain_text", "text": "Cancel"},
            "blocks": [
                {
                    "type": "input",
                    "block_id": CODE_BLOCK_ID,
                    "label": {"type": "plain_text", "text": "Code"},
                    "element": element,
                }
            ],
        }

    async def open_run_modal(self, body: dict[str, Any], respond: Respond, command: str = "run") -> None:
        runner = self.app.commands.runner
        if runner.desk() is None:
            await self.reply(respond, replies.notice(runner.unavailable()))
            return
        form = await self.app.commands.code_form(Caller(who_of(body), where_of(body), False, WORDS), command)
        if isinstance(form, Message):
            await self.reply(respond, form)
            return
        view = self.run_modal(where_of(body), code_from_slack(body.get("text", "")) or form.initial,
                              command, form)
        await self.open_view(body, respond, view)

    async def on_run_submitted(self, body: dict[str, Any]) -> None:
        who, where, meta = submitted_from(body)
        await self.run_code(who, where, submitted_code(body), thread_of=None, respond=None,
                            command=str(meta.get("command", "run")))

    async def on_run_shortcut(self, body: dict[str, Any], respond: Respond) -> None:
        """Run the code of a message; the acknowledgement and output go into its thread."""
        message = body["message"]
        where = where_of(body)
        ref = Ref(where.channel_id, message["ts"], message.get("thread_ts"))
        code = code_from_slack(message.get("text", ""))
        await self.run_code(who_of(body), where, code, thread_of=str(ref), respond=respond)

    async def run_code(
        self, who: Who, where: Where, code: str, *, thread_of: str | None, respond: Respond | None,
        command: str = "run",
    ) -> None:
        caller = Caller(who, where, False, WORDS)
        try:
            private = await self.app.commands.submit_code(caller, command, code,
                                                          _ChannelAck(self, where, thread_of))
        except Exception:
            log.exception("/run failed")
            private = replies.notice(replies.SORRY)
        if private is not None:
            await self.tell(who, where, private, respond)
