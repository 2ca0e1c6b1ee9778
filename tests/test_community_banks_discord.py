"""Community banks through the real discord.py adapter and the fake Discord: an admin uploads a
YAML attachment (downloaded from the CDN, problems answered as numbered lines), members list,
quiz from it and suggest through the form; the admin reviews and the author gets a DM."""

from __future__ import annotations

import yaml

from tests.discord_fixtures import (  # noqa: F401 - fixtures
    StartAdapter,
    app_fixture,
    discord_clock_fixture,
    fake_fixture,
    start_adapter_fixture,
)
from tests.fake_discord import EPHEMERAL, FakeDiscord, FileOption, User, text_of
from tests.test_community_banks import GOOD

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
