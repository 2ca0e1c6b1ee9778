"""Community banks through the real slack-bolt app and the fake Slack: `/bank upload` opens a
form with a file input; the file is downloaded with the bot token and checked; `/suggest` with
no text opens a form; the admin's decision reaches the author by direct message."""

from __future__ import annotations

import pytest

from bot.adapters.slack.handlers import ASK_SHORTCUT_ID, FORM_MODAL_ID
from tests.support.community_banks import GOOD
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import ALICE, BOB

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]


async def open_form(fake: FakeSlack, slack: SlackSender, command: str, text: str, user=ALICE,
                    count: int = 1) -> dict:
    status, _ = await slack.command(command, user, text)
    assert status == 200
    view = (await fake.wait_for("views.open", count=count)).data["view"]
    assert view["callback_id"] == FORM_MODAL_ID
    return view


async def test_upload_through_a_file_form_then_list_and_quiz(fake: FakeSlack, slack: SlackSender, adapter) -> None:
    status, _ = await slack.command("/bank", BOB, "upload")
    assert status == 200
    refused = await fake.wait_for("respond")
    assert "Only workspace admins (or the bot's configured admins) can use /bank upload." in text_of(refused.data)
    assert not fake.sent("views.open")
    view = await open_form(fake, slack, "/bank", "upload")
    [block] = view["blocks"]
    assert block["element"]["type"] == "file_input" and block["block_id"] == "file"
    broken = GOOD.replace(b"topic: autograd", b"topic: nosuch", 1)
    await slack.submit_view(view, {"file": {"file": {"type": "file_input",
                                                     "files": [fake.host_file("our-loop.yaml", broken)]}}}, ALICE)
    told = await fake.wait_for("chat.postEphemeral")
    assert "our-loop.yaml was not stored" in text_of(told.data)
    assert "line 6: topic: unknown topic 'nosuch'" in text_of(told.data)
    view = await open_form(fake, slack, "/bank", "upload", count=2)
    await slack.submit_view(view, {"file": {"file": {"type": "file_input",
                                                     "files": [fake.host_file("our-loop.yaml", GOOD)]}}}, ALICE)
    stored = await fake.wait_for("chat.postEphemeral", count=2)
    assert "Bank our-loop stored: 2 questions" in text_of(stored.data)
    assert fake.file_reads == 2
    await slack.command("/bank", BOB, "list")
    listed = await fake.wait_for("respond", count=2)
    assert "Community banks of this workspace" in text_of(listed.data) and "our-loop" in text_of(listed.data)
    await slack.command("/quiz", BOB, "banks:community count:2")
    quiz = await fake.wait_for("respond", count=3)
    assert "When does our team call" in text_of(quiz.data) or "model.eval()" in text_of(quiz.data)
    huge = fake.host_file("huge.yaml", b"#" * 200_001)
    view = await open_form(fake, slack, "/bank", "upload", count=3)
    await slack.submit_view(view, {"file": {"file": {"type": "file_input", "files": [huge]}}}, ALICE)
    refused_big = await fake.wait_for("chat.postEphemeral", count=3)
    assert "The file is 200,001 bytes; an upload may be at most 200,000." in text_of(refused_big.data)
    assert fake.file_reads == 2  # never downloaded


async def test_suggest_form_and_the_author_told_by_dm(fake: FakeSlack, slack: SlackSender, adapter) -> None:
    view = await open_form(fake, slack, "/suggest", "", user=BOB)
    assert [b["block_id"] for b in view["blocks"]] == ["prompt", "choices", "explanation", "topic", "difficulty"]
    assert view["blocks"][1]["element"]["multiline"] is True
    await slack.submit_view(view, {
        "prompt": {"prompt": "What does `loss.backward()` accumulate into?"},
        "choices": {"choices": "*`.grad` of each leaf\n`.data` of each leaf | backward never writes data\n"
                               "The optimizer state | the optimizer reads grads later"},
        "explanation": {"explanation": "Gradients accumulate in `.grad` of leaf tensors."},
        "topic": {"topic": "autograd"}, "difficulty": {"difficulty": "1"}}, BOB)
    thanks = await fake.wait_for("chat.postEphemeral")
    assert "Thanks! Suggestion #1 is waiting for an admin's review" in text_of(thanks.data)
    await slack.command("/bank", ALICE, 'review reject id:1 reason:"we cover this in week 2"')
    await fake.wait_for("respond")
    dm = await fake.wait_for("chat.postMessage", channel=BOB.id)
    assert "Your suggestion #1 was not accepted: we cover this in week 2" in text_of(dm.data)


async def test_import_form_returns_the_draft_as_a_file_in_dms(fake: FakeSlack, slack: SlackSender, adapter) -> None:
    view = await open_form(fake, slack, "/bank", "import")
    assert [(b["block_id"], b["element"]["type"]) for b in view["blocks"]] == [
        ("format", "static_select"), ("file", "file_input")]
    raw = (b"Question 1\n\nWhat does zero_grad do?\n\nAccepted Answer\n\nClears the gradients\n\n"
           b"Answer\n\nSteps the optimizer\n")
    await slack.submit_view(view, {
        "format": {"format": {"type": "static_select", "selected_option": {"value": "mcq"}}},
        "file": {"file": {"type": "file_input", "files": [fake.host_file("team.txt", raw)]}}}, ALICE)
    told = await fake.wait_for("chat.postEphemeral")
    assert "Draft bank from team.txt" in text_of(told.data)
    await fake.wait_for("files.completeUploadExternal")
    [draft] = fake.uploads.values()
    assert b"What does zero_grad do?" in draft and b"Clears the gradients" in draft


async def test_ask_as_question_shortcut_fills_the_suggest_form(fake: FakeSlack, slack: SlackSender,
                                                                adapter) -> None:
    """The "Ask as a question" message shortcut (admins): Slack's escaped text is shown as the
    member typed it, in plain-text boxes; the submit is an ordinary /suggest."""
    target = {"type": "message", "user": BOB.id, "ts": "1700000000.000100",
              "text": "<!channel> Is &lt;b&gt;`x.grad`&lt;/b&gt; None before backward?\n- yes\n- no"}
    status, _ = await slack.message_shortcut(ASK_SHORTCUT_ID, target, BOB)
    assert status == 200
    refused = await fake.wait_for("respond")
    assert ("Only workspace admins (or the bot's configured admins) can use “Ask as a question”."
            in text_of(refused.data))
    assert not fake.sent("views.open")
    await slack.message_shortcut(ASK_SHORTCUT_ID, target, ALICE)
    view = (await fake.wait_for("views.open")).data["view"]
    assert view["callback_id"] == FORM_MODAL_ID
    initial = {b["block_id"]: b["element"].get("initial_value") for b in view["blocks"]}
    assert initial == {"prompt": "<!channel> Is <b>`x.grad`</b> None before backward?",
                       "choices": "yes\nno", "explanation": None, "topic": None, "difficulty": None}
    await slack.submit_view(view, {
        "prompt": {"prompt": "Is `x.grad` None before the first backward?"},
        "choices": {"choices": "*yes\nno | a leaf's grad is created by backward"},
        "explanation": {"explanation": "`.grad` starts as None and backward creates it."},
        "topic": {"topic": "autograd"}, "difficulty": {"difficulty": "1"}}, ALICE)
    thanks = await fake.wait_for("chat.postEphemeral")
    assert "Thanks! Suggestion #1 is waiting for an admin's review" in text_of(thanks.data)
