"""`/run` end to end: modal or "Run code" → real embedded runner → output in a thread."""

from __future__ import annotations

import re

import pytest

from bot.app import App
from bot.core.runs.desk import RunDesk
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import (
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    MODAL,
    FakeDiscord,
    User,
    text_of,
)

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

CAROL = User(800_000_000_000_000_003, "carol")
BOB = User(800_000_000_000_000_002, "bob")
RESULT_TIMEOUT = 60


async def result_in_thread(fake: FakeDiscord, ack_id: int) -> dict:
    """The runner's result, posted with the bot token into the thread of the acknowledgement."""
    await fake.wait_for(
        "POST", f"/channels/{fake.channel_id}/messages/{ack_id}/threads", timeout=RESULT_TIMEOUT
    )
    post = await fake.wait_for("POST", f"/channels/{ack_id}/messages", timeout=RESULT_TIMEOUT)
    [message] = fake.in_channel(ack_id)
    assert post.query.get("wait") is None  # a bot-token channel post, not a webhook follow-up
    return message


async def test_run_modal_output_arrives_in_a_thread(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    token = await fake.slash("run", CAROL)
    opened = await fake.callback_of(token)
    assert opened.json["type"] == MODAL
    modal = opened.json["data"]
    field = modal["components"][0]["components"][0]
    assert field["style"] == 2  # paragraph: multi-line code

    token = await fake.submit_modal(modal, {field["custom_id"]: "print(1 + 1)"}, CAROL)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    assert not (callback.json.get("data") or {}).get("flags", 0) & EPHEMERAL
    ack = await fake.wait_until(
        lambda: (
            (m := fake.messages.get(fake.originals.get(token, 0))) and "queued" in text_of(m) and m
        )
    )
    assert "print(1 + 1)" in text_of(ack)

    result = await result_in_thread(fake, int(ack["id"]))
    assert "Finished" in text_of(result)
    assert "```text\n2\n```" in text_of(result)
    assert f"<@{CAROL.id}>" in text_of(result)


async def test_run_code_message_command_uploads_long_output_as_a_file(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    target = fake.user_message(CAROL, "Why is this long?\n```python\nprint('x' * 3000)\n```")
    token = await fake.message_command("Run code", target, CAROL)
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE
    ack = await fake.wait_until(
        lambda: (
            (m := fake.messages.get(fake.originals.get(token, 0))) and "queued" in text_of(m) and m
        )
    )
    assert "Why is this long" not in text_of(ack)  # the preview shows only the fenced code
    assert "print('x' * 3000)" in text_of(ack)
    await result_in_thread(fake, int(ack["id"]))
    [upload] = fake.sent("POST", f"/channels/{ack['id']}/messages")
    names = [name for name, _ in upload.files]
    assert names, "the full output must be attached as a file"
    assert any(b"x" * 3000 in content for _, content in upload.files)


async def test_run_refusal_is_private_and_starts_no_thread(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    image_only = fake.user_message(CAROL, "")  # e.g. a screenshot: no text to run
    token = await fake.message_command("Run code", image_only, CAROL)
    refusal = await fake.callback_of(token)  # refused before anything public exists
    assert refusal.json["type"] == 4 and refusal.json["data"]["flags"] & EPHEMERAL
    assert "There is no code to run" in text_of(refusal.json["data"])
    assert not fake.sent("PATCH", f"/webhooks/{fake.app_id}/{token}/messages/@original")
    assert not fake.threads


async def test_two_members_with_the_run_modal_open_both_get_results(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    """discord.py routes modal submits by custom_id: each opened modal needs its own."""
    await start_adapter()
    dave = User(800_000_000_000_000_004, "dave")
    opened = []
    for member in (CAROL, dave):  # both open the modal before either submits
        callback = await fake.callback_of(await fake.slash("run", member))
        opened.append(callback.json["data"])
    assert opened[0]["custom_id"] != opened[1]["custom_id"]
    tokens = []
    for modal, member, code in ((opened[1], dave, "print(6 * 7)"), (opened[0], CAROL, "print(2 + 2)")):
        field = modal["components"][0]["components"][0]
        tokens.append(await fake.submit_modal(modal, {field["custom_id"]: code}, member))
    for token, expected in zip(tokens, ("42", "4"), strict=True):
        ack = await fake.wait_until(
            lambda t=token: (m := fake.messages.get(fake.originals.get(t, 0))) and "queued" in text_of(m) and m
        )
        result = await result_in_thread(fake, int(ack["id"]))
        assert f"```text\n{expected}\n```" in text_of(result)


async def test_run_while_the_runner_starts_says_so(fake: FakeDiscord, start_adapter: StartAdapter, app: App) -> None:
    import asyncio

    await start_adapter()
    app.runs = None
    started = asyncio.Event()
    app.runner_task = asyncio.create_task(started.wait())  # a runner still warming up
    try:
        callback = await fake.callback_of(await fake.slash("run", CAROL))
        assert callback.json["data"]["flags"] & EPHEMERAL
        assert "The code runner is starting; try again in a few seconds." in text_of(callback.json["data"])
    finally:
        started.set()
        await app.runner_task


async def test_a_run_refused_by_the_queue_leaves_no_public_message(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    slow = fake.user_message(CAROL, "```python\nimport time\ntime.sleep(8)\nprint(1)\n```")
    first = await fake.message_command("Run code", slow, CAROL)
    await fake.wait_until(lambda: (m := fake.messages.get(fake.originals.get(first, 0))) and "queued" in text_of(m))
    again = await fake.message_command("Run code", fake.user_message(CAROL, "```python\nprint(2)\n```"), CAROL)
    refusal = await fake.wait_for("POST", f"/webhooks/{fake.app_id}/{again}")
    assert refusal.json["flags"] & EPHEMERAL
    ack = fake.messages[fake.originals[first]]
    [job_id] = re.findall(r"Job `([0-9a-f]+)` queued", text_of(ack))
    assert text_of(refusal.json).strip() == (f"You already have a job queued or running (`{job_id}`): wait for "
                                     "its result in its thread, or cancel it with /run cancel.")
    assert fake.sent("DELETE", f"/webhooks/{fake.app_id}/{again}/messages/@original")
    assert not [m for m in fake.in_channel(fake.channel_id) if "print(2)" in text_of(m) and "/run by" in text_of(m)]


async def cancel_reply(fake: FakeDiscord, user: User) -> str:
    """``/run action:cancel``: a private answer, no code box."""
    token = await fake.slash("run", user, action="cancel")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE and callback.json["data"]["flags"] & EPHEMERAL
    return text_of(await fake.original_of(token)).strip()


async def test_run_cancel_stops_only_the_members_own_job_and_its_thread_says_so(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk
) -> None:
    await start_adapter()
    slow = fake.user_message(CAROL, "```python\nimport time\ntime.sleep(30)\n```")
    first = await fake.message_command("Run code", slow, CAROL)
    ack = await fake.wait_until(lambda: (m := fake.messages.get(fake.originals.get(first, 0))) and "queued" in text_of(m) and m)
    [job_id] = re.findall(r"Job `([0-9a-f]+)` queued", text_of(ack))
    nothing = "You have no job queued or running, so there is nothing to cancel."
    assert await cancel_reply(fake, BOB) == nothing  # carol's job is not bob's to cancel
    assert await cancel_reply(fake, CAROL) == f"Your job `{job_id}` is cancelled; its thread will say so."
    result = await result_in_thread(fake, int(ack["id"]))
    assert text_of(result) == f"<@{CAROL.id}>\n🛑 Cancelled\nCancelled by its author.\n"  # no output
    assert await cancel_reply(fake, CAROL) == nothing  # once its result is out, nothing is left
