"""Leaderboards and study groups: who scored most in a channel, workspace or group."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core import groups, leaderboard, progress_views, render
from bot.core.identity import Where, Who, channel_row, member_row
from bot.core.messages import Message
from bot.core.periods import Period, Scope, parse_enum, period_label, period_start

if TYPE_CHECKING:
    from bot.core.service import Drill

BOARD_SIZE = 10


class Boards:
    def __init__(self, drill: Drill) -> None:
        self.drill = drill

    async def leaderboard(
        self, who: Who, where: Where, *, scope: str | None = None, period: str | None = None,
        group: str | None = None, workspace_word: str = "workspace", limit: int = BOARD_SIZE,
    ) -> Message:
        try:
            scope_v = parse_enum(Scope, scope or ("group" if group else None), Scope.CHANNEL)
            period_v = parse_enum(Period, period, Period.WEEK)
        except ValueError as exc:
            return render.notice(str(exc))
        d = self.drill
        now = d.clock.now()
        async with d.db.write() as session:
            member = await member_row(session, who, d.clock)
            channel = await channel_row(session, where)
            tz = channel.timezone
            since = period_start(period_v, now, tz)  # type: ignore[arg-type]
            workspace_id = None
            if scope_v is Scope.CHANNEL:
                scope_id, label = channel.id, "this channel"
            elif scope_v is Scope.WORKSPACE:
                scope_id, label = member.workspace_id, f"this {workspace_word}"
            else:
                if not group:
                    return render.notice("Name the study group: /leaderboard scope:group group:<name>")
                try:
                    found = await groups.find(session, who.platform, who.workspace, group)
                except groups.GroupError as exc:
                    return render.notice(str(exc))
                scope_id, label, workspace_id = found.id, f"group {found.name}", member.workspace_id
            rows = await leaderboard.top(
                session, scope_v, scope_id, since, limit=limit, workspace_id=workspace_id  # type: ignore[arg-type]
            )
            mine = await leaderboard.rank_of(
                session, scope_v, scope_id, since, member.id, workspace_id=workspace_id  # type: ignore[arg-type]
            )
        title = f"Leaderboard · {label} · {period_label(period_v, now, tz)}"  # type: ignore[arg-type]
        return progress_views.board_message(title, rows, mine, limit)

    async def group(self, who: Who, action: str, name: str | None = None) -> Message:
        action = (action or "list").strip().lower()
        d = self.drill
        try:
            async with d.db.write() as session:
                if action == "list":
                    return progress_views.group_listing(await groups.listing(session, who.platform, who.workspace))
                if not name:
                    return render.notice(f"/group {action} needs a group name.")
                if action == "create":
                    group = await groups.create(session, d.clock, who, name)
                    return render.notice(f"Created study group **{group.name}** and added you to it.")
                if action == "join":
                    group, new = await groups.join(session, d.clock, who, name)
                    return render.notice(
                        f"You joined **{group.name}**." if new else f"You are already in **{group.name}**."
                    )
                if action == "leave":
                    group, was = await groups.leave(session, d.clock, who, name)
                    return render.notice(
                        f"You left **{group.name}**." if was else f"You were not in **{group.name}**."
                    )
        except groups.GroupError as exc:
            return render.notice(str(exc))
        return render.notice(f"Unknown /group action {action!r}; use create, join, leave or list.")
