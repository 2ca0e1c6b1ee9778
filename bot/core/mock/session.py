"""The pure part of /mock: what a mock holds, how items are marked, and every text a member
reads (item messages, the countdown, the report). No database, no clock: the desk passes
times and rows in, so each rule is tested on its own.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fsrs import Rating

from bot.core.content.bank import Question
from bot.core.domain.actions import Action, Verb
from bot.core.domain.messages import Button, ButtonStyle, Message
from bot.core.domain.topics import TOPICS
from bot.core.render.questions import LETTERS, choice_lines, shown_code, stars

MCQ_COUNT = 8
EXPLAIN_COUNT = 2
SHORT_MOCK_MINUTES = 20  # below this, one explain-it question instead of two
KEY_POINTS_MAX = 6
MCQ, EXPLAIN, CODE = "mcq", "explain", "code"
SECTION_NAMES = {MCQ: "MCQs", EXPLAIN: "Explain-it (self-graded)", CODE: "Coding"}
ITEM_NAMES = {MCQ: "MCQ", EXPLAIN: "Explain-it", CODE: "Coding"}

# button args: item index * STRIDE + what (a pick's position, a tick, done)
STRIDE = 100
TICK = 10  # TICK + k: toggle key point k
DONE = 90  # done with this item (explain-it after ticking, skip, the coding challenge)

ANSWER_HOW = ("Write your answer with `{answer} …` as you would say it in the interview; then "
              "tick the key points you covered (self-graded).")
TICK_HOW = ("**Model answer — key points** (self-graded: tick each point your answer covered, "
            "then Done):")
CODE_HOW = "Submit with `{submit}` (judged in the sandbox), then press Done. Done without a verdict counts as 0."
RECORDED = "Answer recorded; results come in the report."
NO_MOCK = "You have no mock running. Start one with `{mock}` (e.g. `{mock} ml 30`)."
ALREADY = "You already have a mock running; here is where you are."
NOT_EXPLAIN = "The item on screen is not an explain-it question; answer it with its buttons."
STALE = "That button belongs to an earlier item of your mock; here is the current one."
STRAY_TEXT = ("I don't know what {text!r} means here: `{mock} [track] [minutes]` starts a mock, "
              "`{mock} answer …` answers an explain-it question, `{mock} date YYYY-MM-DD` sets "
              "your interview date.")
READY_PER_TRACK = "🎯 Readiness per track (expected share right on a difficulty-3 question): "
UNKNOWN_TRACK = "There is no track {track!r}. Tracks here: {tracks}."
TRACKS_STORED = ("Members can now take them with /mock (their names show in its track list); "
                 "uploading a tracks file again replaces them:")
GROUP_CLOSED = "Group mock #{id} has closed; its board is in the thread of its post."
GROUP_BUSY = "You have a mock running; finish it or end it with `{end}` first, then press Start again."
GROUP_EMPTY = "This group mock's questions are no longer in the banks."
GROUP_ALREADY = "You are in this group mock; here is where you are."
NOT_YOURS = "This is someone else's mock. Start your own with /mock."


def item_count(minutes: int) -> tuple[int, int, int]:
    """MCQs, explain-it questions and coding challenges of a mock of ``minutes``."""
    return MCQ_COUNT, 1 if minutes < SHORT_MOCK_MINUTES else EXPLAIN_COUNT, 1


def key_points(question: Question) -> list[str]:
    """The model answer as a checklist: its bullet points, else the explanation's sentences."""
    bullets = [m.group(1).strip() for m in re.finditer(r"^\s*[-*]\s+(.+)$", question.answer, re.M)]
    if len(bullets) >= 2:
        return bullets[:KEY_POINTS_MAX]
    text = " ".join(question.explanation.split()) or " ".join(question.answer.split())
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", text) if s.strip()]
    return sentences[:KEY_POINTS_MAX]


def explain_rating(covered: int, total: int) -> Rating:
    """A self-graded answer drives the card like a flashcard grade: all points Good, half or
    more Hard, less Again (a miss)."""
    if total and covered >= total:
        return Rating.Good
    if total and covered * 2 >= total:
        return Rating.Hard
    return Rating.Again


def duration(seconds: float) -> str:
    """`45 s`, `2 min 5 s`: members read times, not decimals."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"


def countdown(now: datetime, deadline: datetime) -> str:
    left = max(0, int((deadline - now).total_seconds()))
    return f"⏱ {left // 60}:{left % 60:02d} left · ends {deadline:%H:%M} UTC"


def action(mock_id: int, index: int, what: int) -> str:
    return Action(Verb.MOCK, mock_id, index * STRIDE + what).encode()


@dataclass(frozen=True)
class Screen:
    """Where a mock stands, for the item messages' title and footer."""

    mock_id: int
    index: int
    total: int
    section_number: int  # 1-based within the item's section
    section_size: int
    track_name: str
    now: datetime
    deadline: datetime

    def title(self, kind: str, question_or_title: str) -> str:
        return f"Mock · {ITEM_NAMES[kind]} {self.section_number}/{self.section_size} · {question_or_title}"

    def footer(self) -> str:
        return f"{countdown(self.now, self.deadline)} · item {self.index + 1}/{self.total} · {self.track_name}"


def _topic_line(question: Question) -> str:
    return f"{TOPICS.get(question.topic, question.topic)} · {stars(question.difficulty)}"


def mcq_message(screen: Screen, question: Question, order: Sequence[int]) -> Message:
    msg = Message(title=screen.title(MCQ, _topic_line(question)), ephemeral=True)
    msg.text(question.shown_prompt)
    if question.shown_snippet is not None:
        msg.code(shown_code(question))
    msg.text(choice_lines(question, order))
    msg.buttons = [Button(action(screen.mock_id, screen.index, pos), LETTERS[pos], ButtonStyle.PRIMARY)
                   for pos in range(len(order))]
    msg.footer = screen.footer()
    return msg


def explain_message(screen: Screen, question: Question, answer_command: str) -> Message:
    msg = Message(title=screen.title(EXPLAIN, _topic_line(question)), ephemeral=True)
    msg.text(question.prompt)
    msg.text(ANSWER_HOW.format(answer=answer_command))
    msg.buttons = [Button(action(screen.mock_id, screen.index, DONE), "Skip")]
    msg.footer = screen.footer()
    return msg


def checklist_message(screen: Screen, question: Question, answer: str, ticked: set[int]) -> Message:
    """The member's own answer (inert, in a code block), then the key points to tick."""
    points = key_points(question)
    msg = Message(title=screen.title(EXPLAIN, "your answer"), ephemeral=True)
    msg.code(answer, "text")
    lines = [f"{'☑' if k in ticked else '☐'} {k + 1}. {p}" for k, p in enumerate(points)]
    msg.text(TICK_HOW + "\n" + "\n".join(lines))
    msg.buttons = [Button(action(screen.mock_id, screen.index, TICK + k), str(k + 1),
                          ButtonStyle.SUCCESS if k in ticked else ButtonStyle.SECONDARY)
                   for k in range(len(points))]
    msg.buttons.append(Button(action(screen.mock_id, screen.index, DONE), "Done", ButtonStyle.PRIMARY))
    msg.footer = screen.footer()
    return msg


def code_message(screen: Screen, challenge_view: Message, submit_command: str) -> Message:
    msg = Message(title=screen.title(CODE, challenge_view.title or ""), blocks=list(challenge_view.blocks),
                  ephemeral=True)
    msg.text(CODE_HOW.format(submit=submit_command))
    msg.buttons = [Button(action(screen.mock_id, screen.index, DONE), "Done", ButtonStyle.PRIMARY)]
    msg.footer = screen.footer()
    return msg


# ---- the report ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemResult:
    kind: str
    topic: str
    prompt: str  # the question, or the challenge's title
    score: float | None  # None: not answered
    seconds: float | None  # shown to answered
    missed_note: str = ""  # the key, the explanation, or the verdict


@dataclass(frozen=True)
class Report:
    track_name: str
    minutes: int
    ended: str  # how it ended, as a sentence
    items: list[ItemResult]
    median_s: float | None  # the member's median answer time before this mock
    ready_before: float | None
    ready_after: float | None
    weakest: list[str] = field(default_factory=list)  # topic slugs, weakest first
    countdown: str | None = None  # to the member's interview date, if set
    next_mock: str | None = None  # the suggested next mock, as a next step


def _mark(score: float) -> str:
    return f"{score:g}" if score == int(score) else f"{score:.1f}"


def _pace(seconds: float, median: float | None) -> str:
    if median is None or median <= 0:
        return duration(seconds)
    if seconds > median * 1.25:
        return f"{duration(seconds)} (slower than your median {duration(median)})"
    if seconds < median * 0.75:
        return f"{duration(seconds)} (faster than your median {duration(median)})"
    return f"{duration(seconds)} (about your median)"


def _ready(value: float | None) -> str:
    return "too little data" if value is None else f"{value:.0%}"


def misses(items: Sequence[ItemResult]) -> list[ItemResult]:
    return [i for i in items if i.score is None or i.score < 1]


def weakest_topics(items: Sequence[ItemResult], shown: int = 2) -> list[str]:
    """Topics by share of marks lost in this mock, then by name."""
    per: dict[str, list[float]] = {}
    for item in items:
        got = per.setdefault(item.topic, [0.0, 0.0])
        got[0] += item.score or 0.0
        got[1] += 1
    lost = [t for t, (s, n) in per.items() if s < n]
    return sorted(lost, key=lambda t: (per[t][0] / per[t][1], t))[:shown]


def report_message(report: Report, review_command: str, quiz_command: str) -> Message:
    items = report.items
    total = sum(i.score or 0.0 for i in items)
    msg = Message(title=f"📋 Mock interview report · {report.track_name} · {report.minutes} min",
                  ephemeral=True)
    msg.text(report.ended)
    share = total / len(items) if items else 0.0
    sections = []
    for kind in (MCQ, EXPLAIN, CODE):
        of = [i for i in items if i.kind == kind]
        if of:
            sections.append(f"{SECTION_NAMES[kind]} {_mark(sum(i.score or 0.0 for i in of))}/{len(of)}")
    msg.text(f"**Score:** {_mark(total)}/{len(items)} ({share:.0%}) · " + " · ".join(sections))
    topics: dict[str, list[float]] = {}
    for item in items:
        got = topics.setdefault(item.topic, [0.0, 0])
        got[0] += item.score or 0.0
        got[1] += 1
    msg.text("**By topic:** " + " · ".join(
        f"{TOPICS.get(t, t)} {_mark(s)}/{int(n)}" for t, (s, n) in sorted(topics.items())))
    median = "no MCQ answers before this mock" if report.median_s is None else duration(report.median_s)
    lines = []
    for n, item in enumerate(items, 1):
        mark = "—" if item.score is None else ("✅" if item.score >= 1 else
                                               "❌" if item.score <= 0 else f"{_mark(item.score)}")
        when = ("not answered" if item.seconds is None else
                _pace(item.seconds, report.median_s) if item.kind == MCQ else duration(item.seconds))
        lines.append(f"{n}. {ITEM_NAMES[item.kind]} · {TOPICS.get(item.topic, item.topic)} · {mark} · {when}")
    msg.text(f"**Time per question** (your median MCQ answer before this mock: {median}):\n"
             + "\n".join(lines))
    missed = misses(items)
    if missed:
        msg.text("**Missed:**\n" + "\n".join(
            f"• {i.prompt}" + (f" — {i.missed_note}" if i.missed_note else "") for i in missed))
    msg.text(f"**Readiness** (expected share right on a difficulty-3 question): "
             f"{_ready(report.ready_before)} before → {_ready(report.ready_after)} after")
    if report.countdown:
        msg.text(report.countdown)
    steps = []
    carded = [i for i in missed if i.kind != CODE]
    if carded:
        what = "miss" if len(carded) == 1 else f"{len(carded)} misses"
        steps.append(f"`{review_command}` brings back the {what} (now in your spaced-repetition deck)")
    if report.weakest:
        names = ", ".join(TOPICS.get(t, t) for t in report.weakest)
        steps.append(f"drill your weakest topics: {names} (`{quiz_command} {report.weakest[0]}`)")
    if not steps:
        steps.append("a clean sheet: try a longer mock or another track")
    if report.next_mock:
        steps.append(report.next_mock)
    msg.text("**Next steps:** " + "; ".join(steps) + ".")
    return msg


def median_seconds(response_ms: Sequence[int]) -> float | None:
    return statistics.median(response_ms) / 1000 if response_ms else None


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(timedelta(0), end - start).total_seconds()
