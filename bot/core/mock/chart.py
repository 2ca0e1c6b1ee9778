"""The member's mock scores over time, for /stats: a line per track, with a text alternative
carrying the same figures."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.domain.messages import Attachment
from bot.core.render import charts

SHOWN = 20  # the latest mocks a chart draws


@dataclass(frozen=True)
class Taken:
    when: datetime
    score: float  # 0-1
    track_name: str


def summary(taken: list[Taken]) -> str:
    last = taken[-1]
    best = max(t.score for t in taken)
    return (f"🎤 Mock interviews: {len(taken)} taken · last {last.score:.0%} ({last.track_name}, "
            f"{last.when:%Y-%m-%d}) · best {best:.0%}")


def alt_text(taken: list[Taken]) -> str:
    return "Mock interview scores over time: " + ", ".join(
        f"{t.when:%Y-%m-%d} {t.track_name} {t.score:.0%}" for t in taken[-SHOWN:])


def png(taken: list[Taken]) -> bytes:
    fig = charts._figure(6.0, 2.6)
    ax = fig.add_subplot(1, 1, 1)
    charts._style(ax)
    shown = taken[-SHOWN:]
    for name in sorted({t.track_name for t in shown}):
        points = [(i, t.score * 100) for i, t in enumerate(shown) if t.track_name == name]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
    ax.set_ylim(0, 100)
    ax.set_xticks(range(len(shown)), [f"{t.when:%m-%d}" for t in shown], fontsize=8)
    ax.set_ylabel("score %", color=charts.INK, fontsize=9)
    ax.set_title("Mock interview scores", color=charts.INK, fontsize=11, loc="left")
    charts._legend_above(ax)
    fig.tight_layout()
    return charts._png(fig)


async def attachment(taken: list[Taken]) -> Attachment:
    return await charts.render(lambda: png(taken), "mocks.png", alt_text(taken))
