"""What happens on each Slack request: acknowledge at once, ask the core, reply.

Slack allows 3 s to acknowledge. Every listener calls ``ack()`` before any database or Web API
work; bolt then answers Slack's HTTP request (or Socket Mode envelope) while the listener
carries on. Replies to commands go through the command's ``response_url`` (works in any
channel, even where the bot is not a member); answer feedback goes through chat.postEphemeral.
Nothing here decides scoring or eligibility, except who may manage the daily question.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.background import BackgroundTasks
from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.slack import args as parse
from bot.adapters.slack.blocks import render
from bot.adapters.slack.publisher import Ref
from bot.core import render as core_render
from bot.core.help import help_message
from bot.core.identity import Where, Who
from bot.core.messages import Message, truncate
from bot.core.runs import clean_code

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)

PLATFORM = "slack"
HELP_COMMAND = "drill-help"
SORRY = "Something went wrong on my side; please try again in a moment."
ADMIN_ONLY = "Only workspace admins (or the bot's configured admins) can change the daily question."
NO_RUNNER = "The code runner is not available on this deployment."
NOT_IN_CHANNEL = "I cannot post in that channel. Invite me first: `/invite @torchdrill`."
RUN_MODAL_ID = "td-run"
RUN_SHORTCUT_ID = "td-run-code"
CODE_BLOCK_ID = "code"
CODE_ACTION_ID = "code"
SLACK_INPUT_LIMIT = 3000  # plain_text_input max_length
RUN_CODE_PREVIEW = 1000

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


def submitted_code(body: dict[str, Any]) -> str:
    values = body["view"]["state"]["values"]
    return values.get(CODE_BLOCK_ID, {}).get(CODE_ACTION_ID, {}).get("value") or ""


class Handlers:
    def __init__(self, app: App, client: AsyncWebClient, publisher: CoalescingPublisher) -> None:
        self.app = app
        self.client = client
        self.publisher = publisher
        self.tasks = BackgroundTasks()

    # ---- replies -------------------------------------------------------------------------
    async def reply(self, respond: Respond, message: Message, *, public: bool = False) -> None:
        kind = "in_channel" if public and not message.ephemeral else "ephemeral"
        await respond(response_type=kind, replace_original=False, **render(message))

    async def answer(
        self, respond: Respond, work: Callable[[], Awaitable[Message]], *, public: bool = False
    ) -> None:
        """Run ``work`` (a core call) after the ack; a failure becomes a polite notice."""
        try:
            message = await work()
        except parse.ArgError as exc:
            message = core_render.notice(str(exc))
        except Exception:
            log.exception("slack command failed")
            message = core_render.notice(SORRY)
        await self.reply(respond, message, public=public)

    async def tell(self, who: Who, where: Where, message: Message, respond: Respond) -> None:
        """Private feedback in the channel; via the response_url where the bot is not a member."""
        try:
            await self.client.chat_postEphemeral(
                channel=where.channel_id, user=who.user_id, **render(message)
            )
        except SlackApiError as exc:
            log.info("chat.postEphemeral failed (%s); using the response_url", exc.response.get("error"))
            await self.reply(respond, message)

    # ---- slash commands ------------------------------------------------------------------
    async def help(self, body: dict[str, Any], respond: Respond) -> None:
        await self.reply(respond, help_message("/", HELP_COMMAND))

    async def quiz(self, body: dict[str, Any], respond: Respond) -> None:
        async def work() -> Message:
            a = parse.quiz_args(body.get("text", ""))
            return await self.app.drill.quiz(
                who_of(body), topic=a.topic, count=a.count, difficulty=a.difficulty
            )

        await self.answer(respond, work)

    async def review(self, body: dict[str, Any], respond: Respond) -> None:
        async def work() -> Message:
            count = parse.review_count(body.get("text", ""))
            return await self.app.drill.review(who_of(body), count=count)

        await self.answer(respond, work)

    async def stats(self, body: dict[str, Any], respond: Respond) -> None:
        await self.answer(respond, lambda: self.app.drill.stats(who_of(body), where_of(body)))

    async def leaderboard(self, body: dict[str, Any], respond: Respond) -> None:
        async def work() -> Message:
            a = parse.leaderboard_args(body.get("text", ""))
            return await self.app.drill.leaderboard(
                who_of(body), where_of(body), scope=a.scope, period=a.period, group=a.group
            )

        await self.answer(respond, work, public=True)

    async def group(self, body: dict[str, Any], respond: Respond) -> None:
        action, name = parse.group_args(body.get("text", ""))
        await self.answer(respond, lambda: self.app.drill.group(who_of(body), action, name))

    async def round(self, body: dict[str, Any], respond: Respond) -> None:
        async def work() -> Message:
            a = parse.round_args(body.get("text", ""))
            where = where_of(body)
            started = await self.app.drill.start_round(
                where, who_of(body), count=a.count, seconds=a.seconds, topic=a.topic
            )
            if isinstance(started, Message):
                return started
            self.background(
                self.app.drill.play_round(started, where, self.publisher), f"round {started}"
            )
            return core_render.notice(
                f"Round started: {a.count} question(s), {a.seconds} s each. Good luck!"
            )

        await self.answer(respond, work)

    # ---- /daily --------------------------------------------------------------------------
    async def is_admin(self, user_id: str) -> bool:
        """Workspace admins/owners (users.info), or members listed in SLACK_ADMIN_USER_IDS."""
        if user_id in self.app.settings.slack_admin_user_ids:
            return True
        info = await self.client.users_info(user=user_id)
        user = info.get("user") or {}
        return bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))

    async def daily(self, body: dict[str, Any], respond: Respond) -> None:
        async def work() -> Message:
            if not await self.is_admin(body["user_id"]):
                return core_render.notice(ADMIN_ONLY)
            a = parse.daily_args(body.get("text", ""))
            where, daily = where_of(body), self.app.daily
            if a.sub == "schedule":
                assert a.time is not None
                return await daily.set_schedule(
                    where, at=a.time, timezone=a.timezone, weekdays=a.weekdays, topic=a.topic,
                    reveal_after_hours=a.reveal_after_hours,
                )
            if a.sub in ("pause", "resume"):
                return await daily.set_paused(where, a.sub == "pause")
            if a.sub == "now":
                return await daily.post_now(where)
            return await daily.status(where)

        await self.answer(respond, work)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, body: dict[str, Any], respond: Respond) -> None:
        who, where = who_of(body), where_of(body)
        action_id = body["actions"][0]["action_id"]
        try:
            outcome = await self.app.drill.handle_action(who, action_id)
        except Exception:
            log.exception("button %s failed", action_id)
            await self.tell(who, where, core_render.notice(SORRY), respond)
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

    # ---- /run ----------------------------------------------------------------------------
    def run_modal(self, where: Where, initial: str) -> dict[str, Any]:
        """The channel travels in private_metadata: view submissions carry no channel."""
        limit = min(self.app.settings.runner_max_code_bytes, SLACK_INPUT_LIMIT)
        element: dict[str, Any] = {
            "type": "plain_text_input",
            "action_id": CODE_ACTION_ID,
            "multiline": True,
            "max_length": limit,
            "placeholder": {"type": "plain_text", "text": "print(torch.ones(2, 3) @ torch.ones(3, 2))"},
        }
        if initial:
            element["initial_value"] = initial[:limit]
        meta = {"channel": where.channel_id, "name": where.name, "team": where.workspace}
        return {
            "type": "modal",
            "callback_id": RUN_MODAL_ID,
            "private_metadata": json.dumps(meta),
            "title": {"type": "plain_text", "text": "Run a PyTorch snippet"},
            "submit": {"type": "plain_text", "text": "Run"},
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

    async def open_run_modal(self, body: dict[str, Any], respond: Respond) -> None:
        if self.app.runs is None:
            await self.reply(respond, core_render.notice(NO_RUNNER))
            return
        view = self.run_modal(where_of(body), parse.code_from_slack(body.get("text", "")))
        try:
            await self.client.views_open(trigger_id=body["trigger_id"], view=view)
        except SlackApiError as exc:  # e.g. the trigger expired (Slack allows 3 s)
            log.warning("views.open failed: %s", exc.response.get("error"))
            await self.reply(respond, core_render.notice(SORRY))

    async def on_run_submitted(self, body: dict[str, Any]) -> None:
        meta = json.loads(body["view"].get("private_metadata") or "{}")
        who = who_of(body)
        where = Where(PLATFORM, meta.get("team") or who.workspace, meta["channel"], meta.get("name"))
        await self.run_code(who, where, submitted_code(body), thread_of=None, respond=None)

    async def on_run_shortcut(self, body: dict[str, Any], respond: Respond) -> None:
        """Run the code of a message; the acknowledgement and output go into its thread."""
        message = body["message"]
        where = where_of(body)
        ref = Ref(where.channel_id, message["ts"], message.get("thread_ts"))
        code = parse.code_from_slack(message.get("text", ""))
        await self.run_code(who_of(body), where, code, thread_of=str(ref), respond=respond)

    async def run_code(
        self, who: Who, where: Where, code: str, *, thread_of: str | None, respond: Respond | None
    ) -> None:
        """Post a public acknowledgement (its thread receives the result), then submit."""

        async def private(message: Message) -> None:
            if respond is not None:
                await self.tell(who, where, message, respond)
                return
            try:  # from a modal there is no response_url: a DM from the bot
                await self.client.chat_postMessage(channel=who.user_id, **render(message))
            except SlackApiError:
                log.warning("could not tell %s privately", who.user_id, exc_info=True)

        runs = self.app.runs
        if runs is None:
            await private(core_render.notice(NO_RUNNER))
            return
        if not clean_code(code).strip():
            await private(core_render.notice("There is no code to run. Paste a snippet or a ```python block."))
            return
        ack = Message(title=f"/run by {who.display_name or who.user_id}")
        ack.code(truncate(clean_code(code), RUN_CODE_PREVIEW, "# … (cut here)")[0])
        try:
            ref = await self.publisher.publish(where, ack, thread_of=thread_of)
        except SlackApiError as exc:
            log.info("could not post the /run acknowledgement: %s", exc.response.get("error"))
            await private(core_render.notice(NOT_IN_CHANNEL))
            return
        try:
            status = await runs.submit(who, where, code, thread_of=ref)
        except Exception:
            log.exception("/run submission failed")
            status = core_render.notice(SORRY)
        if status.ephemeral:  # refused: nothing will arrive in the thread, say so privately
            await private(status)
            return
        ack.blocks.extend(status.blocks)
        await self.publisher.update(where, ref, ack)

    def background(self, work: Awaitable[object], name: str) -> None:
        self.tasks.spawn(work, name)

    async def cancel_background(self) -> None:
        await self.tasks.cancel_all()
