"""Leaderboards and study groups: who scored most in a channel, workspace or group. The rows
come through ``ProgressReads`` and ``GroupStore`` (bot.core.progress.ports)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.domain.periods import Period, Scope, parse_enum, period_label, period_start
from bot.core.progress import chart_data, groups, progress_charts
from bot.core.render.boards import board_message, group_listing
from bot.core.render.notices import notice

if TYPE_CHECKING:
    from bot.core.drill.ports import Basics
    from bot.core.progress.ports import GroupStore, ProgressReads

BOARD_SIZE = 10
CHART_LINES = 5  # the top members drawn as lines under a board
GROUP_WEEKS = 8


class Boards:
    def __init__(self, drill: Basics, reads: ProgressReads, groups: GroupStore) -> None:
        self.drill = drill
        self.reads = reads
        self.groups = groups

    async def leaderboard(
        self, who: Who, where: Where, *, scope: str | None = None, period: str | None = None,
        group: str | None = None, workspace_word: str = "workspace", limit: int = BOARD_SIZE,
        chart: bool = False,
    ) -> Message:
        try:
            scope_v = parse_enum(Scope, scope or ("group" if group else None), Scope.CHANNEL)
            period_v = parse_enum(Period, period, Period.WEEK)
        except ValueError as exc:
            return notice(str(exc))
        d = self.drill
        now = d.clock.now()
        async with d.db.write() as session:
            member = await d.identities.member(session, who)
            channel = await d.identities.channel(session, where)
            tz = channel.timezone
            since = period_start(period_v, now, tz)
            workspace_id = None
            if scope_v is Scope.CHANNEL:
                scope_id, label = channel.id, "this channel"
            elif scope_v is Scope.WORKSPACE:
                scope_id, label = member.workspace_id, f"this {workspace_word}"
            else:
                if not group:
                    return notice("Name the study group: /leaderboard scope:group group:<name>")
                try:
                    found = await self.groups.find(session, who.platform, who.workspace, group)
                except groups.GroupError as exc:
                    return notice(str(exc))
                scope_id, label, workspace_id = found.id, f"group {found.name}", member.workspace_id
            rows = await self.reads.top(
                session, scope_v, scope_id, since, limit=limit, workspace_id=workspace_id
            )
            mine = await self.reads.rank_of(
                session, scope_v, scope_id, since, member.id, workspace_id=workspace_id
            )
            title = f"Leaderboard · {label} · {period_label(period_v, now, tz)}"
            lines = None
            if chart and rows:
                top = list(rows)[:CHART_LINES]
                events = await self.reads.settled_points(
                    session, [r.member_id for r in top], since,
                    channel_id=scope_id if scope_v is Scope.CHANNEL else None,
                    workspace_id=member.workspace_id if scope_v is not Scope.CHANNEL else None,
                )
                names = {r.member_id: r.name for r in top}
                start = (since or min((t for _, t, _ in events), default=now)).astimezone(ZoneInfo(tz)).date()
                lines = chart_data.cumulative_lines(
                    ((names[m], t, p) for m, t, p in events), start,
                    now.astimezone(ZoneInfo(tz)).date(), tz, [r.name for r in top],
                )
        message = board_message(title, rows, mine, limit)
        if lines is not None:
            board = chart_data.BoardChart(title, lines)
            message.text(board.alt_text())
            message.attachments.append(await progress_charts.board_attachment(board))
        return message

    async def group_stats(self, who: Who, where: Where, name: str) -> Message:
        """A study group next to its channel: accuracy per topic, members' weekly activity."""
        d = self.drill
        now = d.clock.now()
        async with d.db.write() as session:
            found = await self.groups.find(session, who.platform, who.workspace, name)
            channel = await d.identities.channel(session, where)
            members = await self.reads.group_members(session, found.id)
            ids = [m for m, _ in members]
            mine = await self.reads.topic_accuracy(session, member_ids=ids) if ids else {}
            theirs = await self.reads.topic_accuracy(session, channel_id=channel.id)
            since = now - timedelta(weeks=GROUP_WEEKS)
            times = await self.reads.answer_times(session, ids, since) if ids else []
            tz = channel.timezone
        topics = tuple((t, mine.get(t), theirs.get(t)) for t in sorted(set(mine) | set(theirs)))
        weekly = tuple(
            (member_name, chart_data.weekly_counts([t for m, t in times if m == member_id], now, tz, GROUP_WEEKS))
            for member_id, member_name in members
        )
        chart = chart_data.GroupChart(found.name, topics, weekly)
        message = Message(title=f"Study group {found.name}", ephemeral=True)
        message.text(chart.alt_text())
        if topics or any(sum(w) for _, w in weekly):
            message.attachments.append(await progress_charts.group_attachment(chart))
        return message

    async def group(self, who: Who, action: str, name: str | None = None) -> Message:
        action = (action or "list").strip().lower()
        d = self.drill
        try:
            async with d.db.write() as session:
                if action == "list":
                    return group_listing(await self.groups.listing(session, who.platform, who.workspace))
                if not name:
                    return notice(f"/group {action} needs a group name.")
                if action == "create":
                    group = await self.groups.create(session, who, name)
                    return notice(f"Created study group **{group.name}** and added you to it.")
                if action == "join":
                    group, new = await self.groups.join(session, who, name)
                    return notice(
                        f"You joined **{group.name}**." if new else f"You are already in **{group.name}**."
                    )
                if action == "leave":
                    group, was = await self.groups.leave(session, who, name)
                    return notice(
                        f"You left **{group.name}**." if was else f"You were not in **{group.name}**."
                    )
        except groups.GroupError as exc:
            return notice(str(exc))
        return notice(f"Unknown /group action {action!r}; use create, join, leave or list.")
