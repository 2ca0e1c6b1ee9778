"""A member's stats: answers, accuracy, streak, mastery and readiness per topic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.domain.messages import Message
from bot.core.domain.scoring import freeze_text
from bot.core.domain.topics import TOPICS

if TYPE_CHECKING:
    from bot.core.learning.readiness import OverallReadiness, Readiness
    from bot.core.progress.stats import MemberStats



def _share_band(expected: float, low: float, high: float) -> str:
    return f"{round(100 * expected)}% ({round(100 * low)}-{round(100 * high)}%)"


def _topic_readiness(ready: Readiness | None) -> str:
    if ready is None:
        return ""
    if not ready.enough_data:
        return f" · readiness: {ready.describe()}"
    return f" · readiness {_share_band(ready.expected, ready.low, ready.high)}"


def _overall_readiness(overall: OverallReadiness) -> str:
    figure = (_share_band(overall.expected, overall.low, overall.high) if overall.enough_data
              else overall.describe())
    line = f"Interview readiness (expected share right on a difficulty-3 question): {figure}"
    if overall.raise_most:
        line += " · raise it most with " + ", ".join(TOPICS[t] for t in overall.raise_most)
    return line


def stats_message(name: str, st: MemberStats, member_groups: Sequence[str]) -> Message:
    msg = Message(title=f"Stats for {name}", ephemeral=True)
    if not st.answered and not st.pending:
        return msg.text("No answers yet. Try /quiz or answer today's question!")
    pending = f" (+{st.pending} waiting for the reveal)" if st.pending else ""
    freezes = freeze_text(st.freezes, st.freezes_used)
    msg.text(
        f"**{st.answered}** answered{pending} · **{round(100 * st.accuracy)}%** correct · "
        + " · ".join(line.in_stats() for line in st.streaks) + (f" · {freezes}" if freezes else "")
    )
    msg.text("\n".join(
        f"{TOPICS[t.topic]}: {round(100 * t.accuracy)}% of {t.answered} · mastery "
        f"{t.mastered}/{t.available}" + _topic_readiness(st.readiness.get(t.topic))
        for t in st.topics
    ))
    if st.weakest:
        msg.text("Weakest: " + ", ".join(TOPICS[t.topic] for t in st.weakest) + " — try /review")
    if st.overall is not None:
        msg.text(_overall_readiness(st.overall))
    if member_groups:
        msg.footer = "Groups: " + ", ".join(member_groups)
    return msg
