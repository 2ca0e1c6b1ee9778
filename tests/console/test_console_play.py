"""The playground as a person uses it: a real terminal (pexpect pty) running `torchdrill play`.

The right answer is never hard-coded: it is read back from the post stored in the playground's
own SQLite file and the real banks, exactly as the reveal would compute it.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from bot.core.content.bank import Kind, load_library
from bot.core.render.questions import LETTERS
from bot.storage.db import migrate

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

REPO = Path(__file__).resolve().parents[2]
PROMPT = "play> "
TIMEOUT = 30


def terminal_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISCORD_", "SLACK_", "DATABASE_URL"))}
    env.update(TERM="dumb", NO_COLOR="1", COLUMNS="200", LINES="50", PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def interruptible() -> None:
    """Ctrl-C as in a terminal: a test run started in the background (`cmd &` in a script,
    nohup) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(args: list[str], cwd: Path, **env: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable, ["-m", "bot.cli", *args], cwd=str(cwd), env=terminal_env(**env),
        encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200), preexec_fn=interruptible,
    )
    child.logfile_read = Transcript()
    return child


class Transcript:
    """Keeps what the terminal showed, so a failing test prints the whole session."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        pass

    def __str__(self) -> str:
        return "".join(self.parts)


def send(child: pexpect.spawn, line: str) -> str:
    """Type a line, wait for the next prompt, return what was printed in between."""
    child.sendline(line)
    child.expect_exact(line)  # the terminal's echo
    child.expect_exact(PROMPT)
    return child.before


@pytest.fixture
def play(tmp_path: Path) -> Iterator[tuple[pexpect.spawn, Path]]:
    db = tmp_path / "p.db"
    child = spawn(["play", "--db", str(db), "--name", "tester"], tmp_path,
                  RUNNER_JOURNAL_PATH=str(tmp_path / "journal.sqlite3"))
    try:
        child.expect_exact(PROMPT, timeout=60)
        yield child, db
    except (pexpect.TIMEOUT, pexpect.EOF, AssertionError):
        print(child.logfile_read)
        raise
    finally:
        if child.isalive():
            child.terminate(force=True)


def rows(db: Path, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def answer_letter(db: Path, post_id: int) -> str:
    """The displayed letter of the right choice of a stored post."""
    (question_id, order), = rows(db, "select question_id, choice_order from posts where id = ?", post_id)
    question = load_library()[question_id]
    positions = [int(x) for x in order.split(",")]
    return LETTERS[positions.index(question.answer_index)].lower()


def answer_current(child: pexpect.spawn, db: Path, shown: str) -> str:
    """Answer the question on screen whatever its kind: MCQ by letter, flashcard by show + grade."""
    if "Type a · b" in shown:
        (post_id,), = rows(db, "select max(id) from posts where kind = 'quiz'")
        return send(child, answer_letter(db, post_id))
    assert "show = Show answer" in shown, shown
    card = send(child, "show")
    assert "again · hard · good · easy" in card, card
    return send(child, "good")


def test_a_session_in_the_terminal(play: tuple[pexpect.spawn, Path]) -> None:
    child, db = play
    shown = send(child, "help")
    for command in ("today", "reveal", "quiz", "review", "stats", "leaderboard", "run", "quit"):
        assert command in shown

    shown = send(child, "today")
    assert "Daily question" in shown and "Type a · b · c · d" in shown
    (post_id, kind), = rows(db, "select id, kind from posts")
    assert kind == "daily"
    right = answer_letter(db, post_id)
    wrong = next(letter for letter in "abcd" if letter != right)

    shown = send(child, right)
    assert "Correct!" in shown and "1 answered" in shown
    assert "Type 1 = 🚩 Report" in shown  # the feedback's key: report the question

    shown = send(child, "today")  # the same post again, not a second one
    assert "1 answered" in shown
    assert rows(db, "select count(*) from posts") == [(1,)]
    shown = send(child, wrong)
    assert "You already answered this one" in shown and "Only your first answer counts" in shown
    assert rows(db, "select count(*) from answers where post_id = ?", post_id) == [(1,)]

    shown = send(child, "reveal")
    assert "100% correct" in shown and "Explanation" in shown and "Why:" in shown

    shown = send(child, "quiz autograd 2")
    assert "Quiz 1/2 · Autograd" in shown
    shown = answer_current(child, db, shown)
    assert "Next question" in shown
    shown = send(child, "next")
    assert "Quiz 2/2 · Autograd" in shown
    shown = answer_current(child, db, shown)
    assert "Quiz finished" in shown
    assert rows(db, "select count(*) from answers a join posts p on p.id = a.post_id "
                    "where p.kind = 'quiz'") == [(2,)]

    shown = send(child, "stats")
    assert re.search(r"\b3\b answered", shown), shown
    shown = send(child, "leaderboard")
    assert "tester" in shown and "pts" in shown

    shown = send(child, "frobnicate")
    assert "Unknown command frobnicate" in shown
    for command in ("today", "quiz", "stats", "help"):
        assert command in shown

    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_bad_input_is_explained(play: tuple[pexpect.spawn, Path]) -> None:
    child, db = play
    shown = send(child, "quiz nosuchtopic")
    assert "unknown topic 'nosuchtopic'" in shown and "autograd" in shown and "tensors" in shown
    shown = send(child, "quiz autograd 99")
    assert "count must be between 1 and 20 (got 99)" in shown
    shown = send(child, "leaderboard channel galaxy")
    assert "unknown period 'galaxy'; choose one of: week, month, all" in shown
    shown = send(child, "b")
    assert "There is no b on the message on screen" in shown
    shown = send(child, "reveal")
    assert "no daily question yet" in shown
    assert rows(db, "select count(*) from quizzes") == [(0,)]  # nothing was started
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


PASTED = """import torch

def five() -> int:

    return 2 + 3

print(five())"""


def test_run_prints_the_output_in_the_thread(play: tuple[pexpect.spawn, Path]) -> None:
    """A paste with blank lines runs whole: the paste ends at '.' (or Ctrl-D), not at a blank."""
    child, _ = play
    child.sendline("run")
    index = child.expect_exact(["end with a line holding just '.' or Ctrl-D", "not available"], timeout=120)
    if index == 1:
        child.expect_exact(PROMPT)
        pytest.skip(f"runner unavailable here: {child.before.strip()}")
    for line in PASTED.splitlines():
        child.sendline(line)
    child.sendline(".")
    child.expect_exact("queued")
    child.expect_exact("thread of: run by tester", timeout=120)
    child.expect(r"Finished[\s\S]*stdout:[\s│]*5\b", timeout=30)
    child.expect_exact(PROMPT)
    shown = send(child, "stats")  # the next command is read as a command again
    assert "Unknown command" not in str(child.logfile_read)
    assert "No answers yet" in shown
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_serve_without_tokens_is_the_console(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    url = f"sqlite+aiosqlite:///{db}"
    migrate(url)
    child = spawn(["serve"], tmp_path, DATABASE_URL=url, RUNNER_WARM="false",
                  RUNNER_ALLOW_WEAK_ISOLATION="true",
                  RUNNER_JOURNAL_PATH=str(tmp_path / "journal.sqlite3"))
    try:
        child.expect_exact("torchdrill playground", timeout=90)
        child.expect_exact(PROMPT)
        shown = send(child, "today")
        assert "Daily question" in shown
        child.sendline("quit")
        child.expect(pexpect.EOF)
        child.close()
    except (pexpect.TIMEOUT, pexpect.EOF):
        print(child.logfile_read)
        raise
    assert child.exitstatus == 0
    assert rows(db, "select p.kind, w.platform from posts p join channels c on c.id = p.channel_id "
                    "join workspaces w on w.id = c.workspace_id") == [("daily", "console")]


def test_db_option_must_be_a_file(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "play", "--db", str(tmp_path)], cwd=tmp_path,
        env=terminal_env(), capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "is a directory" in result.stderr


def test_quiz_questions_exist_for_the_scenario() -> None:
    """The scenario quizzes on autograd: the real banks must have at least two such questions."""
    autograd = [q for q in load_library().questions if q.topic == "autograd"]
    assert len(autograd) >= 2
    assert any(q.kind is Kind.MCQ for q in load_library().questions)


def test_ctrl_c_cancels_a_paste_and_the_playground_goes_on(play: tuple[pexpect.spawn, Path]) -> None:
    child, db = play
    send(child, "today")
    child.sendline("submit")
    child.expect_exact("... ", timeout=120)
    child.sendline("import torch")
    child.expect_exact("... ")
    child.sendintr()
    child.expect_exact("Paste cancelled; nothing was sent.")
    child.expect_exact(PROMPT)
    shown = send(child, "reveal")  # the first line after Ctrl-C is a command, not lost
    assert "· answer" in shown
    child.sendintr()  # at the prompt, Ctrl-C still leaves cleanly
    child.expect(pexpect.EOF, timeout=15)
    child.close()
    assert child.exitstatus == 0
    assert rows(db, "select count(*) from posts where kind = 'daily'") == [(1,)]


def test_run_cancel_stops_the_players_job_and_its_thread_says_so(play: tuple[pexpect.spawn, Path]) -> None:
    child, _ = play
    child.sendline("run cancel")
    index = child.expect_exact(["You have no job queued or running, so there is nothing to cancel.",
                                "not available"], timeout=120)
    if index == 1:
        child.expect_exact(PROMPT)
        pytest.skip(f"runner unavailable here: {child.before.strip()}")
    child.expect_exact(PROMPT)
    shown = send(child, "run import time; time.sleep(30)")
    [job_id] = re.findall(r"Job `?([0-9a-f]{12})`? queued", shown)
    shown = send(child, "run print(2)")  # one job at a time: the refusal says how to cancel
    assert (f"You already have a job queued or running ({job_id}): wait for its result in its "
            "thread, or cancel it with run cancel.") in shown
    child.sendline("run cancel")
    child.expect_exact(f"Your job {job_id} is cancelled; its thread will say so.")
    child.expect_exact("thread of: run by tester", timeout=60)
    child.expect_exact("🛑 Cancelled", timeout=30)
    child.expect(r"─╮\s+│ Cancelled by its author\. +│\s+╰─+╯")  # no output, only this line
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
