"""Slack translation details: mrkdwn, Block Kit limits, command arguments, message refs."""

from __future__ import annotations

import pytest

from bot.adapters.slack.blocks import (
    MAX_BLOCKS,
    SECTION_LIMIT,
    escape,
    mrkdwn,
    render,
    render_blocks,
)
from bot.adapters.slack.handlers import code_from_slack
from bot.adapters.slack.publisher import BadRefError, Ref, parse_ref
from bot.core.content.bank import fenced_code
from bot.core.domain.messages import Button, ButtonStyle, Message


def test_bold_becomes_single_asterisks_but_code_is_untouched() -> None:
    assert mrkdwn("**bold** and _italic_") == "*bold* and _italic_"
    assert mrkdwn("`x ** 2` is **squared**") == "`x ** 2` is *squared*"


def test_escaping_keeps_mentions_and_links() -> None:
    assert escape("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d"
    assert escape("hi <@U123ABC>, see <https://pytorch.org>") == (
        "hi <@U123ABC>, see <https://pytorch.org>"
    )


def test_code_blocks_are_fenced_without_language_tag() -> None:
    blocks = render_blocks(Message().code("x = a < b\nprint(x)", "python"))
    assert blocks == [
        {"type": "section", "text": {"type": "mrkdwn", "text": "```\nx = a &lt; b\nprint(x)\n```"}}
    ]


def test_long_text_and_code_are_split_into_sections_within_the_limit() -> None:
    long_text = "\n".join(f"line {i} " + "w" * 80 for i in range(100))
    long_code = "\n".join(f"print({i}) # " + "c" * 80 for i in range(100))
    blocks = render_blocks(Message().text(long_text).code(long_code))
    texts = [b["text"]["text"] for b in blocks]
    assert len(texts) > 4 and all(len(t) <= SECTION_LIMIT for t in texts)
    assert all(t.startswith("```\n") and t.endswith("\n```") for t in texts if "print(" in t)
    joined = "\n".join(t for t in texts if "line" in t)
    assert joined == long_text  # nothing lost in the split


def test_block_count_is_capped_and_buttons_survive() -> None:
    msg = Message(title="Many")
    for i in range(80):
        msg.text(f"paragraph {i}")
    msg.buttons = [Button(f"td:a:1:{i}", "ABCD"[i]) for i in range(4)]
    msg.footer = "footer"
    blocks = render_blocks(msg)
    assert len(blocks) == MAX_BLOCKS
    assert blocks[-1]["type"] == "actions" and len(blocks[-1]["elements"]) == 4
    assert "shortened" in blocks[-3]["text"]["text"] and blocks[-2]["type"] == "context"


def test_buttons_rows_styles_and_disabled() -> None:
    msg = Message(title="Q")
    msg.buttons = [Button(f"td:a:1:{i}", f"B{i}", ButtonStyle.PRIMARY) for i in range(7)]
    msg.buttons.append(Button("td:s:1:0", "gone", disabled=True))
    msg.buttons.append(Button("td:g:1:1", "Again", ButtonStyle.DANGER))
    actions = [b for b in render_blocks(msg) if b["type"] == "actions"]
    assert [len(a["elements"]) for a in actions] == [5, 3]
    elements = [e for a in actions for e in a["elements"]]
    assert "td:s:1:0" not in {e["action_id"] for e in elements}  # Slack has no disabled buttons
    assert elements[0]["style"] == "primary" and elements[-1]["style"] == "danger"


def test_title_header_and_mention_title_and_fallback_text() -> None:
    plain = render(Message(title="Daily question · Tensors").text("**Why?**"))
    assert plain["blocks"][0] == {
        "type": "header", "text": {"type": "plain_text", "text": "Daily question · Tensors"}
    }
    assert plain["text"] == "Daily question · Tensors"
    mention = render_blocks(Message(title="✅ Finished — <@U0CAROL>"))
    assert mention[0]["type"] == "section" and "<@U0CAROL>" in mention[0]["text"]["text"]
    assert render(Message().text("**only** text"))["text"] == "*only* text"


@pytest.mark.parametrize(
    ("slack_text", "code"),
    [
        ("```print(1 &lt; 2)```", "print(1 < 2)\n"),
        ("look:\n```x = 1\nprint(x &amp; 3)```\nthanks", "x = 1\nprint(x & 3)\n"),
        ("```python\nprint(2)\n```", "print(2)\n"),
        ("```\nprint(3)\n```", "print(3)\n"),
    ],
)
def test_code_from_slack_message_text(slack_text: str, code: str) -> None:
    assert fenced_code(code_from_slack(slack_text)) == code


def test_refs_round_trip_and_thread_roots() -> None:
    top = parse_ref("C1:1700000001.000100")
    assert top == Ref("C1", "1700000001.000100") and top.root == "1700000001.000100"
    reply = parse_ref(str(Ref("C1", "1700000002.000100", "1700000001.000100")))
    assert reply.root == "1700000001.000100"
    for bad in ("C1", "C1:abc", "1:2:3:4", ":1.0"):
        with pytest.raises(BadRefError):
            parse_ref(bad)


def test_cli_prints_the_manifest_as_json() -> None:
    import json

    from typer.testing import CliRunner

    from bot.cli import app

    result = CliRunner().invoke(app, ["slack", "manifest", "--url", "https://h.example/slack/events"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["settings"]["interactivity"]["request_url"] == "https://h.example/slack/events"
    assert "/drill-help" in {c["command"] for c in printed["features"]["slash_commands"]}
    assert printed["display_information"]["name"] == "torchdrill"


def test_manifest_names_the_app_as_asked() -> None:
    import json

    from typer.testing import CliRunner

    from bot.cli import app

    result = CliRunner().invoke(app, ["slack", "manifest", "--name", "Drill Bot"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["display_information"]["name"] == "Drill Bot"
    assert printed["features"]["bot_user"]["display_name"] == "Drill Bot"
