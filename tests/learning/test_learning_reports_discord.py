"""🚩 Report a question through the real discord.py adapter and the fake Discord, word for word:
the button under private feedback and under the reveal opens a modal (a reason menu and a note
box, capped), one report per member and question, the note inert, /report typed, and the
admin's queue."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.discord_fixtures import ALICE, StartAdapter, correct_position, post_daily_now
from tests.support.fake_discord import EPHEMERAL, MODAL, FakeDiscord, User, buttons_of, text_of

pytestmark = pytest.mark.platform("discord")

ADMIN = User(800_000_000_000_000_030, "ada")
CARA = User(800_000_000_000_000_031, "cara")
LABEL = 18  # Discord's label component: a modal field's text and its input
HOSTILE = "<@800000000000000030> @everyone [x](http://e.vil)"


def _labelled(message: dict, label: str) -> dict:
    [button] = [b for b in buttons_of(message) if b["label"] == label]
    return button


async def test_discord_report_from_feedback_and_the_reveal(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    question = await post_daily_now(fake)
    post_id = int(buttons_of(question)[0]["custom_id"].split(":")[2])
    right = await correct_position(app, post_id)
    feedback = await fake.original_of(await fake.click(int(question["id"]), buttons_of(question)[right]["custom_id"],
                                                       ALICE))
    flag = _labelled(feedback, "🚩 Report")
    assert flag["custom_id"] == f"td:f:{post_id}:0"
    opened = await fake.callback_of(await fake.click(int(feedback["id"]), flag["custom_id"], ALICE))
    assert opened.json["type"] == MODAL
    modal = opened.json["data"]
    assert modal["title"] == "Report this question" and modal["custom_id"].startswith("td-form:report:")
    [reason, note] = [row["component"] for row in modal["components"]]
    assert [(row["type"], row["label"]) for row in modal["components"]] == [
        (LABEL, "What is wrong with it?"), (LABEL, "Note for the admins (optional)")]
    assert reason["type"] == 3 and reason["custom_id"] == "td-field-reason" and reason["required"] is True
    assert [(o["label"], o["value"], o["description"]) for o in reason["options"]] == [
        ("Wrong key", "wrong-key", "the marked answer is wrong"),
        ("Ambiguous", "ambiguous", "more than one answer fits"),
        ("Outdated", "outdated", "no longer true of current PyTorch"),
        ("Typo", "typo", "a typo or formatting slip")]
    assert (note["type"], note["custom_id"], note["max_length"], note["required"]) == (4, "td-field-note", 300, False)
    assert note["placeholder"] == "At most 300 characters, shown to admins as plain text."
    with pytest.raises(AssertionError, match="caps td-field-note at 300"):
        await fake.submit_modal(modal, {"td-field-reason": "typo", "td-field-note": "x" * 301}, ALICE)
    with pytest.raises(AssertionError, match="without td-field-reason"):
        await fake.submit_modal(modal, {"td-field-note": "no reason"}, ALICE)
    with pytest.raises(AssertionError, match="'bogus' is not an option of td-field-reason"):
        await fake.submit_modal(modal, {"td-field-reason": "bogus"}, ALICE)

    thanks = await fake.original_of(await fake.submit_modal(modal, {"td-field-reason": "typo"}, ALICE))
    assert thanks["flags"] & EPHEMERAL
    assert text_of(thanks) == "\n\nThanks: your report (**Typo**) is in the admins' review queue.\n"
    again = (await fake.callback_of(await fake.click(int(feedback["id"]), flag["custom_id"], ALICE))).json["data"]
    assert again["custom_id"] != modal["custom_id"]  # each opened modal is its own
    noted = await fake.original_of(await fake.submit_modal(
        again, {"td-field-reason": "ambiguous", "td-field-note": HOSTILE}, ALICE))
    text = text_of(noted)
    assert text.startswith("\n\nYou had already reported this question; your report now says **Ambiguous**.\n\n"
                           "Your note:\n\n```text\n")
    assert "<@800000000000000030>" not in text and "@everyone" not in text  # inert: no mention, no ping
    assert noted.get("allowed_mentions", {}).get("parse", []) == []

    typed = await fake.original_of(await fake.slash("report", ALICE, post=post_id, reason="outdated"))
    assert text_of(typed).startswith(
        "\n\nYou had already reported this question; your report now says **Outdated**.\n\nYour note:\n")

    discord_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    revealed = fake.messages[int(question["id"])]
    assert [(b["label"], b["custom_id"]) for b in buttons_of(revealed)] == [("🚩 Report", f"td:f:{post_id}:0")]

    queue = await fake.original_of(await fake.slash("bank", ADMIN, admin=True, sub="review"))
    assert text_of(queue).startswith("\nQuestion report #1 by alice (1 waiting)\n**Outdated** · `")
    assert "(a built-in question) · 1 open report of it" in text_of(queue)
    assert "\nNote:\n\n```text\n" in text_of(queue)  # the member's note, inert, for the admins
    assert "<@800000000000000030>" not in text_of(queue) and "@everyone" not in text_of(queue)
    assert queue.get("allowed_mentions", {}).get("parse", []) == []
    dismissed = await fake.original_of(await fake.slash("bank", ADMIN, admin=True, sub="review",
                                                        action="dismiss", id=1))
    assert text_of(dismissed) == "\n\nReport #1 dismissed; the question stays as it is.\n"


async def test_discord_report_where_torchdrill_is_the_member_s_own_app(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    """In the member's DMs through a user install (no server, no admins), the 🚩 modal files
    the report as the button did before it: /report itself is not a user-install command."""
    await start_adapter()
    place = fake.user_install_dm(CARA)
    message = await fake.original_of(await fake.slash("quiz", CARA, place=place, count=10))
    for _ in range(30):  # through the quiz (flashcards: show, grade) to its first multiple-choice answer
        first = buttons_of(message)[0]["custom_id"]
        message = await fake.original_of(await fake.click(int(message["id"]), first, CARA, place=place))
        if any(b["label"] == "🚩 Report" for b in buttons_of(message)):
            break
    else:
        raise AssertionError("no multiple-choice question in the quiz")
    flag = _labelled(message, "🚩 Report")
    modal = (await fake.callback_of(await fake.click(int(message["id"]), flag["custom_id"], CARA,
                                                     place=place))).json["data"]
    thanks = await fake.original_of(await fake.submit_modal(modal, {"td-field-reason": "outdated"}, CARA,
                                                            place=place))
    assert thanks["flags"] & EPHEMERAL
    assert text_of(thanks) == "\n\nThanks: your report (**Outdated**) is in the admins' review queue.\n"
