"""🚩 Report a question: members flag a question they think is broken; admins review the reports.

A report is one per member per question (a second one updates it), names one of four reasons
and may carry a short note. Open reports wait in ``/bank review`` beside suggested questions;
from there an admin retires a community question (no longer picked; its posts and answers stay)
or dismisses the report. Built-in questions are not retired from chat: their reports show in
``torchdrill content quality --export`` for the maintainers. Every reply text lives here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.core.commands.replies import Words
from bot.core.content.bank import Library
from bot.core.content.community import inert, is_community_id
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import Clock
from bot.core.domain.forms import Form, FormChoice, FormField
from bot.core.domain.identity import Who
from bot.core.domain.messages import Button, ButtonStyle, Message
from bot.core.domain.report_reasons import NOTE_MAX, REPORT_REASONS
from bot.core.domain.topics import TOPICS
from bot.core.render.notices import counted, notice

# (stored value, what members read); a button's arg is the position + 1 (0 opens the form)
REASONS: tuple[tuple[str, str], ...] = tuple((r.value, r.label) for r in REPORT_REASONS)
REASON_LABELS = dict(REASONS)
FORM_KEY = "report"
FORM_TITLE = "Report this question"  # Slack shows at most 24 characters
FORM_SUBMIT = "Send report"
FORM_REASON = "What is wrong with it?"
FORM_NOTE = "Note for the admins (optional)"
FORM_NOTE_HINT = f"At most {NOTE_MAX} characters, shown to admins as plain text."

NO_POST = "There is no question {post} here to report."
MENU_TITLE = "🚩 Report this question"
MENU_TEXT = "What is wrong with it? Admins review every report."
MENU_AGAIN = "You reported it as **{reason}**; another pick updates your report."
MENU_NOTE = "To add a note: {command} post:{post} reason:{value} note:…"
THANKS = "Thanks: your report (**{reason}**) is in the admins' review queue."
UPDATED = "You had already reported this question; your report now says **{reason}**."
NOTE_KEPT = "Your note:"
BAD_REASON = "Say what is wrong: reason:" + "|".join(value for value, _ in REASONS) + "."
NONE_OPEN = "No question reports are waiting for review."
NO_REPORT = "There is no open question report #{number} here; /bank review reports shows the next one."
BUILTIN_KEPT = ("Report #{number} is about a built-in question: it cannot be retired here, and the "
                "maintainers see it in `torchdrill content quality --export`. Dismiss it once noted.")
RETIRED = ("Question `{question}` is retired: it is no longer picked; its posts and answers stay. "
           "{closed} closed. A new upload of its bank that still holds it serves it again.")
DISMISSED = "Report #{number} dismissed; the question stays as it is."


def report_form(post_id: int) -> Form:
    """The 🚩 button's modal (Discord, Slack): a reason from a menu and an optional note; its
    submit runs /report for this post, so every text and rule after it is ``report``'s. The
    console has no modals: its 🚩 shows the reasons as buttons (``menu``)."""
    return Form(
        FORM_KEY, FORM_TITLE, FORM_SUBMIT, ("report",), (("post", str(post_id)),),
        (FormField("reason", FORM_REASON, choices=tuple(FormChoice(r.value, r.label, r.description)
                                                        for r in REPORT_REASONS)),
         FormField("note", FORM_NOTE, FORM_NOTE_HINT, required=False, max_length=NOTE_MAX, multiline=True)),
    )


def form_of(action: Action) -> Form | None:
    """The form a button opens instead of a reply (decided without storage: a modal must be the
    interaction's first response); None for every other button."""
    if action.verb is Verb.FLAG and action.arg == 0:
        return report_form(action.post_id)
    return None


def reason_of(value: str) -> str | None:
    value = value.strip().lower().replace("_", "-").replace(" ", "-")
    return value if value in REASON_LABELS else None


@dataclass(frozen=True)
class ReportCounts:
    """Open reports of one question, per reason, with the notes (for the maintainers' export)."""

    question: str
    reasons: dict[str, int]
    notes: tuple[str, ...]

    def describe(self) -> str:
        return ", ".join(f"{REASON_LABELS[r].lower()} ×{n}" for r, n in sorted(self.reasons.items()))


@dataclass(frozen=True)
class OpenReport:
    """One open report as the admins' queue shows it."""

    number: int
    reporter: str
    question: str
    reason: str
    note: str | None
    waiting: int  # open reports in this community
    same: int  # open reports of this question in this community


@dataclass(frozen=True)
class Recorded:
    again: bool  # the member had reported this question before: updated
    note: str | None  # the note the report now holds


class ReportStore(Protocol):
    """What the desk needs from storage (bot/storage/question_reports.py implements it)."""

    async def question_of(self, who: Who, post_id: int) -> str | None:
        """The question of a post of the member's own community (None: no such post here)."""
        ...

    async def reason_of(self, who: Who, question: str) -> str | None: ...

    async def record(self, who: Who, post_id: int, question: str, reason: str, note: str | None,
                     now: datetime) -> Recorded: ...

    async def waiting(self, who: Who) -> int: ...

    async def next_open(self, who: Who) -> OpenReport | None: ...

    async def open_question(self, who: Who, number: int) -> str | None:
        """The question of open report ``number`` of the member's community."""
        ...

    async def retire(self, who: Who, number: int, now: datetime) -> int | None:
        """Retire the community question of open report ``number``; the open reports of it
        closed (None: no such question in this community)."""
        ...

    async def dismiss(self, who: Who, number: int) -> bool: ...

    async def open_counts(self, question_ids: Collection[str]) -> dict[str, ReportCounts]: ...


class ReportDesk:
    def __init__(self, store: ReportStore, library: Library, clock: Clock,
                 refresh: Callable[[], Awaitable[None]]) -> None:
        """``refresh`` reloads the shelf of community questions after a retirement."""
        self.store, self.library, self.clock, self.refresh = store, library, clock, refresh

    # ---- members ----------------------------------------------------------------------------
    async def press(self, who: Who, post_id: int, arg: int) -> Message:
        """The 🚩 button where no modal opens (the console; arg 0: the reasons as buttons) and a
        reason's button (arg 1-4: the report)."""
        if arg == 0:
            return await self.menu(who, post_id)
        if not 1 <= arg <= len(REASONS):
            return notice(NO_POST.format(post=post_id))
        return await self.report(who, post_id, REASONS[arg - 1][0], None)

    async def menu(self, who: Who, post_id: int) -> Message:
        question = await self.store.question_of(who, post_id)
        if question is None:
            return notice(NO_POST.format(post=post_id))
        earlier = await self.store.reason_of(who, question)
        msg = Message(title=MENU_TITLE, ephemeral=True).text(MENU_TEXT)
        if earlier is not None:
            msg.text(MENU_AGAIN.format(reason=REASON_LABELS.get(earlier, earlier)))
        msg.text(MENU_NOTE.format(command=Words().command("report"), post=post_id, value="|".join(
            value for value, _ in REASONS)))
        msg.buttons = [Button(Action(Verb.FLAG, post_id, k).encode(), label, ButtonStyle.SECONDARY)
                       for k, (_, label) in enumerate(REASONS, 1)]
        return msg

    async def report(self, who: Who, post_id: int, reason: str, note: str | None) -> Message:
        """Record (or update) this member's report of the question of ``post_id``."""
        value = reason_of(reason)
        if value is None:
            return notice(BAD_REASON)
        note = inert(note.strip())[:NOTE_MAX] if note and note.strip() else None
        question = await self.store.question_of(who, post_id)
        if question is None:
            return notice(NO_POST.format(post=post_id))
        recorded = await self.store.record(who, post_id, question, value, note, self.clock.now())
        msg = notice((UPDATED if recorded.again else THANKS).format(reason=REASON_LABELS[value]))
        if recorded.note:
            msg.text(NOTE_KEPT)
            msg.code(recorded.note, language="text")  # a code block: every platform shows it as typed
        return msg

    # ---- admins -----------------------------------------------------------------------------
    async def waiting(self, who: Who) -> int:
        return await self.store.waiting(who)

    async def review_next(self, who: Who) -> Message:
        """The oldest open report, with the question as members saw it and what an admin can do."""
        row = await self.store.next_open(who)
        if row is None:
            return notice(NONE_OPEN)
        msg = Message(title=f"Question report #{row.number} by {row.reporter} ({row.waiting} waiting)",
                      ephemeral=True)
        question = self.library.get(row.question)
        community = is_community_id(row.question)
        where = "a community question" if community else "a built-in question"
        msg.text(f"**{REASON_LABELS.get(row.reason, row.reason)}** · `{row.question}` ({where}) · "
                 f"{counted(row.same, 'open report')} of it")
        if row.note:
            msg.text("Note:")
            msg.code(row.note, language="text")
        if question is not None:
            msg.text(f"**{question.shown_prompt}**")
            if question.choices:
                msg.text("\n".join(f"{'✅' if c == question.answer else '▫️'} {letter}. {c}"
                                   for letter, c in zip("ABCDEFGH", question.choices, strict=False)))
            msg.text(f"{TOPICS.get(question.topic, question.topic)} · difficulty {question.difficulty}")
        if community:
            msg.text(f"Retire the question: /bank review retire id:{row.number} · Keep it: "
                     f"/bank review dismiss id:{row.number}")
        else:
            msg.text(f"Built-in: the maintainers see it in `torchdrill content quality --export` · "
                     f"Close it: /bank review dismiss id:{row.number}")
        return msg

    async def retire(self, who: Who, number: int) -> Message:
        """Retire a community question: the shelf stops offering it; every open report of it closes."""
        question = await self.store.open_question(who, number)
        if question is None:
            return notice(NO_REPORT.format(number=number))
        if not is_community_id(question):
            return notice(BUILTIN_KEPT.format(number=number))
        closed = await self.store.retire(who, number, self.clock.now())
        if closed is None:
            return notice(NO_REPORT.format(number=number))
        await self.refresh()
        return notice(RETIRED.format(question=question, closed=counted(closed, "report")))

    async def dismiss(self, who: Who, number: int) -> Message:
        if not await self.store.dismiss(who, number):
            return notice(NO_REPORT.format(number=number))
        return notice(DISMISSED.format(number=number))
