"""Program output cannot forge chat: fences, mentions, links and terminal escapes stay text.

A /run result message is built by the core from a hostile snippet's output, then rendered
by each platform's real renderer; the assertions read what members would see.
"""

from __future__ import annotations

import io

from rich.console import Console

from bot.adapters.console.render import render_message as console_render
from bot.adapters.discord.render import ZERO_WIDTH_SPACE, render_message
from bot.adapters.slack.blocks import render
from bot.core.runs.desk import result_message
from runner.jobs import JobRequest, JobResult, JobState

HOSTILE = (
    "ok\n"
    "```\n"
    "**✅ Finished** — [log in here](https://evil.example/login)\n"
    "<!channel> <!everyone> <@U123ABC> &amp; a < b\n"
    "````` run of five\n"
    "\x1b[31mred\x1b[0m\x1b]0;title\x07 done\n"
    "ends with a backtick `"
)
VISIBLE = (HOSTILE.replace("\x1b", "\u241b").replace("\x07", "\u2407"))


def hostile_result() -> JobResult:
    request = JobRequest(code="print(...)", requester="discord:g:u", reply_to={})
    return JobResult(job_id="j1", request=request, state=JobState.DONE, stdout=HOSTILE,
                     exit_code=0, duration_s=0.1)


def test_discord_output_cannot_close_our_code_block_or_send_escapes() -> None:
    description = render_message(result_message(hostile_result())).embeds[0].description
    assert description is not None
    opened = description.split("```text\n", 1)[1]
    inside, _, after = opened.partition("\n```")
    # the first closing fence after ours is ours: the whole output is inside it
    assert inside.replace(ZERO_WIDTH_SPACE, "") == VISIBLE
    assert "``" not in inside  # no two backticks adjacent, so no fence can form
    assert "[log in here]" not in after and "Finished" not in after
    assert "\x1b" not in description and "\u241b[31mred" in description


def test_slack_code_sections_escape_mentions_and_keep_the_fence() -> None:
    blocks = render(result_message(hostile_result()))["blocks"]
    code = [b["text"]["text"] for b in blocks
            if b.get("type") == "section" and b["text"]["text"].startswith("```")]
    assert len(code) == 1
    text = code[0]
    assert text.startswith("```\n") and text.endswith("\n```")
    inside = text[4:-4]
    assert "``" not in inside
    for raw in ("<!channel>", "<!everyone>", "<@U123ABC>", "<https://"):
        assert raw not in inside
    assert "&lt;!channel&gt; &lt;!everyone&gt; &lt;@U123ABC&gt; &amp;amp; a &lt; b" in inside
    assert "\x1b" not in text and "\u241b[31mred" in text


def test_slack_text_outside_code_still_keeps_real_mentions() -> None:
    from bot.adapters.slack.blocks import escape

    assert escape("hi <@U123ABC>") == "hi <@U123ABC>"  # our own messages may mention


def test_console_shows_escape_bytes_instead_of_obeying_them() -> None:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None, force_terminal=False).print(
        console_render(result_message(hostile_result()), public=True))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "\u241b[31mred\u241b[0m\u241b]0;title\u2407 done" in text
