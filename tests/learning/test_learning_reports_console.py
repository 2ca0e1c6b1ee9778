"""🚩 Report a question through the console adapter (the app built by ``build_app``), word for
word: the button under feedback and under a reveal, the reasons, one report per member and
question, /report with a note, and the admins' queue beside suggestions, where a community
question is retired and a built-in one is only dismissed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.adapters.console.play import ConsoleAdapter
from bot.app import App
from tests.support.community_banks import GOOD
from tests.support.console_fixtures import Term, say

pytestmark = pytest.mark.platform("console")

MENU = [
    "🚩 Report this question",
    "What is wrong with it? Admins review every report.",
]
REASON_KEYS = "Type wrong = Wrong key · ambiguous · outdated · typo  (or 1-4)"
HOSTILE = "<@U1> @everyone [x](http://e.vil) ``` **b**"


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.strip().splitlines()]


async def test_a_member_reports_a_community_question_and_an_admin_retires_it(
    console: ConsoleAdapter, term: Term, tmp_path: Path, app: App
) -> None:
    path = tmp_path / "our-loop.yaml"
    path.write_bytes(GOOD)
    await say(console, term, f"bank upload {path}")
    await say(console, term, "quiz banks:community count:1")
    feedback = await say(console, term, "a")
    assert _lines(feedback)[-1] == "Type 1 = 🚩 Report  (or 1)"
    menu = await say(console, term, "1")
    post = re.search(r"post:(\d+)", menu)
    assert post is not None
    assert _lines(menu) == [*MENU, f"To add a note: /report post:{post[1]} reason:wrong-key|ambiguous|outdated|typo "
                            "note:…", REASON_KEYS]
    assert _lines(await say(console, term, "typo")) == [
        "Thanks: your report (Typo) is in the admins' review queue."]
    assert _lines(await say(console, term, "ambiguous")) == [
        "You had already reported this question; your report now says Ambiguous."]
    out = await say(console, term, f"report post:{post[1]} reason:wrong note:'{HOSTILE}'")
    assert _lines(out)[:2] == ["You had already reported this question; your report now says Wrong key.",
                               "Your note:"]
    assert "<\u200b@U1> @\u200beveryone x (http://e.vil)" in out  # inert, in a code block
    assert _lines(await say(console, term, "report post:999 reason:typo")) == [
        "There is no question 999 here to report."]

    review = _lines(await say(console, term, "bank review"))
    question = re.search(r"`?(c\d+\.ours-[a-z-]+)`?", review[1])
    assert question is not None
    assert review[0] == "Question report #1 by ana (1 waiting)"
    assert review[1] == f"Wrong key · {question[1]} (a community question) · 1 open report of it"
    assert review[-1] == "Retire the question: /bank review retire id:1 · Keep it: /bank review dismiss id:1"
    out = " ".join(_lines(await say(console, term, "bank review retire id:1")))  # one line, wrapped
    assert out == (f"Question {question[1]} is retired: it is no longer picked; its posts and answers stay. 1 report "
                   "closed. A new upload of its bank that still holds it serves it again.")
    assert _lines(await say(console, term, "bank review reports")) == [
        "No question reports are waiting for review."]
    assert _lines(await say(console, term, "bank review retire id:1")) == [
        "There is no open question report #1 here; /bank review reports shows the next one."]
    offered = [q.id for q in app.drill.library.offered_to(("console", console.who.workspace), "community")]
    assert question[1] not in offered and len(offered) == 1  # retired: never picked again
    assert question[1] in app.drill.library  # ... but its posts still render
    quiz = await say(console, term, "quiz banks:community count:2")
    assert "Quiz 1/1" in quiz


async def test_a_revealed_daily_question_carries_the_flag_and_builtin_reports_are_dismissed(
    console: ConsoleAdapter, term: Term
) -> None:
    await say(console, term, "today")
    await say(console, term, "a")
    reveal = await say(console, term, "reveal")
    assert "Type 1 = 🚩 Report  (or 1)" in reveal
    await say(console, term, "1")
    assert _lines(await say(console, term, "outdated")) == [
        "Thanks: your report (Outdated) is in the admins' review queue."]
    review = _lines(await say(console, term, "bank review next"))
    assert review[0] == "Question report #1 by ana (1 waiting)"
    assert review[-1] == ("Built-in: the maintainers see it in torchdrill content quality --export · Close it: "
                          "/bank review dismiss id:1")
    assert " ".join(_lines(await say(console, term, "bank review retire id:1"))) == (
        "Report #1 is about a built-in question: it cannot be retired here, and the maintainers see it in "
        "torchdrill content quality --export. Dismiss it once noted.")
    assert _lines(await say(console, term, "bank review dismiss id:1")) == [
        "Report #1 dismissed; the question stays as it is."]
    assert _lines(await say(console, term, "bank review")) == ["No suggestions are waiting for review."]
