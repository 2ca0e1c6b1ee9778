"""A form a button opens: a platform modal (Discord ``Modal``, Slack ``views.open``) whose
submit runs a catalogue command. The core says what it asks; adapters only draw it.

``fixed`` holds the command's options the button already knows (e.g. the post a 🚩 belongs
to): they travel with the modal, never shown as a field. Each field fills one option: a menu
with one pick where ``choices`` are given, a text box otherwise, capped at ``max_length``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormChoice:
    value: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class FormField:
    name: str  # the command option it fills
    label: str
    hint: str = ""
    choices: tuple[FormChoice, ...] = ()  # a menu (pick one) when given, else a text box
    required: bool = True
    max_length: int | None = None
    multiline: bool = False


@dataclass(frozen=True)
class Form:
    key: str  # which form (adapters tag their modal with it)
    title: str  # Slack shows at most 24 characters, Discord 45
    submit: str
    path: tuple[str, ...]  # the catalogue command the submit runs
    fixed: tuple[tuple[str, str], ...]  # options known when the form opens, not shown
    fields: tuple[FormField, ...]

    def values(self, filled: dict[str, str]) -> dict[str, object]:
        """The command's values: the fixed ones and the fields filled in (blank ones left out)."""
        values: dict[str, object] = dict(self.fixed)
        for field in self.fields:
            value = (filled.get(field.name) or "").strip()
            if value:
                values[field.name] = value[:field.max_length] if field.max_length else value
        return values
