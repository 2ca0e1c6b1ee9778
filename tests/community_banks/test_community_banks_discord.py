"""Community banks through the real discord.py adapter and the fake Discord: an admin uploads a
YAML attachment (downloaded from the CDN, problems answered as numbered lines), members list,
quiz from it and suggest through the form; the admin reviews and the author gets a DM."""

from __future__ import annotations

import pytest
import yaml

from tests.support.community_banks import GOOD
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, FileOption, User, text_of

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

ADMIN = User(800_000_000_000_000_010, "ada")
MEMBER = User(800_000_000_000_000_011, "mia")


async def test_upload_attachment_list_quiz_export(fake: FakeDiscord, start_adapter: StartAdapter) -> None:
    await start_adapter()
    refused = await fake.original_of(await fake.slash("bank", MEMBER, sub="upload",
                                                      file=FileOption("our-loop.yaml", GOOD)))
    assert "Only members with the **Manage Server** permission can use /bank upload." in text_of(refused)
    assert fake.cdn_reads == 0  # refused before anything is stored; the file was never needed
    broken = GOOD.replace(b"topic: autograd", b"topic: nosuch", 1)
    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.yaml", broken))
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "our-loop.yaml was not stored" in text_of(reply) and "line 6: topic: unknown topic 'nosuch'" in \
        text_of(reply)
    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.yaml", GOOD))
    assert "Bank our-loop stored: 2 questions" in text_of(await fake.original_of(token))
    listed = await fake.original_of(await fake.slash("bank", MEMBER, sub="list"))
    assert "Community banks of this server" in text_of(listed) and "our-loop" in text_of(listed)
    quiz = await fake.original_of(await fake.slash("quiz", MEMBER, banks="community", count=2))
    assert "When does our team call" in text_of(quiz) or "model.eval()" in text_of(quiz)
    token = await fake.slash("bank", ADMIN, admin=True, sub="export", bank="our-loop")
    exported = await fake.original_of(token)
    assert [a["filename"] for a in exported["attachments"]] == ["our-loop.yaml"]
    too_big = await fake.original_of(await fake.slash(
        "bank", ADMIN, admin=True, sub="upload", file=FileOption("huge.yaml", b"#" * 200_001)))
    assert "The file is 200,001 bytes; an upload may be at most 200,000." in text_of(too_big)


async def test_suggest_form_review_and_the_author_is_told_by_dm(fake: FakeDiscord,
                                                                start_adapter: StartAdapter) -> None:
    await start_adapter()
    opened = await fake.callback_of(await fake.slash("suggest", MEMBER))
    modal = opened.json["data"]
    boxes = [c["custom_id"] for row in modal["components"] for c in row["components"]]
    assert boxes == ["td-opt-prompt", "td-opt-choices", "td-opt-explanation", "td-opt-topic",
                     "td-opt-difficulty"]
    choices = ("*`.grad` of each leaf\n`.data` of each leaf | backward never writes data\n"
               "The optimizer state | the optimizer reads grads later")
    token = await fake.submit_modal(modal, {
        "td-opt-prompt": "What does `loss.backward()` accumulate into?", "td-opt-choices": choices,
        "td-opt-explanation": "Gradients accumulate in `.grad` of leaf tensors.", "td-opt-topic": "Autograd",
        "td-opt-difficulty": "1"}, MEMBER)
    thanks = await fake.original_of(token)
    assert "Thanks! Suggestion #1 is waiting for an admin's review" in text_of(thanks)
    review = await fake.original_of(await fake.slash("bank", ADMIN, admin=True, sub="review"))
    assert "Suggestion #1 by mia (1 waiting)" in text_of(review)
    approved = await fake.original_of(await fake.slash("bank", ADMIN, admin=True, sub="review",
                                                       action="approve", id=1))
    assert "Suggestion #1 approved into bank suggestions" in text_of(approved)
    dms = await fake.wait_until(lambda: fake.direct_messages(MEMBER))
    assert "Your suggestion #1 was approved and added to the bank suggestions" in text_of(dms[-1])
    token = await fake.slash("bank", ADMIN, admin=True, sub="export", bank="suggestions")
    exported = await fake.original_of(token)
    assert exported["attachments"][0]["filename"] == "suggestions.yaml"
    [(name, content)] = [f for r in fake.requests if r.files and token in r.path for f in r.files]
    assert name == "suggestions.yaml"
    assert yaml.safe_load(content)["questions"][0]["answer"] == "`.grad` of each leaf"


async def test_ask_as_question_turns_a_message_into_a_draft_suggestion(
        fake: FakeDiscord, start_adapter: StartAdapter) -> None:
    """The "Ask as a question" message command (admins): the message fills the /suggest form;
    its text stays plain in the boxes and goes through /suggest's checks like any suggestion."""
    await start_adapter()
    target = fake.user_message(MEMBER, "@everyone What does <b>`optimizer.zero_grad()`</b> reset?\n"
                                       "A) the gradients\nB) the weights\nC) the learning rate")
    refused = await fake.original_of(await fake.message_command("Ask as a question", target, MEMBER))
    assert refused["flags"] & EPHEMERAL
    assert text_of(refused).strip() == (
        "Only members with the **Manage Server** permission can use “Ask as a question”.")
    opened = await fake.callback_of(await fake.message_command("Ask as a question", target, ADMIN,
                                                               admin=True))
    modal = opened.json["data"]
    values = {c["custom_id"]: c.get("value") for row in modal["components"] for c in row["components"]}
    assert values == {
        "td-opt-prompt": "@everyone What does <b>`optimizer.zero_grad()`</b> reset?",
        "td-opt-choices": "the gradients\nthe weights\nthe learning rate",
        "td-opt-explanation": None, "td-opt-topic": None, "td-opt-difficulty": None}
    token = await fake.submit_modal(modal, {
        "td-opt-prompt": "What does `optimizer.zero_grad()` reset?",
        "td-opt-choices": "*the gradients\nthe weights | it never touches parameters\n"
                          "the learning rate | that is the scheduler's",
        "td-opt-explanation": "It sets each parameter's `.grad` to None (or zero).",
        "td-opt-topic": "Autograd", "td-opt-difficulty": "1"}, ADMIN)
    assert "Thanks! Suggestion #1 is waiting for an admin's review" in text_of(await fake.original_of(token))
    review = await fake.original_of(await fake.slash("bank", ADMIN, admin=True, sub="review"))
    assert "Suggestion #1 by ada (1 waiting)" in text_of(review)
