"""The Discord command tree, generated from the core's command catalogue.

Each catalogue option becomes a typed slash-command parameter (``Range`` for limits, choices,
topic autocomplete), so Discord itself enforces ranges and shows choices; the core validates
again. Callbacks find the adapter's ``Handlers`` on the client, so ``torchdrill discord sync``
can build the same tree without a database.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Optional

import discord
from discord import app_commands

from bot.adapters.discord.interactions import WORDS, Handlers, who_of
from bot.core.commands.catalogue import COMMANDS, Command, Option, OptionType, user_installable

Callback = Callable[..., Awaitable[None]]


def handlers(interaction: discord.Interaction) -> Handlers:
    found = getattr(interaction.client, "handlers", None)
    if not isinstance(found, Handlers):
        raise RuntimeError("this Discord client has no torchdrill handlers attached")
    return found


async def topic_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    choices = handlers(interaction).app.commands.topic_choices(current)
    return [app_commands.Choice(name=display, value=slug) for slug, display in choices]


async def track_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The built-in tracks and this server's own (the core lists them)."""
    choices = await handlers(interaction).app.commands.track_choices(who_of(interaction), current)
    return [app_commands.Choice(name=label, value=slug) for slug, label in choices]


def _words(text: str) -> str:
    return text.replace("{workspace}", WORDS.workspace)


def annotation(option: Option) -> Any:
    """The discord.py parameter type that makes Discord enforce the catalogue's limits."""
    if option.type is OptionType.INT:
        if option.minimum is not None or option.maximum is not None:
            low = int(option.minimum) if option.minimum is not None else None
            high = int(option.maximum) if option.maximum is not None else None
            return app_commands.Range[int, low, high]
        return int
    if option.type is OptionType.FLOAT:
        if option.minimum is not None and option.maximum is not None:
            return app_commands.Range[float, float(option.minimum), float(option.maximum)]
        return float
    if option.type is OptionType.BOOL:
        return bool
    if option.type is OptionType.FILE:
        return discord.Attachment
    if option.max_length is not None:
        return app_commands.Range[str, 1, option.max_length]
    return str


def _leaf(command: Command, path: tuple[str, ...]) -> app_commands.Command[Any, ..., None]:
    async def callback(interaction: discord.Interaction, **values: object) -> None:
        if command.code_input and all(v is None for v in values.values()):
            await handlers(interaction).open_run_modal(interaction, command.name)  # the code box
            return
        await handlers(interaction).command(interaction, path, values)  # e.g. /run action:cancel

    params = [
        inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=discord.Interaction)
    ]
    for option in command.options:
        default = inspect.Parameter.empty if option.required else None
        annot = annotation(option) if option.required else Optional[annotation(option)]  # noqa: UP045
        params.append(inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annot))
    # discord.py reads the options off the signature
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # undeclared on functions
    callback.__annotations__ = {}
    func: Any = callback
    if command.options:
        func = app_commands.describe(**{o.name: _words(o.description) for o in command.options})(func)
    choices = {
        o.name: [app_commands.Choice(name=_words(c.label), value=c.value) for c in o.choices]
        for o in command.options if o.choices
    }
    if choices:
        func = app_commands.choices(**choices)(func)
    topics: dict[str, Any] = {o.name: topic_autocomplete for o in command.options if o.type is OptionType.TOPIC}
    topics |= {o.name: track_autocomplete for o in command.options if o.type is OptionType.TRACK}
    if topics:
        func = app_commands.autocomplete(**topics)(func)
    return app_commands.Command(name=command.name, description=_words(command.description), callback=func)


def _form_command(command: Command) -> app_commands.Command[Any, ..., None]:
    async def ask(interaction: discord.Interaction) -> None:
        await handlers(interaction).open_form(interaction, command, (command.name,))

    return app_commands.Command(name=command.name, description=_words(command.description), callback=ask)


def build(command: Command) -> app_commands.Command[Any, ..., None] | app_commands.Group:
    if command.code_input:  # alone it opens the code box; with an option (cancel) it is a command
        built: Any = _leaf(command, (command.name,))
    elif command.form_input:
        built = _form_command(command)
    elif command.subcommands:
        built = app_commands.Group(name=command.name, description=_words(command.description))
        for sub in command.subcommands:
            built.add_command(_leaf(sub, (command.name, sub.name)))
    else:
        built = _leaf(command, (command.name,))
    if command.in_channel_only:
        built.guild_only = True
    declare_installs(built, command)
    if command.admin_only:  # a hint for Discord's UI; the core checks is_admin on every call
        built.default_permissions = discord.Permissions(manage_guild=True)
    return built


def declare_installs(built: Any, command: Command) -> None:
    """Integration types and contexts per command, from the catalogue: practice commands also
    install to a member's account (DMs, group chats, servers without the bot); the rest only
    come with a server that added the bot (its DM with the bot too, unless guild-only)."""
    if user_installable(command.name):
        built.allowed_installs = app_commands.AppInstallationType(guild=True, user=True)
        built.allowed_contexts = app_commands.AppCommandContext(guild=True, dm_channel=True,
                                                                private_channel=True)
        return
    built.allowed_installs = app_commands.AppInstallationType(guild=True, user=False)
    built.allowed_contexts = app_commands.AppCommandContext(
        guild=True, dm_channel=not command.in_channel_only, private_channel=False)


@app_commands.context_menu(name="Run code")
async def run_code(interaction: discord.Interaction, message: discord.Message) -> None:
    await handlers(interaction).on_run_code(interaction, message.content)


declare_installs(run_code, Command("run", "Run code"))  # /run's installs: it is the same feature


@app_commands.context_menu(name="Ask as a question")
@app_commands.default_permissions(manage_guild=True)
async def ask_as_question(interaction: discord.Interaction, message: discord.Message) -> None:
    await handlers(interaction).on_ask_as_question(interaction, message.content)


declare_installs(ask_as_question, Command("suggest", "Ask as a question", in_channel_only=True))


def all_commands() -> list[app_commands.Command[Any, ..., None] | app_commands.Group | app_commands.ContextMenu]:
    return [*(build(c) for c in COMMANDS.commands), run_code, ask_as_question]


def add_commands(tree: app_commands.CommandTree[Any]) -> None:
    for command in all_commands():
        tree.add_command(command)
