"""Role rewards: admins map a milestone to a Discord role. A streak of N in the channel (days,
or weeks where the channel counts weekly streaks; given at the reveal that reaches it, taken
back when the streak falls below), N challenges solved (given the moment a /submit verdict
passes), or readiness in a topic of at least N% (given the moment the member's estimates move
there: at a reveal of a question they answered, or on a private answer; kept: a milestone
once passed stays passed).

Before any grant the bot reads the guild's roles and its own member and checks that it holds
Manage Roles and that the role sits below its own highest role (``problem_of``): admins read
what it cannot do, and Discord is not asked for a change it would refuse.

Every grant and removal is recorded (``role_grants``), so a reward is applied once however many
times or replicas settle; the platform call itself is idempotent too. When Discord refuses
(the bot lacks Manage Roles, or the role sits above the bot's own), the reward keeps the
reason and ``/daily rewards list`` shows it to admins; members never see an error.
Slack has no roles: there the weekly digest's longest-streaks line is the shout-out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

MAX_REWARDS_PER_CHANNEL = 10
KINDS = ("streak", "solved", "readiness")
ADMINISTRATOR = 1 << 3
MANAGE_ROLES = 1 << 28
_ROLE = re.compile(r"^\s*(?:<@&)?(\d{5,25})>?\s*$")

NO_ROLES = ("Role rewards give Discord roles, and there are none here (Slack has no roles): the "
            "weekly digest's 🔥 **Longest streaks** line is the shout-out (/daily digest).")


def parse_role(text: str) -> str | None:
    """A role id from a role mention (``<@&123…>``) or a bare id; None when it is neither."""
    found = _ROLE.match(text)
    return found.group(1) if found else None


def earned(threshold: int, streak: int) -> bool:
    return streak >= threshold


def problem_of(roles: Mapping[str, tuple[int, int]], bot_roles: Sequence[str], everyone: str,
               role_id: str) -> str | None:
    """Whether the bot may give ``role_id``, as Discord decides: ``roles`` maps each guild role
    to (position, permissions); the bot's permissions are @everyone's (``everyone``, the guild's
    id) with its own roles'; it needs Manage Roles (or Administrator) and may only manage
    roles strictly below its highest one."""
    if role_id not in roles:
        return "unknown_role"
    mine = [roles[r] for r in (everyone, *bot_roles) if r in roles]
    permissions = 0
    for _, allowed in mine:
        permissions |= allowed
    if not permissions & (ADMINISTRATOR | MANAGE_ROLES):
        return "manage_roles"
    if roles[role_id][0] >= max((position for position, _ in mine), default=0):
        return "position"
    return None


def milestone(kind: str, threshold: int, topic: str | None, *, weekly: bool = False) -> str:
    """How a reward's milestone reads in replies and the list."""
    if kind == "solved":
        return f"🧩 {threshold} challenge{'s' if threshold != 1 else ''} solved"
    if kind == "readiness":
        return f"🎯 readiness in {topic} ≥ {threshold}%"
    return f"🔥 streak {threshold}" + (f" week{'s' if threshold != 1 else ''}" if weekly else "")


def mention(role_id: str) -> str:
    return f"<@&{role_id}>"


def refusal(role_id: str, reason: str) -> str:
    """What admins read when the bot cannot give or take the role (checked first, or refused)."""
    if reason == "unknown_role":
        return f"the role {mention(role_id)} no longer exists; remove this reward"
    if reason == "manage_roles":
        return (f"I cannot give {mention(role_id)}: the bot lacks **Manage Roles** in this server. "
                "Give its role that permission in Server Settings → Roles")
    if reason == "position":
        return (f"I cannot give {mention(role_id)}: it sits at or above the bot's own role. Drag "
                f"the bot's role above {mention(role_id)} in Server Settings → Roles")
    return (f"Discord answered Missing Permissions for {mention(role_id)}: give the bot "
            f"**Manage Roles** and drag its role above {mention(role_id)} in Server Settings → Roles")


def bad_role(text: str) -> str:
    return f"{text.strip()!r} is not a role: pick one (role:@Name) or give its id"


def added(threshold: int, role_id: str, kind: str = "streak", topic: str | None = None,
          problem: str | None = None, *, weekly: bool = False) -> str:
    if kind == "solved":
        text = (f"Members who have solved **{threshold}** challenge{'s' if threshold != 1 else ''} "
                f"now get {mention(role_id)} (the moment a /submit verdict gets them there).")
    elif kind == "readiness":
        text = (f"Members whose readiness in **{topic}** reaches **{threshold}%** now get "
                f"{mention(role_id)} (the moment an answer gets them there).")
    else:
        unit = "weekly streak" if weekly else "daily streak"
        text = (f"Members whose {unit} here reaches **{threshold}** now get "
                f"{mention(role_id)} (and lose it when the streak ends).")
    if problem is None:
        return text
    return f"{text}\n⚠️ {problem}; until then nobody gets it."


def need_milestone() -> str:
    return ("Say which milestone earns it: streak:7, solved:5, or readiness:70 with a topic "
            "(one of them).")


def too_many() -> str:
    return f"This channel already has {MAX_REWARDS_PER_CHANNEL} rewards; remove one first."


def removed(role_id: str, found: bool) -> str:
    if not found:
        return f"There is no reward for {mention(role_id)} here."
    return f"No more reward for {mention(role_id)} here (members keep what they were given)."


def listing(rows: list[tuple[str, int, str | None, str, str | None, int]], *, weekly: bool = False) -> str:
    """(kind, threshold, topic, role id, problem, members holding it) per reward; ``weekly``:
    the channel counts streaks in weeks."""
    if not rows:
        return "No role rewards here yet: /daily rewards add streak:7 role:@Regular"
    lines = []
    for kind, threshold, topic, role_id, problem, holders in sorted(
            rows, key=lambda r: (KINDS.index(r[0]) if r[0] in KINDS else 9, r[2] or "", r[1], r[3])):
        line = (f"{milestone(kind, threshold, topic, weekly=weekly)} → {mention(role_id)} · "
                f"{holders} member{'s' if holders != 1 else ''}")
        lines.append(line + (f"\n⚠️ {problem}" if problem else ""))
    return "\n".join(lines)
