"""Cases derived from the command catalogue, shared by the per-platform catalogue tests.

Every ranged option of every command yields a value just outside its range and the refusal
the core words for it; each platform test sends that value its own way and expects exactly
that text, so a limit changed in the catalogue changes what every platform enforces.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.catalogue import COMMANDS, Command, Option
from bot.core.commands.grammar import OptionError, validate_value


@dataclass(frozen=True)
class OutOfRange:
    path: tuple[str, ...]
    option: Option
    value: float
    refusal: str
    admin_only: bool
    required: dict[str, str]  # other options the command needs, e.g. daily schedule's time

    @property
    def id(self) -> str:
        return f"{' '.join(self.path)}-{self.option.name}-{self.value:g}"

    def text(self) -> str:
        """The Slack / console form: sub-command words, then name:value options."""
        words = [*self.path[1:], *(f"{k}:{v}" for k, v in self.required.items())]
        return " ".join([*words, f"{self.option.name}:{self.value:g}"])


SAMPLE = {"topic": "autograd", "text": "x"}  # a valid value of each required option's type


def _leaves(command: Command, path: tuple[str, ...]) -> list[tuple[Command, tuple[str, ...]]]:
    if not command.subcommands:
        return [(command, path)]
    return [leaf for sub in command.subcommands for leaf in _leaves(sub, (*path, sub.name))]


def refusal_for(option: Option, value: float) -> str:
    try:
        validate_value(option, value)
    except OptionError as exc:
        return str(exc)
    raise AssertionError(f"{option.name}={value} is inside the range")


def out_of_range_cases() -> list[OutOfRange]:
    cases = []
    for root in COMMANDS.commands:
        for leaf, path in _leaves(root, (root.name,)):
            for option in leaf.options:
                required = {o.name: o.choices[0].value if o.choices else SAMPLE.get(o.type.value, "09:00")
                            for o in leaf.options if o.required and o is not option}
                for bound, step in ((option.minimum, -1), (option.maximum, +1)):
                    if bound is None:
                        continue
                    value = bound + step
                    if option.type.value == "int":
                        value = int(value)
                    cases.append(OutOfRange(path, option, value, refusal_for(option, value),
                                            root.admin_only or leaf.admin_only, required))
    return cases


CASES = out_of_range_cases()
