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
from bot.adapters.discord.views import OptionsModal, RunCodeModal
from bot.core.commands import replies
from bot.core.commands.catalogue import Command
from bot.core.commands.dispatch import Caller, Pending
from bot.core.content.community import MAX_UPLOAD_BYTES, too_big
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message, Upload

if TYPE_CHECKING:
    from bot.adapters.base import BotServices as App

log = logging.getLogger(__name__)

PLATFORM = "discord"
WORDS = replies.Words(workspace="server", admins="members with the **Manage Server** permission")
SORRY = replies.SORRY


def workspace_of(interaction: discord.Interaction) -> str:
    return str(interaction.guild_id) if interaction.guild_id else f"dm-{interaction.user.id}"


def who_of(interaction: discord.Interaction) -> Who:
    user = interaction.user
    return Who(PLATFORM, workspace_of(interaction), str(user.id), user.display_name)


def where_of(interaction: discord.Interaction) -> Where:
    name = getattr(interaction.channel, "name", None)
    return Where(PLATFORM, workspace_of(interaction), str(interaction.channel_id), name)


def caller_of(interaction: discord.Interaction) -> Caller:
    """Discord resolves the member's permissions in the channel into the payload."""
    where = where_of(interaction) if interaction.guild_id else None
    return Caller(who_of(interaction), where, interaction.permissions.manage_guild, WORDS)


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
        public = root is not None and not root.private
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

    async def open_form(self, interaction: discord.Interaction, command: Command, path: tuple[str, ...]) -> None:
        """A form_input command (e.g. /suggest): its options in a modal; the submit runs it."""
        refusal = self.app.commands.refusal_of(caller_of(interaction), path)
        if refusal is not None:
            await self.private(interaction, refusal)
            return
        modal = OptionsModal(command, path, command.description.split(";")[0].replace("{workspace}", "server"),
                             custom_id=f"td-form:{uuid.uuid4().hex}")
        await interaction.response.send_modal(modal)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, interaction: discord.Interaction, action_id: str) -> None:
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
        if self.app.commands.runner.desk() is None:
            await self.private(interaction, replies.notice(self.app.commands.runner.unavailable()))
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
        """Public acknowledgement first (its message starts the result thread), then submit."""
        try:
            private = await self.app.commands.submit_code(caller_of(interaction), command, code,
                                                          _ThreadAck(interaction))
        except Exception:
            log.exception("/run failed")
            private = replies.notice(SORRY)
        if private is not None:
            await self.private(interaction, private)


def _name(interaction: discord.Interaction) -> str:
    command = interaction.command
    return command.qualified_name if command is not None else str(interaction.type.name)
