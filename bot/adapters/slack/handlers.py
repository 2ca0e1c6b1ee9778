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
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.slack.blocks import render
from bot.adapters.slack.home import Viewers, home_view
from bot.adapters.slack.publisher import Ref, parse_ref
from bot.adapters.slack.workspaces import NotInstalledError, SlackClients, WorkspacePublisher
from bot.core.commands import replies
from bot.core.commands.catalogue import Command, Option, OptionType
from bot.core.commands.dispatch import Caller, CodeForm, Pending
from bot.core.commands.grammar import OptionError, resolve
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big
from bot.core.domain.forms import Form, FormField
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, Upload

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
ASK_SHORTCUT_ID = "td-ask-question"
CODE_BLOCK_ID = "code"
CODE_ACTION_ID = "code"
SLACK_INPUT_LIMIT = 3000  # plain_text_input max_length
TITLE_LIMIT = 24  # a modal's title and submit label
SELECT_TEXT_LIMIT = 75  # a static_select option's text and description
HOME_CHANNEL_PAGES = 5  # users.conversations pages read for the Home tab (200 channels each)
HOME_CHANNELS_TTL_S = 300.0  # how long a member's channel list is reused
HOME_CHANNELS_CACHED = 10_000  # members whose channel lists are kept

_FENCED = re.compile(r"```(.*?)```", re.DOTALL)
_LANG_LINE = re.compile(r"(?:python|py|python3|pycon|text|console|bash|sh)?\n", re.IGNORECASE)

Respond = Callable[..., Awaitable[Any]]


def why_failed(exc: SlackApiError | NotInstalledError) -> str:
    """One line for the log: Slack's error code, or why the workspace has no token
    (a NotInstalledError has no ``response``)."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return str(exc)


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


def form_block(option: Option, initial: str | None = None) -> dict[str, Any]:
    """One catalogue option as a Block Kit input (file, menu or text box), a text box
    pre-filled with ``initial`` (plain text: Slack renders nothing in an input)."""
    label = {"type": "plain_text", "text": option.name.capitalize()}
    hint = {"type": "plain_text", "text": option.description.replace("{workspace}", WORDS.workspace)[:150]}
    element: dict[str, Any]
    if option.type is OptionType.FILE:
        element = {"type": "file_input", "action_id": option.name, "max_files": 1,
                   "filetypes": ["yaml", "yml", "csv", "txt", "md", "text"]}
    elif option.choices:
        element = {"type": "static_select", "action_id": option.name, "options": [
            {"text": {"type": "plain_text", "text": c.value}, "value": c.value} for c in option.choices]}
    else:
        element = {"type": "plain_text_input", "action_id": option.name, "multiline": option.multiline}
        if option.max_length:
            element["max_length"] = min(option.max_length, SLACK_INPUT_LIMIT)
        if initial:
            element["initial_value"] = initial[:element.get("max_length", SLACK_INPUT_LIMIT)]
    return {"type": "input", "block_id": option.name, "label": label, "hint": hint, "element": element,
            "optional": not option.required}


def field_block(field: FormField) -> dict[str, Any]:
    """One field of a core ``Form`` as a Block Kit input: a static_select where it has choices,
    a plain_text_input otherwise (capped at the field's max_length)."""
    element: dict[str, Any]
    if field.choices:
        element = {"type": "static_select", "action_id": field.name, "options": [
            {"text": {"type": "plain_text", "text": c.label[:SELECT_TEXT_LIMIT]}, "value": c.value,
             **({"description": {"type": "plain_text", "text": c.description[:SELECT_TEXT_LIMIT]}}
                if c.description else {})}
            for c in field.choices]}
    else:
        element = {"type": "plain_text_input", "action_id": field.name, "multiline": field.multiline,
                   "max_length": min(field.max_length or SLACK_INPUT_LIMIT, SLACK_INPUT_LIMIT)}
    block = {"type": "input", "block_id": field.name, "label": {"type": "plain_text", "text": field.label},
             "element": element, "optional": not field.required}
    if field.hint:
        block["hint"] = {"type": "plain_text", "text": field.hint}
    return block


def form_view(form: Form, where: Where) -> dict[str, Any]:
    """A core ``Form`` as a modal; its fixed values and the channel travel in private_metadata."""
    meta = {"channel": where.channel_id, "name": where.name, "team": where.workspace, "path": list(form.path),
            "fixed": dict(form.fixed)}
    return {
        "type": "modal", "callback_id": FORM_MODAL_ID,
        "external_id": f"{FORM_MODAL_ID}-{form.key}-{uuid.uuid4().hex}",
        "private_metadata": json.dumps(meta),
        "title": {"type": "plain_text", "text": form.title[:TITLE_LIMIT]},
        "submit": {"type": "plain_text", "text": form.submit[:TITLE_LIMIT]},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [field_block(f) for f in form.fields],
    }


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
            log.warning("could not delete a refused /run acknowledgement: %s", why_failed(exc))


class Handlers:
    def __init__(self, app: App, clients: SlackClients, publisher: CoalescingPublisher) -> None:
        self.app = app
        self.clients = clients  # every Web API call goes out with its workspace's token
        self.publisher = publisher
        self.home_viewers = Viewers()
        self._channels: dict[tuple[str, str], tuple[float, set[str]]] = {}  # (team, user) -> (at, ids)

    # ---- App Home ------------------------------------------------------------------------
    async def channels_of(self, who: Who) -> set[str] | None:
        """The channels the member is in (users.conversations); None when Slack will not say
        (a missing scope), and the dashboard then shows every channel with a daily question.
        Kept HOME_CHANNELS_TTL_S per member: a burst of answers asks Slack once (tier 3)."""
        key = (who.workspace, who.user_id)
        cached = self._channels.get(key)
        if cached is not None and time.monotonic() - cached[0] < HOME_CHANNELS_TTL_S:
            return cached[1]
        found: set[str] = set()
        cursor: str | None = None
        try:
            client = await self.client(who.workspace)
            for _ in range(HOME_CHANNEL_PAGES):
                page = await client.users_conversations(
                    user=who.user_id, types="public_channel,private_channel", exclude_archived=True,
                    limit=200, cursor=cursor)
                found.update(str(c["id"]) for c in page.get("channels") or [])
                cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
                if not cursor:
                    break
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("users.conversations failed (%s); the Home tab lists every channel",
                        why_failed(exc))
            return None
        if len(self._channels) >= HOME_CHANNELS_CACHED:
            self._channels.clear()
        self._channels[key] = (time.monotonic(), found)
        return found

    async def publish_home(self, who: Who) -> None:
        """Build the member's dashboard in the core and publish it as their Home tab."""
        try:
            dashboard = await self.app.commands.services.home.dashboard(
                who, is_admin=await self.is_admin(who), channels=await self.channels_of(who),
                words=WORDS)
            client = await self.client(who.workspace)
            await client.views_publish(user_id=who.user_id, view=home_view(dashboard))
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("views.publish failed for %s: %s", who.user_id, why_failed(exc))
        except Exception:
            log.exception("the Home tab of %s could not be built", who.user_id)

    async def on_home_opened(self, team: str, event: dict[str, Any]) -> None:
        if event.get("tab") != "home" or not event.get("user"):
            return
        self.home_viewers.add(team, str(event["user"]))
        await self.publish_home(Who(PLATFORM, team, str(event["user"])))

    async def on_home_action(self, body: dict[str, Any]) -> None:
        """A dashboard button: the answer comes in the member's DMs with the bot (a Home tab
        has no channel), then the dashboard is published again."""
        who = who_of(body)
        action_id = body["actions"][0]["action_id"]
        try:
            outcome = await self.app.commands.press(who, action_id)
        except Exception:
            log.exception("home button %s failed", action_id)
            outcome = None
        message = outcome.reply if outcome is not None else replies.notice(replies.SORRY)
        try:
            await self.publisher.tell(who, message)
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("could not send a Home tab answer to %s: %s", who.user_id, why_failed(exc))
        await self.publish_home(who)

    async def refresh_home(self, who: Who) -> None:
        """After an answer: the dashboard of a member who has it open changes."""
        if (who.workspace, who.user_id) in self.home_viewers:
            await self.publish_home(who)

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
            slack = self.publisher.inner
            assert isinstance(slack, WorkspacePublisher)  # SlackAdapter wraps one; uploads are Slack's own
            await slack.upload_to(who.workspace, channel, message)
        except (SlackApiError, NotInstalledError) as exc:
            log.warning("could not attach %d file(s): %s", len(message.attachments), why_failed(exc))

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
            log.warning("users.info failed (%s); treating %s as a member", why_failed(exc), user_id)
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
            caller = await self.caller(body, needs_admin=bool(
                command and command.may_need_admin(body.get("text", ""))))
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
        await self.reply(respond, message, public=command is not None and command.public_reply,
                         who=who_of(body), where=where_of(body))

    async def command(self, name: str, body: dict[str, Any], respond: Respond) -> None:
        await self.finish(name, await self.prepare(name, body), body, respond)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, body: dict[str, Any], respond: Respond) -> None:
        if (body.get("view") or {}).get("type") == "home":
            await self.on_home_action(body)
            return
        who = who_of(body)
        if await self.on_message_action(body, respond):
            await self.refresh_home(who)  # after the public count: the answer changed it

    async def on_message_action(self, body: dict[str, Any], respond: Respond) -> bool:
        """A button on a message; True when it recorded an answer."""
        who, where = who_of(body), where_of(body)
        action_id = body["actions"][0]["action_id"]
        form = self.app.commands.form_of(action_id)
        if form is not None:  # e.g. 🚩: a modal, opened while the click's trigger_id is valid (3 s)
            await self.open_view(body, respond, form_view(form, where))
            return False
        try:
            outcome = await self.app.commands.press(who, action_id)
        except Exception:
            log.exception("button %s failed", action_id)
            await self.tell(who, where, replies.notice(replies.SORRY), respond)
            return False
        await self.tell(who, where, outcome.reply, respond)
        container = body.get("container") or {}
        if outcome.public is None or container.get("is_ephemeral"):
            return outcome.recorded
        ref = outcome.platform_ref
        if ref is None and body.get("message"):
            ref = str(Ref(where.channel_id, body["message"]["ts"]))
        if ref is None:
            return outcome.recorded
        try:
            await self.publisher.refresh(where, ref, outcome.public)
        except SlackApiError:  # e.g. the message was deleted; the answer still counts
            log.warning("could not refresh the answer count of %s", ref, exc_info=True)
        return outcome.recorded

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
                        path: tuple[str, ...], initial: dict[str, str] | None = None) -> None:
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
            "blocks": [form_block(o, (initial or {}).get(o.name)) for o in leaf.options],
        }
        await self.open_view(body, respond, view)

    async def on_ask_shortcut(self, body: dict[str, Any], respond: Respond) -> None:
        """"Ask as a question" (admins): the message's text fills the /suggest form. Slack
        sends the text with &, < and > escaped; the box shows what the member typed."""
        caller = await self.caller(body, needs_admin=True)
        draft = self.app.commands.question_form(caller, html.unescape(body["message"].get("text", "")))
        if isinstance(draft, Message):
            await self.reply(respond, draft)
            return
        leaf = self.app.commands.command("suggest")
        assert leaf is not None  # the catalogue's
        await self.open_form(body, respond, leaf, ("suggest",), draft)

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
            values = {**(meta.get("fixed") or {}),
                      **await self.form_values(body["view"]["state"]["values"], who.workspace)}
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
        runner = self.app.commands.services.runner
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
