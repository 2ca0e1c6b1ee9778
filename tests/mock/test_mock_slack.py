"""/mock on Slack end to end: the real adapter in HTTP mode, the fake Slack API, the app
``build_app`` wires, the built-in banks and a fake clock. A whole short mock by buttons and
``/mock answer``, the report as Slack shows it, and the deadline's report as a direct message."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.domain.actions import decode
from bot.core.domain.clock import FakeClock
from bot.core.reveal.posts import order_of
from bot.storage.models import MockItem, Post, SrsCard
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import BOB

pytestmark = pytest.mark.platform("slack")


def shown(call_data: dict[str, Any]) -> dict[str, Any]:
    return {"ts": None, "text": call_data.get("text"), "blocks": call_data.get("blocks")}


async def keyed_button(app: App, message: dict[str, Any], right: bool) -> str:
    """The action id of the right (or a wrong) choice of the mock MCQ in ``message``."""
    first = decode(buttons_of(message)[0]["action_id"])
    async with app.db.read() as s:
        item = await s.get(MockItem, (first.post_id, first.arg // 100))
        assert item is not None and item.post_id is not None
        post = await s.get(Post, item.post_id)
        assert post is not None
        keyed = order_of(post).index(app.library[post.question_id].answer_index)
    return buttons_of(message)[keyed if right else (keyed + 1) % len(buttons_of(message))]["action_id"]


def labelled(message: dict[str, Any], label: str) -> str:
    [button] = [b for b in buttons_of(message) if b["text"]["text"] == label]
    return str(button["action_id"])


async def test_a_short_mock_on_slack(fake: FakeSlack, slack: SlackSender, app: App,
                                     slack_clock: FakeClock) -> None:
    status, _ = await slack.command("/mock", BOB, "research 15")
    assert status == 200
    reply = await fake.wait_for("respond")
    assert reply.data["response_type"] == "ephemeral"
    text = text_of(reply.data)
    assert text.startswith("Mock · MCQ 1/8 · ")
    assert "⏱ 15:00 left · ends 09:15 UTC · item 1/10 · Research engineer" in text
    message = shown(reply.data)
    for n in range(8):
        slack_clock.advance(20)
        await slack.click(message, await keyed_button(app, message, right=n != 0), BOB, ephemeral=True)
        message = shown((await fake.wait_for("chat.postEphemeral", count=n + 1, user=BOB.id)).data)
    text = text_of(message)
    assert text.startswith("Mock · Explain-it 1/1 · ")
    assert "Write your answer with `/mock answer …` as you would say it in the interview" in text
    answer = "It is <b>bold</b> & <!channel> safe"
    await slack.command("/mock", BOB, f"answer {answer}")
    checklist = await fake.wait_for("respond", count=2)
    text = text_of(checklist.data)
    assert "It is &lt;b&gt;bold&lt;/b&gt; &amp; &lt;!channel&gt; safe" in text  # inert on Slack
    assert "<!channel>" not in text
    assert "*Model answer — key points* (self-graded: tick each point your answer covered, then Done):\n☐ 1. " in text
    message = shown(checklist.data)
    await slack.click(message, labelled(message, "1"), BOB, ephemeral=True)
    message = shown((await fake.wait_for("chat.postEphemeral", count=9, user=BOB.id)).data)
    assert "☑ 1. " in text_of(message)
    await slack.click(message, labelled(message, "Done"), BOB, ephemeral=True)
    message = shown((await fake.wait_for("chat.postEphemeral", count=10, user=BOB.id)).data)
    text = text_of(message)
    assert text.startswith("Mock · Coding 1/1 · 🧩 ")
    assert "Submit with `/submit` (judged in the sandbox), then press Done." in text
    await slack.click(message, labelled(message, "Done"), BOB, ephemeral=True)
    report = text_of((await fake.wait_for("chat.postEphemeral", count=11, user=BOB.id)).data)
    assert report.startswith("📋 Mock interview report · Research engineer · 15 min\n")
    assert "\nFinished with 12 min 20 s to spare.\n*Score:* " in report
    assert " · MCQs 7/8 · Explain-it (self-graded) " in report and " · Coding 0/1\n*By topic:* " in report
    assert "*Time per question* (your median MCQ answer before this mock: no MCQ answers before this mock):\n" \
           "1. MCQ · " in report and " · ❌ · 20 s\n2. MCQ · " in report
    assert "\n*Next steps:* `/review` brings back the " in report
    async with app.db.read() as s:
        assert len(list(await s.scalars(select(SrsCard)))) == 9  # 8 MCQs and the explain-it card


async def test_the_deadline_report_is_a_direct_message_on_slack(
    fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock
) -> None:
    await slack.command("/mock", BOB, "10")
    first = await fake.wait_for("respond")
    assert "item 1/10 · ML engineer" in text_of(first.data)
    slack_clock.advance(600)
    await app.scheduler.tick()
    told = await fake.wait_for("chat.postMessage", channel=BOB.id)
    text = text_of(told.data)
    assert text.startswith("📋 Mock interview report · ML engineer · 10 min\n")
    assert ("\n⏰ Time ran out at 09:10 UTC.\n*Score:* 0/10 (0%) · MCQs 0/8 · Explain-it (self-graded) 0/1 · "
            "Coding 0/1\n") in text
    assert "\n1. MCQ · " in text and " · — · not answered\n2. MCQ · " in text
    # a button of the ended mock answers with the same report, privately
    await slack.click(shown(first.data), buttons_of(first.data)[0]["action_id"], BOB, ephemeral=True)
    again = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert text_of(again.data).startswith("📋 Mock interview report · ML engineer · 10 min\n")
    assert "\n⏰ Time ran out at 09:10 UTC.\n" in text_of(again.data)
    assert len(fake.sent("chat.postMessage", channel=BOB.id)) == 1  # the deadline's report, once
