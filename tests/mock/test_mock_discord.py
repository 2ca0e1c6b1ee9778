"""/mock on Discord end to end: the real discord.py client against the fake Discord, the app
``build_app`` wires, a fake clock. Typed options, private replies, buttons on ephemeral
messages, the member's answer inert, and the report."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of
from tests.support.mock_discord import keyed

pytestmark = pytest.mark.platform("discord")

ALICE = User(800_000_000_000_000_001, "alice")


def labelled(message: dict[str, Any], label: str) -> str:
    [button] = [b for b in buttons_of(message) if b.get("label") == label]
    return str(button["custom_id"])


async def press(fake: FakeDiscord, message: dict[str, Any], custom_id: str) -> dict[str, Any]:
    token = await fake.click(int(message["id"]), custom_id, ALICE)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    return reply


async def test_a_short_mock_on_discord(fake: FakeDiscord, start_adapter: StartAdapter, app: App,
                                       discord_clock: FakeClock) -> None:
    await start_adapter()
    token = await fake.slash("mock", ALICE, track="infra", minutes=12)
    message = await fake.original_of(token)
    assert message["flags"] & EPHEMERAL
    text = text_of(message)
    assert "Mock · MCQ 1/8 · " in text and "⏱ 12:00 left · ends 09:12 UTC · item 1/10 · Training/infra engineer" in text
    for n in range(8):
        discord_clock.advance(15)
        message = await press(fake, message, await keyed(app, message, right=n % 2 == 0))
    assert "Mock · Explain-it 1/1 · " in text_of(message)
    assert "Write your answer with `/mock answer …`" in text_of(message)
    token = await fake.slash("mock", ALICE, action="answer", text="It's **not** @everyone's <@1> job")
    checklist = await fake.original_of(token)
    text = text_of(checklist)
    assert "It's **not** @everyone's <@1> job" in text  # shown in a code block: inert
    assert "☐ 1. " in text
    ticked = await press(fake, checklist, labelled(checklist, "1"))
    assert "☑ 1. " in text_of(ticked)
    coding = await press(fake, ticked, labelled(ticked, "Done"))
    assert "Mock · Coding 1/1 · 🧩 " in text_of(coding)
    report = text_of(await press(fake, coding, labelled(coding, "Done")))
    assert "📋 Mock interview report · Training/infra engineer · 12 min" in report
    assert "Finished with 10 min to spare." in report
    assert " · MCQs 4/8 · Explain-it (self-graded) " in report and " · Coding 0/1" in report
    assert "1. MCQ · " in report and " · ✅ · 15 s" in report and "2. MCQ · " in report and " · ❌ · 15 s" in report
    assert "/review` brings back the " in report
