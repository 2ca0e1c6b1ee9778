"""What happens on each Discord interaction: acknowledge at once, ask the core, reply.

Discord allows 3 s to acknowledge; every path defers before calling the core. Nothing here
decides scoring or eligibility — except who may manage the daily question (a platform role).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import discord

from bot.adapters.background import BackgroundTasks
from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.discord.publisher import make_ref
from bot.adapters.discord.render import render_message
from bot.core import render
from bot.core.identity import Where, Who
from bot.core.messages import Message, truncate
from bot.core.runs import clean_code

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)

PLATFORM = "discord"
SORRY = "Something went wrong on my side; please try again in a moment."
ADMIN_ONLY = "Only members with the **Manage Server** permission can change the daily question."
NO_RUNNER = "The code runner is not available on this deployment."
RUN_CODE_PREVIEW = 1000


def workspace_of(interaction: discord.Interaction) -> str:
    return str(interaction.guild_id) if interaction.guild_id else f"dm-{interaction.user.id}"


def who_of(interaction: discord.Interaction) -> Who:
    user = interaction.user
    return Who(PLATFORM, workspace_of(interaction), str(user.id), user.display_name)


def where_of(interaction: discord.Interaction) -> Where:
    name = getattr(interaction.channel, "name", None)
    return Where(PLATFORM, workspace_of(interaction), str(interaction.channel_id), name)


def is_admin(interaction: discord.Interaction) -> bool:
    """Discord resolves the member's permissions in the channel into the payload."""
    return interaction.permissions.manage_guild


class Handlers:
    def __init__(self, app: App, publisher: CoalescingPublisher) -> None:
        self.app = app
        self.publisher = publisher
        self.tasks = BackgroundTasks()

    # ---- replies -------------------------------------------------------------------------
    async def defer(self, interaction: discord.Interaction, *, ephemeral: bool) -> None:
        if not interaction.response.is_done():
            await interaction.response.defer(ephemeral=ephemeral, thinking=True)

    async def reply(
        self, interaction: discord.Interaction, message: Message, *, deferred_ephemeral: bool
    ) -> None:
        """Fill the deferred response; a private notice after a public defer becomes a follow-up."""
        rendered = render_message(message)
        if message.ephemeral and not deferred_ephemeral:
            await interaction.delete_original_response()
            await interaction.followup.send(ephemeral=True, **rendered.send_kwargs())
            return
        kwargs = rendered.send_kwargs()
        if "files" in kwargs:
            kwargs["attachments"] = kwargs.pop("files")
        await interaction.edit_original_response(**kwargs)

    async def answer(
        self,
        interaction: discord.Interaction,
        work: Callable[[], Awaitable[Message]],
        *,
        ephemeral: bool = True,
    ) -> None:
        """Defer, run ``work`` (a core call), reply; a failure becomes a polite notice."""
        await self.defer(interaction, ephemeral=ephemeral)
        try:
            message = await work()
        except Exception:
            log.exception(
                "discord interaction failed", extra={"command": _command_name(interaction)}
            )
            message = render.notice(SORRY)
        await self.reply(interaction, message, deferred_ephemeral=ephemeral)

    # ---- buttons -------------------------------------------------------------------------
    async def on_action(self, interaction: discord.Interaction, action_id: str) -> None:
        await self.defer(interaction, ephemeral=True)
        try:
            outcome = await self.app.drill.handle_action(who_of(interaction), action_id)
        except Exception:
            log.exception("button %s failed", action_id)
            await self.reply(interaction, render.notice(SORRY), deferred_ephemeral=True)
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

    # ---- /run ----------------------------------------------------------------------------
    async def on_run_code(self, interaction: discord.Interaction, code: str) -> None:
        """Public acknowledgement first (its message starts the result thread), then submit."""
        runs = self.app.runs
        if runs is None:
            await interaction.response.send_message(NO_RUNNER, ephemeral=True)
            return
        await self.defer(interaction, ephemeral=False)
        ack = Message(title=f"/run by {interaction.user.display_name}")
        ack.code(truncate(clean_code(code), RUN_CODE_PREVIEW, "# … (cut here)")[0] or " ")
        sent = await interaction.edit_original_response(**render_message(ack).send_kwargs())
        ref = make_ref(interaction.channel_id or sent.channel.id, sent.id)
        try:
            status = await runs.submit(
                who_of(interaction), where_of(interaction), code, thread_of=ref
            )
        except Exception:
            log.exception("/run submission failed")
            status = render.notice(SORRY)
        if status.ephemeral:  # refused: nothing will arrive in a thread, say so privately
            await self.reply(interaction, status, deferred_ephemeral=False)
            return
        ack.blocks.extend(status.blocks)
        await interaction.edit_original_response(**render_message(ack).send_kwargs())

    # ---- live rounds ---------------------------------------------------------------------
    async def start_round(
        self, interaction: discord.Interaction, *, count: int, seconds: int, topic: str | None
    ) -> Message:
        where = where_of(interaction)
        started = await self.app.drill.start_round(
            where, who_of(interaction), count=count, seconds=seconds, topic=topic
        )
        if isinstance(started, Message):
            return started
        self.background(
            self.app.drill.play_round(started, where, self.publisher), f"round {started}"
        )
        return render.notice(f"Round started: {count} question(s), {seconds} s each. Good luck!")

    def background(self, work: Awaitable[object], name: str) -> None:
        self.tasks.spawn(work, name)

    async def cancel_background(self) -> None:
        await self.tasks.cancel_all()

    # ---- /daily --------------------------------------------------------------------------
    async def daily(
        self, interaction: discord.Interaction, work: Callable[[Where], Awaitable[Message]]
    ) -> None:
        if not is_admin(interaction):
            await interaction.response.send_message(ADMIN_ONLY, ephemeral=True)
            return
        where = where_of(interaction)
        await self.answer(interaction, lambda: work(where))


def _command_name(interaction: discord.Interaction) -> str | None:
    command = interaction.command
    return command.qualified_name if command is not None else None
