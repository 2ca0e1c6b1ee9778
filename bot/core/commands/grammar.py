"""One text grammar for every text front end (Slack slash commands, the console).

Members write options positionally (``/quiz autograd 5``) or by name (``count:5``,
``count=5``, ``group:"Night Owls"``). Numbers fill numeric options in order, other words the
first option that accepts them: a choice its values, a topic a known topic, a true/false
option its own name as a flag (``/leaderboard week chart``); a free-text option takes the
rest. A word never slips past an open choice that has a default (a command's action, e.g.
``/group``'s) into a later free-text option: ``/group frobnicate x`` is an unknown action, not
a group called "frobnicate x". Choices without a default may be skipped
(``/leaderboard Night Owls`` is a group's board).
Every value is then validated against the catalogue, so a bad one gets a message naming the
option.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bot.core.commands.catalogue import Command, Option, OptionType
from bot.core.domain.messages import Upload
from bot.core.domain.topics import UnknownTopicError, normalize_topic

_NAMED = re.compile(r"^([a-z_]+)[:=](.*)$", re.DOTALL)
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
_NUMBER = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)$")
_TRACK_WORD = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


T = TypeVar("T")


class OptionError(ValueError):
    """A message for the member, e.g. ``count must be a whole number (got 'five')``."""


@dataclass(frozen=True)
class Request:
    """A validated command: the leaf command, its path (``daily schedule``) and its values."""

    command: Command
    path: tuple[str, ...]
    values: dict[str, object] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return " ".join(self.path)

    def get(self, name: str, kind: type[T]) -> T | None:
        """An option's value as the catalogue types it (None: left out, no default). A handler
        asking for another type than the catalogue declares is a bug, not bad input."""
        value = self.values[name]
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"option {name} holds {type(value).__name__}, not {kind.__name__}")
        return value

    def need(self, name: str, kind: type[T]) -> T:
        """The value of an option that is required or has a default."""
        value = self.get(name, kind)
        if value is None:
            raise TypeError(f"option {name} has neither a value nor a default")
        return value


def _choice_value(option: Option, word: str) -> str | None:
    wanted = word.strip().lower()
    for choice in option.choices:
        if wanted == choice.value or wanted in choice.aliases:
            return choice.value
    return None


def _is_flag(option: Option, word: str) -> bool:
    """``chart`` written alone means ``chart:true``."""
    return option.type is OptionType.BOOL and word.strip().lower() in (option.name, *option.aliases)


def _accepts(option: Option, word: str) -> bool:
    if option.type is OptionType.CHOICE:
        return _choice_value(option, word) is not None
    if option.type is OptionType.BOOL:
        return _is_flag(option, word)
    if option.type is OptionType.TOPIC:
        try:
            normalize_topic(word)
        except UnknownTopicError:
            return False
        return True
    if option.type is OptionType.TRACK:  # which tracks exist is the community's: the core checks
        return _TRACK_WORD.match(word.strip().lower()) is not None
    return not option.numeric


_FREE_TEXT = (OptionType.TEXT, OptionType.WORD)


def validate_value(option: Option, raw: object) -> object:
    """One option's value, typed and checked against its range, choices or length."""
    name = option.name
    if option.type is OptionType.INT:
        if isinstance(raw, bool) or not isinstance(raw, int):
            try:
                raw = int(str(raw).strip())
            except ValueError:
                raise OptionError(f"{name} must be a whole number (got {raw!r})") from None
        value: object = raw
    elif option.type is OptionType.FLOAT:
        try:
            value = float(str(raw).strip())
        except ValueError:
            raise OptionError(f"{name} must be a number (got {raw!r})") from None
    elif option.type is OptionType.BOOL:
        word = str(raw).strip().lower()
        if isinstance(raw, bool):
            value = raw
        elif word in TRUE_WORDS or word in FALSE_WORDS:
            value = word in TRUE_WORDS
        else:
            raise OptionError(f"{name} is true or false (got {raw!r})")
    elif option.type is OptionType.CHOICE:
        value = _choice_value(option, str(raw))
        if value is None:
            known = ", ".join(c.value for c in option.choices)
            raise OptionError(f"unknown {name} {raw!r}; choose one of: {known}")
    elif option.type is OptionType.TOPIC:
        try:
            value = normalize_topic(str(raw))
        except UnknownTopicError as exc:
            raise OptionError(str(exc)) from None
    elif option.type is OptionType.TRACK:
        value = str(raw).strip().lower()
        if not _TRACK_WORD.match(value):
            raise OptionError(f"{name} is a track's name, e.g. ml (got {raw!r})")
    elif option.type is OptionType.FILE:
        if not isinstance(raw, Upload):
            raise OptionError(f"{name}: attach a file")
        value = raw
    else:
        text = str(raw)
        value = "\n".join(" ".join(ln.split()) for ln in text.strip().splitlines()) if option.multiline \
            else " ".join(text.split())
        if not value:
            raise OptionError(f"{name} must not be empty")
        if option.max_length is not None and len(str(value)) > option.max_length:
            raise OptionError(f"{name} is too long ({len(str(value))} characters; at most {option.max_length})")
    if option.numeric and (option.minimum is not None or option.maximum is not None):
        assert isinstance(value, int | float)  # a numeric option's value was parsed above
        number = float(value)
        low, high = option.minimum, option.maximum
        if (low is not None and number < low) or (high is not None and number > high):
            raise OptionError(f"{name} must be between {_fmt(low)} and {_fmt(high)} (got {_fmt(number)})")
    return value


def _fmt(number: float | None) -> str:
    if number is None:
        return "…"
    return str(int(number)) if float(number).is_integer() else str(number)


def validate(command: Command, raw: dict[str, object], path: tuple[str, ...]) -> Request:
    """Typed values for every option of ``command``; defaults filled, required ones checked."""
    values: dict[str, object] = {}
    for option in command.options:
        given = raw.get(option.name)
        if given is None or (isinstance(given, str) and not given.strip()):
            if option.required:
                raise OptionError(f"/{' '.join(path)} needs {option.name}: {option.description}")
            values[option.name] = option.default
            continue
        values[option.name] = validate_value(option, given)
    unknown = set(raw) - {o.name for o in command.options}
    if unknown:
        raise OptionError(f"/{' '.join(path)} has no option {sorted(unknown)[0]!r}")
    for option in command.options:
        if option.only_with and raw.get(option.name) is not None:
            other, wanted = option.only_with
            if values[other] not in (None, *wanted):
                raise OptionError(f"{option.name} goes with {other} {' or '.join(wanted)} "
                                  f"(got {other} {values[other]})")
    return Request(command, path, values)


def resolve(root: Command, words: list[str]) -> tuple[Command, tuple[str, ...], list[str]]:
    """Walk sub-commands: ``daily schedule 09:00`` → (schedule, ("daily", "schedule"), rest)."""
    command: Command = root
    path: tuple[str, ...] = (root.name,)
    while command.subcommands:
        names = [s.name for s in command.subcommands]
        if not words or words[0].lower() not in names:
            raise OptionError(f"use /{' '.join(path)} {'|'.join(names)}")
        command = command.sub(words[0].lower())
        path, words = (*path, command.name), words[1:]
    return command, path, words


FileOpener = Callable[[str], Upload]


def parse(root: Command, text: str, open_file: FileOpener | None = None) -> Request:
    """``text`` after the command name → a validated request; ``open_file`` turns a file
    option's text (the console's path) into the file, where the front end can read one."""
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        if not _takes_free_text(root):
            raise OptionError(f"could not read the arguments ({exc}); check the quotes") from None
        words = (text or "").split()  # free text with an apostrophe ("it's a view"): as typed
    command, path, words = resolve(root, words)
    named: dict[str, object] = {}
    positional: list[str] = []
    for word in words:
        match = _NAMED.match(word)
        option = _option_named(command, match.group(1).lower()) if match else None
        if match and option is not None:
            if option.name in named:
                raise OptionError(f"{option.name} is given twice")
            named[option.name] = match.group(2)
        else:
            positional.append(word)
    _assign_positional(command, positional, named)
    for option in command.options:
        given = named.get(option.name)
        if option.type is OptionType.FILE and isinstance(given, str) and open_file is not None:
            named[option.name] = open_file(given)
    return validate(command, named, path)


def _takes_free_text(command: Command) -> bool:
    return any(o.type is OptionType.TEXT for o in command.options) or any(
        _takes_free_text(sub) for sub in command.subcommands)


def _option_named(command: Command, name: str) -> Option | None:
    try:
        return command.option(name)
    except KeyError:
        return None


def _assign_positional(command: Command, words: list[str], named: dict[str, object]) -> None:
    def free(opt: Option) -> bool:
        if opt.only_with is not None:
            other, wanted = opt.only_with
            given = named.get(other)
            if given is not None and _choice_value(command.option(other), str(given)) not in wanted:
                return False
        return opt.name not in named

    numeric = [o for o in command.options if o.numeric]
    i = 0
    while i < len(words):
        word = words[i]
        if _NUMBER.match(word) and numeric:
            target = next((o for o in numeric if free(o)), None)
            if target is None:
                expected = ", ".join(o.name for o in numeric)
                raise OptionError(f"too many numbers: {word} (expected {expected})")
            named[target.name] = word
            i += 1
            continue
        flag = next((o for o in command.options if free(o) and _is_flag(o, word)), None)
        target = flag or next((o for o in command.options if free(o) and _accepts(o, word)), None)
        open_choice = next((o for o in command.options if free(o) and o.type is OptionType.CHOICE
                            and o.default is not None), None)
        if target is not None and target.type in _FREE_TEXT and open_choice is not None \
                and command.options.index(open_choice) < command.options.index(target):
            validate_value(open_choice, word)  # e.g. `group frobnicate x`: an unknown action
        if target is None:
            extra = " ".join(words[i:])
            skipped = next((o for o in command.options if free(o)
                            and o.type in (OptionType.CHOICE, OptionType.TOPIC)), None)
            if skipped is not None:  # e.g. `leaderboard channel year`: say which values work
                validate_value(skipped, word)
            if not command.options:
                raise OptionError(f"/{command.name} takes no arguments (got {extra!r})")
            raise OptionError(f"unexpected argument {extra!r}")
        if target.type is OptionType.BOOL:
            named[target.name] = TRUE_WORDS[0]
            i += 1
            continue
        if target.type is OptionType.TEXT:
            rest = words[i:]
            while len(rest) > 1:  # a trailing choice, e.g. `group Night Owls month`
                tail = next(
                    (o for o in command.options
                     if free(o) and o is not target and o.type in (OptionType.CHOICE, OptionType.BOOL)
                     and _accepts(o, rest[-1])),
                    None,
                )
                if tail is None:
                    break
                named[tail.name] = TRUE_WORDS[0] if tail.type is OptionType.BOOL else rest.pop()
                if tail.type is OptionType.BOOL:
                    rest.pop()
            named[target.name] = " ".join(rest)
            return
        named[target.name] = word
        i += 1
