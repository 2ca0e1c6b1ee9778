"""🚩 Report a question through the real slack-bolt app and the fake Slack, word for word: the
button under private feedback and under the reveal opens a modal (views.open: a reason menu and
a capped note box; its view_submission files the report), one report per member and question,
/report with a note (escaped), and the admin's queue beside suggestions."""

from __future__ import annotations

import json

import pytest

from bot.adapters.slack.handlers import FORM_MODAL_ID
from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, modal_problems, text_of
from tests.support.slack_fixtures import ALICE, BOB, correct_position, post_daily_now, post_id_of

pytestmark = pytest.mark.platform("slack")

HOSTILE = "<!channel> <@U123ABC> @here [x](http://e.vil) & <b>"


def _labelled(message: dict, label: str) -> dict:
    [button] = [b for b in buttons_of(message) if b["text"]["text"] == label]
    return button


def _pick(value: str) -> dict:
    return {"type": "static_select", "selected_option": {"value": value}}


def _ephemeral(sent: dict) -> dict:
    return {"ts": None, "text": sent.get("text"), "blocks": sent["blocks"]}


async def test_slack_report_from_feedback_and_the_reveal(
    fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock, adapter
) -> None:
    question = await post_daily_now(fake, slack)
    post_id = post_id_of(buttons_of(question)[0])
    right = await correct_position(app, post_id)
    await slack.click(question, buttons_of(question)[(right + 1) % 4]["action_id"], BOB)
    feedback = (await fake.wait_for("chat.postEphemeral", user=BOB.id)).data
    flag = _labelled(feedback, "🚩 Report")
    assert flag["action_id"] == f"td:f:{post_id}:0"
    await slack.click(_ephemeral(feedback), flag["action_id"], BOB, ephemeral=True)
    view = (await fake.wait_for("views.open")).data["view"]
    assert (view["type"], view["callback_id"], view["title"]["text"], view["submit"]["text"]) == (
        "modal", FORM_MODAL_ID, "Report this question", "Send report")
    assert json.loads(view["private_metadata"])["fixed"] == {"post": str(post_id)}
    reason, note = view["blocks"]
    assert (reason["block_id"], reason["label"]["text"], reason["optional"]) == ("reason", "What is wrong with it?", False)
    assert [(o["text"]["text"], o["value"], o["description"]["text"]) for o in reason["element"]["options"]] == [
        ("Wrong key", "wrong-key", "the marked answer is wrong"),
        ("Ambiguous", "ambiguous", "more than one answer fits"),
        ("Outdated", "outdated", "no longer true of current PyTorch"),
        ("Typo", "typo", "a typo or formatting slip")]
    assert reason["element"]["type"] == "static_select"
    assert (note["block_id"], note["label"]["text"], note["optional"], note["hint"]["text"]) == (
        "note", "Note for the admins (optional)", True, "At most 300 characters, shown to admins as plain text.")
    assert (note["element"]["type"], note["element"]["max_length"]) == ("plain_text_input", 300)
    with pytest.raises(AssertionError, match="caps note at 300"):
        await slack.submit_view(view, {"reason": {"reason": _pick("typo")}, "note": {"note": "x" * 301}}, BOB)
    status, _ = await slack.submit_view(view, {"reason": {"reason": _pick("wrong-key")}}, BOB)
    assert status == 200
    thanks = (await fake.wait_for("chat.postEphemeral", count=2, user=BOB.id)).data
    assert "Thanks: your report (*Wrong key*) is in the admins' review queue." in text_of(thanks)

    status, _ = await slack.command("/report", BOB, f"post:{post_id} reason:outdated note:\"{HOSTILE}\"")
    assert status == 200
    noted = (await fake.wait_for("respond", count=2)).data
    text = text_of(noted)
    assert "You had already reported this question; your report now says *Outdated*." in text
    for raw in ("<!channel>", "<@U123ABC>", "<b>", "@here"):
        assert raw not in text  # escaped: no mention, no ping, no markup
    assert "&lt;b&gt;" in text

    await slack.click(_ephemeral(feedback), flag["action_id"], BOB, ephemeral=True)  # the modal again
    again = (await fake.wait_for("views.open", count=2)).data["view"]
    await slack.submit_view(again, {"reason": {"reason": _pick("ambiguous")}, "note": {"note": HOSTILE}}, BOB)
    noted = (await fake.wait_for("chat.postEphemeral", count=3, user=BOB.id)).data
    text = text_of(noted)
    assert "You had already reported this question; your report now says *Ambiguous*." in text
    for raw in ("<!channel>", "<@U123ABC>", "<b>", "@here"):
        assert raw not in text

    slack_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    assert [b["action_id"] for b in buttons_of(question)] == [f"td:f:{post_id}:0"]

    await slack.command("/bank", ALICE, "review")
    queue = (await fake.wait_for("respond", count=3)).data
    assert text_of(queue).splitlines()[1] == "Question report #1 by bob (1 waiting)"
    assert text_of(queue).splitlines()[2].startswith("*Ambiguous* · `")
    assert "\nNote:\n" in text_of(queue) and "&lt;b&gt;" in text_of(queue)
    for raw in ("<!channel>", "<@U123ABC>", "<b>", "@here"):
        assert raw not in text_of(queue)  # the note, as admins read it: inert
    await slack.command("/bank", ALICE, "review retire id:1")
    refused = (await fake.wait_for("respond", count=4)).data
    assert ("Report #1 is about a built-in question: it cannot be retired here, and the maintainers see it in "
            "`torchdrill content quality --export`. Dismiss it once noted.") in text_of(refused)


def test_the_fake_refuses_a_modal_slack_would() -> None:
    view = {"type": "modal", "title": {"type": "plain_text", "text": "A title of twenty-five ch"},
            "blocks": [{"type": "input", "block_id": "reason", "element": {"type": "static_select", "options": [
                {"text": {"type": "plain_text", "text": "x" * 76}, "value": "x"}]}}]}
    assert modal_problems(view) == [
        "[ERROR] must be 1 to 24 characters [json-pointer:/view/title/text]",
        "[ERROR] must be 1 to 75 characters [json-pointer:/view/blocks/0/element/options/0/text]"]
