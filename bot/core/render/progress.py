"""Progress rendered into messages: a member's stats, boards, group lists, round standings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core import render
from bot.core.model.messages import Message
from bot.core.model.topics import TOPICS

if TYPE_CHECKING:
    from bot.core.progress.leaderboard import Row as BoardRow
    from bot.core.progress.stats import MemberStats
    from bot.storage.rounds import Standing

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}


def stats_message(name: str, st: MemberStats, member_groups: Sequence[str]) -> Message:
    msg = Message(title=f"Stats for {name}", ephemeral=True)
    if not st.answered and not st.pending:
        return msg.text("No answers yet. Try /quiz or answer today's question!")
    pending = f" (+{st.pending} waiting for the reveal)" if st.pending else ""
    msg.text(
        f"**{st.answered}** answered{pending} · **{round(100 * st.accuracy)}%** correct · "
        f"streak **{st.current_streak}** (best {st.best_streak})"
    )
    msg.text("\n".join(
        f"{TOPICS[t.topic]}: {round(100 * t.accuracy)}% of {t.answered} · mastery "
        f"{t.mastered}/{t.available}"
        for t in st.topics
    ))
    if st.weakest:
        msg.text("Weakest: " + ", ".join(TOPICS[t.topic] for t in st.weakest) + " — try /review")
    if member_groups:
        msg.footer = "Groups: " + ", ".join(member_groups)
    return msg


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
        return render.notice("No study groups yet. Create one with /group create <name>.")
    return render.notice("**Study groups**\n" + "\n".join(f"• {n} ({c} members)" for n, c in found))


def standings_message(label: str, rows: Sequence[Standing]) -> Message:
    msg = Message(title=f"Round — {label}")
    if not rows:
        return msg.text("No answers yet.")
    return msg.text("\n".join(
        f"{i}. **{r.name}** — {r.points} pts ({r.correct} correct)" for i, r in enumerate(rows, 1)
    ))
