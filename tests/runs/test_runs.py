"""/run results as members read them, and the desk's own refusals."""

from __future__ import annotations

from pathlib import Path

from bot.core.content.bank import fenced_code
from bot.core.domain.identity import Where, Who
from bot.core.runs.desk import INLINE_CHARS, RunDesk, clean_code, result_message
from runner.explain import explain
from runner.jobs import JobRequest, JobResult, JobState

REQ = JobRequest(code="x", requester="discord:g:u", reply_to={"platform": "discord"})


def test_fenced_code_is_extracted_from_a_chat_message() -> None:
    text = "look at this:\n```python\nimport torch\nprint(torch.ones(2))\n```\nthanks"
    assert fenced_code(text) == "import torch\nprint(torch.ones(2))\n"
    assert clean_code(text) == "import torch\nprint(torch.ones(2))"
    assert clean_code("`print(1)`") == "print(1)"
    assert clean_code("print(2)\n") == "print(2)"


def test_done_result_shows_time_device_memory_and_output() -> None:
    result = JobResult("j1", REQ, JobState.DONE, stdout="tensor(6.)\n", duration_s=0.12,
                       device_used="cpu", device_note="no GPU available, ran on CPU", peak_rss_mb=171.4)
    text = result_message(result).plain()
    assert "✅ Finished" in text and "0.12 s · device: cpu · peak RAM 171 MB" in text
    assert "no GPU available, ran on CPU" in text and "tensor(6.)" in text


def test_long_output_is_cut_inline_and_attached_whole() -> None:
    long = "".join(f"line {i}\n" for i in range(2000))
    msg = result_message(JobResult("j2", REQ, JobState.DONE, stdout=long))
    shown = next(b for b in msg.blocks if getattr(b, "language", None) == "text").code
    assert len(shown) <= INLINE_CHARS and "truncated; full output attached" in shown
    assert msg.attachments and msg.attachments[0].content == long.encode()


def test_sandbox_verdict_and_error_explanation_with_related_questions(library) -> None:
    stderr = ("Traceback (most recent call last):\n  File \"snippet.py\", line 3, in <module>\n"
              "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n")
    timeout = result_message(JobResult("j3", REQ, JobState.TIMEOUT, error_message="killed: wall-time limit 20 s"))
    assert "⏱ Timed out" in timeout.plain() and "killed: wall-time limit 20 s" in timeout.plain()
    explanation = explain(stderr)
    assert explanation is not None
    first = library.questions[0]
    explanation.related = [first.id, "not-in-this-library"]
    msg = result_message(JobResult("j4", REQ, JobState.FAILED, stderr=stderr, explanation=explanation), library)
    text = msg.plain()
    assert explanation.title in text and f"**Fix:** {explanation.fix}" in text
    assert f"• {first.prompt}" in text and "not-in-this-library" not in text


async def test_desk_refuses_empty_code_and_unknown_device_before_queueing(tmp_path: Path) -> None:
    from runner.factory import make_runner

    class Nowhere:
        async def publish(self, where, message, *, thread_of=None) -> str:
            raise AssertionError("nothing should be published")

        async def update(self, where, ref, message) -> None:
            raise AssertionError("nothing should be updated")

    runner = make_runner("embedded", journal_path=tmp_path / "j.sqlite3")  # never started
    desk = RunDesk(runner, Nowhere())
    who, where = Who("console", "local", "me"), Where("console", "local", "room")
    assert "no code to run" in (await desk.submit(who, where, "```python\n```")).plain()
    assert "unknown device 'tpu'" in (await desk.submit(who, where, "print(1)", device="tpu")).plain()
