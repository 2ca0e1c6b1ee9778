"""Discord UI pieces: persistent answer buttons, the `/run` code modal and option forms.

Buttons are ``DynamicItem``s whose custom_id is the core's action id, so a click on a message
posted before a restart (or by another shard) is routed without any stored view.
"""

from __future__ import annotations

from typing import Any, Protocol

import discord

from bot.core.commands.catalogue import Command
from bot.core.domain.actions import ACTION_PATTERN
from bot.core.domain.forms import Form

CODE_INPUT_LIMIT = 4000  # Discord's maximum for a text input
TITLE_LIMIT = LABEL_LIMIT = 45  # a modal's title, a label's text
OPTION_LIMIT = 100  # a select option's label, value and description


class InteractionHandlers(Protocol):
    async def on_action(self, interaction: discord.Interaction, action_id: str) -> None: ...

    async def on_run_code(self, interaction: discord.Interaction, code: str, command: str = "run") -> None: ...

    async def on_ask_as_question(self, interaction: discord.Interaction, text: str) -> None: ...

    async def on_form(self, interaction: discord.Interaction, form: Form, filled: dict[str, str]) -> None: ...


def handlers_of(interaction: discord.Interaction) -> InteractionHandlers:
    """The adapter's handlers hang off the client, so module-level UI classes can reach them."""
    handlers = getattr(interaction.client, "handlers", None)
    if handlers is None:
        raise RuntimeError("this Discord client has no torchdrill handlers attached")
    return handlers


class ActionButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=ACTION_PATTERN):
    def __init__(
        self,
        action_id: str,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        *,
        disabled: bool = False,
        row: int | None = None,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label, style=style, custom_id=action_id, disabled=disabled, row=row
            )
        )
        self.action_id = action_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> ActionButton:
        label = getattr(item, "label", None) or ""
        style = getattr(item, "style", discord.ButtonStyle.secondary)
        return cls(match.string, label, style, disabled=bool(getattr(item, "disabled", False)))

    async def callback(self, interaction: discord.Interaction) -> None:
        await handlers_of(interaction).on_action(interaction, self.action_id)


class RunCodeModal(discord.ui.Modal, title="Run a PyTorch snippet"):
    code: discord.ui.TextInput[RunCodeModal] = discord.ui.TextInput(
        label="Code",
        style=discord.TextStyle.paragraph,
        placeholder="import torch\nprint(torch.ones(2, 3) @ torch.ones(3, 2))",
        max_length=CODE_INPUT_LIMIT,
        custom_id="td-run-code",
    )

    def __init__(self, max_chars: int = CODE_INPUT_LIMIT, *, custom_id: str = "td-run-modal",
                 title: str | None = None, initial: str = "", command: str = "run") -> None:
        """Each opened modal gets its own custom_id: discord.py routes submits by it.
        ``command`` is the code_input command that opened it (run, or submit with its stub)."""
        super().__init__(timeout=900, custom_id=custom_id, **({"title": title} if title else {}))
        self.code.max_length = min(max_chars, CODE_INPUT_LIMIT)
        self.command = command
        if initial:
            self.code.default = initial[:self.code.max_length]

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await handlers_of(interaction).on_run_code(interaction, self.code.value, self.command)


class OptionsModal(discord.ui.Modal):
    """A form_input command's options as text boxes (Discord allows five per modal)."""

    def __init__(self, command: Command, path: tuple[str, ...], title: str, *, custom_id: str,
                 initial: dict[str, str] | None = None) -> None:
        super().__init__(timeout=900, custom_id=custom_id, title=title[:45])
        self.path = path
        self.inputs: dict[str, discord.ui.TextInput[OptionsModal]] = {}
        for option in command.options[:5]:
            box: discord.ui.TextInput[OptionsModal] = discord.ui.TextInput(
                label=option.name.capitalize()[:45],
                style=discord.TextStyle.paragraph if option.multiline else discord.TextStyle.short,
                placeholder=option.description[:100],
                required=option.required,
                max_length=min(option.max_length or CODE_INPUT_LIMIT, CODE_INPUT_LIMIT),
                custom_id=f"td-opt-{option.name}",
                default=(initial or {}).get(option.name) or None,
            )
            self.inputs[option.name] = box
            self.add_item(box)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        values: dict[str, object] = {name: box.value for name, box in self.inputs.items() if box.value}
        handlers = getattr(interaction.client, "handlers", None)
        if handlers is None:
            raise RuntimeError("this Discord client has no torchdrill handlers attached")
        await handlers.command(interaction, self.path, values)


class FormModal(discord.ui.Modal):
    """A core ``Form`` (e.g. the 🚩 report): each field in a ``Label``, a select menu where the
    field has choices, a text box otherwise; the submit hands the values to the core."""

    def __init__(self, form: Form, *, custom_id: str) -> None:
        super().__init__(timeout=900, custom_id=custom_id, title=form.title[:TITLE_LIMIT])
        self.form = form
        self.menus: dict[str, discord.ui.Select[FormModal]] = {}
        self.boxes: dict[str, discord.ui.TextInput[FormModal]] = {}
        for field in form.fields[:5]:  # Discord allows five components per modal
            item: discord.ui.Item[FormModal]
            if field.choices:
                item = self.menus[field.name] = discord.ui.Select(
                    custom_id=f"td-field-{field.name}", required=field.required,
                    placeholder=field.hint[:150] or None,
                    options=[discord.SelectOption(label=c.label[:OPTION_LIMIT], value=c.value[:OPTION_LIMIT],
                                                  description=c.description[:OPTION_LIMIT] or None)
                             for c in field.choices[:25]])
            else:
                item = self.boxes[field.name] = discord.ui.TextInput(
                    custom_id=f"td-field-{field.name}", required=field.required,
                    style=discord.TextStyle.paragraph if field.multiline else discord.TextStyle.short,
                    placeholder=field.hint[:OPTION_LIMIT] or None,
                    max_length=min(field.max_length or CODE_INPUT_LIMIT, CODE_INPUT_LIMIT))
            self.add_item(discord.ui.Label(text=field.label[:LABEL_LIMIT], component=item))

    def filled(self) -> dict[str, str]:
        values = {name: box.value for name, box in self.boxes.items()}
        values.update({name: menu.values[0] for name, menu in self.menus.items() if menu.values})
        return values

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await handlers_of(interaction).on_form(interaction, self.form, self.filled())
