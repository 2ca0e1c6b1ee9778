"""Discord interactions → core requests, core messages → Discord responses.

Discord allows 3 s to acknowledge; every path defers before calling the core. The only facts
this module supplies are Discord's: who the member is, whether their permissions include
Manage Server (``is_admin``), and Discord's words ("server").
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

import discord

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.discord.publisher import make_ref
from bot.adapters.discord.render import render_message
from bot.adapters.discord.views import FormModal, OptionsModal, RunCodeModal
from bot.core.commands import replies
from bot.core.commands.catalogue import Command, user_installable
from bot.core.commands.dispatch import AckChannel, Caller, Pending
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big
from bot.core.domain.forms import Form
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, Upload
from bot.core.quizzes.personal import (
    PERSONAL_CODE_DELIVERY,
    channel_feature_refusal,
    personal_space,
)

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

PLATFORM = "discord"
WORDS = replies.Words(workspace="server", admins="members with the **Manage Server** permission")
SORRY = replies.SORRY


def in_server_with_bot(interaction: discord.Interaction) -> bool:
    """The server itself added torchdrill (not only the member, as their own app)."""
    return interaction.guild_id is not None and interaction.is_guild_integration()


def own_app_context(interaction: discord.Interaction) -> bool:
    """torchdrill is here only as the member's own app (a user install): a server that has
    not added the bot, or a group chat. Replies are private; nothing is posted in channels."""
    if interaction.guild_id is not None:
        return not interaction.is_guild_integration()
    return bool(interaction.context.private_channel)


def workspace_of(interaction: discord.Interaction) -> str:
    """A server that added the bot is its own community; everywhere else (DMs, servers
    without the bot) the member practises in their personal space: one progress."""
    if in_server_with_bot(interaction):
        return str(interaction.guild_id)
    return personal_space(str(interaction.user.id))


def who_of(interaction: discord.Interaction) -> Who:
    user = interaction.user
    return Who(PLATFORM, workspace_of(interaction), str(user.id), user.display_name)


def where_of(interaction: discord.Interaction) -> Where:
    name = getattr(interaction.channel, "name", None)
    return Where(PLATFORM, workspace_of(interaction), str(interaction.channel_id), name)


def caller_of(interaction: discord.Interaction) -> Caller:
    """Discord resolves the member's permissions in the channel into the payload."""
    where = where_of(interaction) if in_server_with_bot(interaction) else None
    admin = interaction.permissions.manage_guild and in_server_with_bot(interaction)
    return Caller(who_of(interaction), where, admin, WORDS)


def refusal_here(interaction: discord.Interaction, path: tuple[str, ...]) -> Message | None:
    """A channel feature asked for where torchdrill is only the member's own app."""
    if own_app_context(interaction) and not user_installable(path[0]):
        return channel_feature_refusal(WORDS, " ".join(path))
    return None


class FileRefusedError(ValueError):
    """An attachment refused before download; the message is the core's."""


class _ThreadAck:
    """The /run acknowledgement is the interaction's public response; its thread gets the result."""

    def __init__(self, interaction: discord.Interaction) -> None:
        self.interaction = interaction

    async def post(self, ack: Message) -> str | None:
        await Handlers.defer(self.interaction, ephemeral=False)
        sent = await self.interaction.edit_original_response(**render_message(ack).send_kwargs())
        return make_ref(self.interaction.channel_id or sent.channel.id, sent.id)

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        await self.interaction.edit_original_response(**render_message(ack).send_kwargs())

    async def retract(self, ref: str) -> None:
        await self.interaction.delete_original_response()


class _DirectAck:
    """Where the bot is not in the channel: the acknowledgement is a message in the member's
    DMs with the bot, and the output follows it there (bot.core.quizzes.personal)."""

    def __init__(self, handlers: Handlers, where: Where) -> None:
        self.h, self.where = handlers, where

    async def post(self, ack: Message) -> str | None:
        try:
            return await self.h.publisher.publish(self.where, ack)
        except discord.HTTPException as exc:
            log.info("could not post the private acknowledgement: %s", exc.status)
            return None

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        await self.h.publisher.update(self.where, ref, ack)

    async def retract(self, ref: str) -> None:
        await self.h.publisher.delete(self.where, ref)


class Handlers:
    def __init__(self, app: App, publisher: CoalescingPublisher) -> None:
        self.app = app
        self.publisher = publisher

    # ---- replies -------------------------------------------------------------------------
    @staticmethod
    async def defer(interaction: discord.Interaction, *, ephemeral: bool) -> None:
        if not interaction.response.is_done():
            await interaction.response.defer(ephemeral=ephemeral, thinking=True)

    async def reply(
        self, interaction: discord.Interaction, message: Message, *, deferred_ephemeral: bool
    ) -> None:
        """Fill the deferred response; a private notice after a public defer becomes a follow-up.

        A reply that finally fails (discord.py has retried 5xx and honoured 429) is logged with
        its reason: the member's action itself was recorded."""
        try:
            await self._reply(interaction, message, deferred_ephemeral=deferred_ephemeral)
        except discord.HTTPException as exc:
            log.warning("could not reply to the %s interaction: %s %s", _name(interaction), exc.status, exc.text)

    async def _reply(
        self, interaction: discord.Interaction, message: Message, *, deferred_ephemeral: bool
    ) -> None:
        rendered = render_message(message)
        if message.ephemeral and not deferred_ephemeral:
            if interaction.response.is_done():
                await interaction.delete_original_response()
            await self.private(interaction, message)
            return
        kwargs = rendered.send_kwargs()
        if "files" in kwargs:
            kwargs["attachments"] = kwargs.pop("files")
        await interaction.edit_original_response(**kwargs)

    async def private(self, interaction: discord.Interaction, message: Message) -> None:
        kwargs = render_message(message).send_kwargs()
        if interaction.response.is_done():
            await interaction.followup.send(ephemeral=True, **kwargs)
        else:
            await interaction.response.send_message(ephemeral=True, **kwargs)

    # ---- slash commands ------------------------------------------------------------------
    async def command(
        self, interaction: discord.Interaction, path: tuple[str, ...], values: dict[str, object]
    ) -> None:
        root = self.app.commands.command(path[0])
        refusal = refusal_here(interaction, path)
        if refusal is not None:
            await self.private(interaction, refusal)
            return
        public = root is not None and root.public_reply and not own_app_context(interaction)
        if any(isinstance(v, discord.Attachment) for v in values.values()):
            await self.defer(interaction, ephemeral=not public)  # a download may take a moment
            refusal = self.app.commands.refusal_of(caller_of(interaction), path)
            if refusal is not None:  # never fetch a file the member may not upload
                await self.reply(interaction, refusal, deferred_ephemeral=not public)
                return
            try:
                values = await self.read_files(values)
            except FileRefusedError as exc:
                await self.reply(interaction, replies.notice(str(exc)), deferred_ephemeral=not public)
                return
        try:  # the durable first step (a /daily now claim) before the acknowledgement
            pending = await self.app.commands.prepare_values(caller_of(interaction), path, values)
        except Exception:
            log.exception("discord command failed", extra={"command": " ".join(path)})
            pending = Pending.done(replies.notice(SORRY))
        await self.defer(interaction, ephemeral=not public)
        try:
            message = await pending.finish()
        except Exception:
            log.exception("discord command failed", extra={"command": " ".join(path)})
            message = replies.notice(SORRY)
        await self.reply(interaction, message, deferred_ephemeral=not public)

    @staticmethod
    async def read_files(values: dict[str, object]) -> dict[str, object]:
        """Attachments become the core's ``Upload``; one over the size cap is never downloaded."""
        out = dict(values)
        for name, value in values.items():
            if isinstance(value, discord.Attachment):
                if value.size > MAX_UPLOAD_BYTES:
                    raise FileRefusedError(too_big(value.size))
                out[name] = Upload(value.filename, await value.read())
        return out

    async def open_form(self, interaction: discord.Interaction, command: Command, path: tuple[str, ...],
                        initial: dict[str, str] | None = None) -> None:
        """A form_input command (e.g. /suggest): its options in a modal; the submit runs it."""
        refusal = refusal_here(interaction, path) or self.app.commands.refusal_of(caller_of(interaction), path)
        if refusal is not None:
            await self.private(interaction, refusal)
            return
        modal = OptionsModal(command, path, command.description.split(";")[0].replace("{workspace}", "server"),
                             custom_id=f"td-form:{uuid.uuid4().hex}", initial=initial)
        await interaction.response.send_modal(modal)

    async def on_ask_as_question(self, interaction: discord.Interaction, text: str) -> None:
        """"Ask as a question" (admins): the message's text fills the /suggest form."""
        draft = self.app.commands.question_form(caller_of(interaction), text)
        if isinstance(draft, Message):
            await self.private(interaction, draft)
            return
        [suggest] = [c for c in self.app.commands.catalogue.commands if c.name == "suggest"]
        await self.open_form(interaction, suggest, ("suggest",), draft)

    async def on_form(self, interaction: discord.Interaction, form: Form, filled: dict[str, str]) -> None:
        """A core form's modal submitted: its command runs with the form's values and answers
        privately. It continues a button's click, so it goes wherever the button did (a user
        install's DMs too), with the command's own checks only."""
        await self.defer(interaction, ephemeral=True)
        try:
            message = await self.app.commands.execute_values(caller_of(interaction), form.path,
                                                             form.values(filled))
        except Exception:
            log.exception("discord form failed", extra={"command": " ".join(form.path)})
            message = replies.notice(SORRY)
        await self.reply(interaction, message, deferred_ephemeral=True)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, interaction: discord.Interaction, action_id: str) -> None:
        form = self.app.commands.form_of(action_id)
        if form is not None:  # a modal must be the first response: no defer before it
            await interaction.response.send_modal(FormModal(form, custom_id=f"td-form:{form.key}:{uuid.uuid4().hex}"))
            return
        await self.defer(interaction, ephemeral=True)
        try:
            outcome = await self.app.commands.press(who_of(interaction), action_id)
        except Exception:
            log.exception("button %s failed", action_id)
            await self.reply(interaction, replies.notice(SORRY), deferred_ephemeral=True)
            return
        await self.reply(interaction, outcome.reply, deferred_ephemeral=True)
        if outcome.public is not None:
            ref = outcome.platform_ref
            if ref is None and interaction.message is not None:
                ref = make_ref(interaction.message.channel.id, interaction.message.id)
            if ref is not None:
                try:
                    await self.publisher.refresh(where_of(interaction), ref, outcome.public)
                except discord.HTTPException:  # e.g. the post was deleted; the answer counts
                    log.warning("could not refresh the answer count of %s", ref, exc_info=True)

    async def on_foreign_component(self, interaction: discord.Interaction) -> None:
        """A component whose custom_id is not in our format: answer, never leave it hanging."""
        await self.private(interaction, replies.notice(replies.UNKNOWN_BUTTON))

    # ---- /run ----------------------------------------------------------------------------
    async def open_run_modal(self, interaction: discord.Interaction, command: str = "run") -> None:
        refusal = refusal_here(interaction, (command,))
        if refusal is not None:
            await self.private(interaction, refusal)
            return
        if self.app.commands.services.runner.desk() is None:
            await self.private(interaction, replies.notice(self.app.commands.services.runner.unavailable()))
            return
        form = await self.app.commands.code_form(caller_of(interaction), command)
        if isinstance(form, Message):
            await self.private(interaction, form)
            return
        modal = RunCodeModal(form.max_chars or self.app.settings.runner_max_code_bytes,
                             custom_id=f"td-run-modal:{uuid.uuid4().hex}", title=form.title,
                             initial=form.initial, command=command)
        await interaction.response.send_modal(modal)

    async def on_run_code(self, interaction: discord.Interaction, code: str, command: str = "run") -> None:
        """Public acknowledgement first (its message starts the result thread), then submit.
        Where torchdrill is only the member's own app, nothing public: the acknowledgement and
        the output go to the member's direct messages with the bot."""
        caller = caller_of(interaction)
        ack: AckChannel = _ThreadAck(interaction)
        if not in_server_with_bot(interaction):
            await self.defer(interaction, ephemeral=True)
            try:
                dm = await interaction.user.create_dm()
            except discord.HTTPException as exc:
                log.warning("could not open a DM for a private /%s: %s", command, exc.status)
                await self.private(interaction, replies.notice(SORRY))
                return
            where = Where(PLATFORM, workspace_of(interaction), str(dm.id), None)
            caller = Caller(caller.who, where, False, WORDS)
            ack = _DirectAck(self, where)
        try:
            private = await self.app.commands.submit_code(caller, command, code, ack)
        except Exception:
            log.exception("/run failed")
            private = replies.notice(SORRY)
        if isinstance(ack, _DirectAck):  # deferred privately: fill that response
            await self.reply(interaction, private or replies.notice(PERSONAL_CODE_DELIVERY),
                             deferred_ephemeral=True)
        elif private is not None:
            await self.private(interaction, private)


def _name(interaction: discord.Interaction) -> str:
    command = interaction.command
    return command.qualified_name if command is not None else str(interaction.type.name)
