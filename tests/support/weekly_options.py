"""The /weekly option steps every platform walks, and the text a member reads."""

from __future__ import annotations

# (sub-command, options, what the admin reads); each step runs after the ones before it
STEPS: list[tuple[str, dict[str, str], str]] = [
    ("digest", {"day": "mon", "time": "09:00"}, "Set this channel's daily schedule first"),
    ("schedule", {"time": "08:00", "timezone": "UTC"}, "08:00"),
    ("digest", {"day": "someday", "time": "09:00"}, "invalid day 'someday'"),
    ("digest", {"day": "mon"}, "give a time too, e.g. time:09:00"),
    ("digest", {"day": "mon", "time": "09:00"}, "Weekly digest: mon 09:00 UTC. Next: "),
    ("challenge", {"day": "wed", "time": "10:00"}, "Weekly challenge: wed 10:00 UTC. Next: "),
    ("status", {}, "Weekly digest: mon 09:00 UTC"),
    ("digest", {"day": "off"}, "Weekly digest turned off for this channel."),
    ("challenge", {"day": "off"}, "Weekly challenge turned off for this channel."),
]


def _text(sub: str, options: dict[str, str]) -> str:
    return " ".join([sub, *(f"{k}:{v}" for k, v in options.items())])


def _flat(text: str) -> str:
    return " ".join(text.split())
