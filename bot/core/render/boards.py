"""Boards as text: leaderboards, the study group list, a round's standings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.domain.messages import Message
from bot.core.render.notices import notice

if TYPE_CHECKING:
    from bot.core.progress.leaderboard import Row as BoardRow
    from bot.core.stores import Standing

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}


def board_message(title: str, rows: Sequence[BoardRow], mine: BoardRow | None, shown: int) -> Message:
    msg = Message(title=title)
    if not rows:
        return msg.text("Nobody has scored yet. Answer a daily question to get on the board!")
    msg.text("\n".join(
        f"{MEDALS.get(r.rank, f'{r.rank}.')} **{r.name}** — {r.points} pts · "
        + (f"{round(100 * r.accuracy)}% of {r.answered}" if r.answered else "coding challenges")
        for r in rows
    ))
    if mine and mine.rank > shown:
        msg.footer = f"You: #{mine.rank} with {mine.points} pts"
    elif mine is None:
        msg.footer = "You are not on this board yet."
    return msg


def group_listing(found: Sequence[tuple[str, int]]) -> Message:
    if not found:
        return notice("No study groups yet. Create one with /group create <name>.")
    return notice("**Study groups**\n" + "\n".join(f"• {n} ({c} members)" for n, c in found))


def standings_message(label: str, rows: Sequence[Standing]) -> Message:
    msg = Message(title=f"Round — {label}")
    if not rows:
        return msg.text("No answers yet.")
    return msg.text("\n".join(
        f"{i}. **{r.name}** — {r.points} pts ({r.correct} correct)" for i, r in enumerate(rows, 1)
    ))
