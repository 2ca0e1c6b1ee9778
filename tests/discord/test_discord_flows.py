"""End to end: the real discord.py client against a local fake Discord, a real app on SQLite."""

from __future__ import annotations

import pytest

from bot.adapters.discord.bot import DiscordAdapter
from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.discord_fixtures import ALICE, StartAdapter, correct_position, post_daily_now
from tests.support.fake_discord import (
    AUTOCOMPLETE_RESULT,
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    FakeDiscord,
    User,
    buttons_of,
    text_of,
)

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

BOB = User(800_000_000_000_000_002, "bob")


async def test_connects_and_identifies_through_configured_urls(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    adapter: DiscordAdapter = await start_adapter()
    assert adapter.client.is_ready()
    assert fake.identifies and fake.identifies[0]["token"] == fake.token
    assert fake.sent("GET", "/users/@me")
    assert not fake.sent("PUT", "/applications/"), "commands must not be synced on start"


async def test_help_is_an_ephemeral_reply(fake: FakeDiscord, start_adapter: StartAdapter) -> None:
    await start_adapter()
    token = await fake.slash("help", ALICE)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert "/quiz [topic] [count] [difficulty]" in text_of(reply)
    assert "channel, server or study group" not in text_of(reply)  # help shows usage lines


async def test_quiz_defers_privately_then_shows_the_first_question(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash("quiz", ALICE, count=2)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "Quiz 1/2" in text_of(reply)
    buttons = [b for row in reply["components"] for b in row["components"]]
    assert buttons and all(b["custom_id"].startswith("td:") for b in buttons)


async def test_daily_now_needs_manage_server(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash("daily", BOB, admin=False, sub="now")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE and callback.json["data"]["flags"] & EPHEMERAL
    reply = await fake.original_of(token)
    assert "Only members with the **Manage Server** permission can use /daily now." in text_of(reply)
    assert not fake.sent("POST", f"/channels/{fake.channel_id}/messages")


async def test_daily_answer_twice_restart_reveal_and_leaderboard(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    question = await post_daily_now(fake)
    buttons = buttons_of(question)
    assert len(buttons) == 4 and "0 answered" in text_of(question)
    post_id = int(buttons[0]["custom_id"].split(":")[2])
    right = await correct_position(app, post_id)

    # Alice answers: private feedback, the public message only shows the count.
    token = await fake.click(int(question["id"]), buttons[right]["custom_id"], ALICE)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    feedback = await fake.original_of(token)
    assert feedback["flags"] & EPHEMERAL and "Correct" in text_of(feedback)
    edit = await fake.wait_for("PATCH", f"/channels/{fake.channel_id}/messages/{question['id']}")
    public = text_of(fake.messages[int(question["id"])])
    assert "1 answered" in public and "Correct" not in public
    assert len(buttons_of(edit.json)) == 4

    # A second click: "already answered", nothing recorded twice.
    token = await fake.click(int(question["id"]), buttons[(right + 1) % 4]["custom_id"], ALICE)
    again = await fake.original_of(token)
    assert again["flags"] & EPHEMERAL and "already" in text_of(again).lower()

    # Restart the bot: Bob clicks a button of the message posted before the restart.
    await start_adapter()
    assert len(fake.identifies) == 2
    token = await fake.click(int(question["id"]), buttons[(right + 1) % 4]["custom_id"], BOB)
    wrong = await fake.original_of(token)
    assert wrong["flags"] & EPHEMERAL and "Correct" not in text_of(wrong)
    await fake.wait_until(lambda: "2 answered" in text_of(fake.messages[int(question["id"])]))

    # The reveal: results edited into the question (buttons gone), explanation in its thread.
    discord_clock.advance(hours=25)
    assert await app.drill.reveal_due(app.publisher) == 1
    revealed = fake.messages[int(question["id"])]
    assert [b["label"] for b in buttons_of(revealed)] == ["🚩 Report"]  # the answers' buttons gone
    assert "2 answered" in text_of(revealed) and "50% correct" in text_of(revealed)
    thread = await fake.wait_for(
        "POST", f"/channels/{fake.channel_id}/messages/{question['id']}/threads"
    )
    assert thread.json["name"]
    [explanation] = fake.in_channel(int(question["id"]))  # thread id == starter message id
    assert "Why:" in text_of(explanation)

    # The leaderboard is public and lists both members, Alice first.
    token = await fake.slash("leaderboard", BOB, scope="channel", period="all")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert not (callback.json.get("data") or {}).get("flags", 0) & EPHEMERAL
    board = text_of(await fake.original_of(token))
    assert board.index("alice") < board.index("bob")


async def test_round_runs_in_the_background_after_a_private_ack(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    """The fake clock jumps through each question's wait, so the whole round plays at once."""
    await start_adapter()
    token = await fake.slash("round", ALICE, count=1, seconds=10)
    ack = await fake.original_of(token)
    assert ack["flags"] & EPHEMERAL and "Round started" in text_of(ack)
    final = await fake.wait_until(
        lambda: next(
            (m for m in fake.in_channel(fake.channel_id) if "final standings" in text_of(m)), None
        )
    )
    [question] = [
        m
        for m in fake.in_channel(fake.channel_id)
        if "Round" in text_of(m) and "answer" in text_of(m) and m is not final
    ]
    assert [b["label"] for b in buttons_of(question)] == ["🚩 Report"], "the answers' buttons are gone"
    in_thread = [text_of(m) for m in fake.in_channel(int(question["id"]))]
    assert any("Why:" in t for t in in_thread) and any("after question 1/1" in t for t in in_thread)

    token = await fake.slash("round", ALICE, count=99)
    refusal = await fake.original_of(token)
    assert refusal["flags"] & EPHEMERAL and "count must be between" in text_of(refusal)


async def test_topic_autocomplete_and_bad_schedule_input(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App
) -> None:
    await start_adapter()
    token = await fake.autocomplete("quiz", ALICE, focused="topic", topic="")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == AUTOCOMPLETE_RESULT
    offered = {c["value"] for c in callback.json["data"]["choices"]}
    assert offered and offered <= set(app.library.topics_in_use())

    token = await fake.slash(
        "daily", ALICE, admin=True, sub="schedule", time="09:00", timezone="Mars/Olympus"
    )
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL and "unknown timezone 'Mars/Olympus'" in text_of(reply)
    token = await fake.slash("daily", ALICE, admin=True, sub="status")
    assert "No daily question here yet" in text_of(await fake.original_of(token))


async def test_group_commands_and_group_leaderboard(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    for user, action in ((ALICE, "create"), (BOB, "join"), (BOB, "join")):
        token = await fake.slash("group", user, action=action, name="Night Owls")
        reply = await fake.original_of(token)
        assert reply["flags"] & EPHEMERAL
    assert "already in **Night Owls**" in text_of(reply)
    token = await fake.slash("group", ALICE, action="list")
    assert "Night Owls (2 members)" in text_of(await fake.original_of(token))
    token = await fake.slash("group", BOB, action="join", name="nobody")
    assert "no study group called 'nobody'" in text_of(await fake.original_of(token))
    token = await fake.slash("leaderboard", ALICE, scope="group", group="Night Owls")
    board = await fake.original_of(token)
    assert not board.get("flags", 0) & EPHEMERAL and "group Night Owls" in text_of(board)


async def test_daily_schedule_pause_resume_and_status(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash(
        "daily", ALICE, admin=True, sub="schedule", time="09:30", timezone="Europe/Berlin",
        weekdays="mon-fri",
    )
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "09:30 Europe/Berlin on mon,tue,wed,thu,fri" in text_of(reply)
    token = await fake.slash("daily", ALICE, admin=True, sub="pause")
    assert "paused" in text_of(await fake.original_of(token))
    token = await fake.slash("daily", ALICE, admin=True, sub="status")
    assert "⏸ paused" in text_of(await fake.original_of(token))
    token = await fake.slash("daily", ALICE, admin=True, sub="resume")
    assert "resumed" in text_of(await fake.original_of(token))
    token = await fake.slash("daily", BOB, admin=False, sub="pause")
    assert "can use /daily pause" in text_of(await fake.original_of(token))


async def test_review_is_private_and_starts_with_a_question(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash("review", ALICE)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL and "Review 1/" in text_of(reply)
    assert buttons_of(reply)
