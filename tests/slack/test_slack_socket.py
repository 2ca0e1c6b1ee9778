"""Socket Mode end to end: the adapter opens a WebSocket via apps.connections.open on the fake
Slack, acknowledges envelopes at once and answers through the Web API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from bot.adapters.slack.app import SlackAdapter, SlackConfigError
from bot.app import App
from bot.config import SlackMode
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE, BOB, correct_position

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]


@pytest.fixture
async def socket_adapter(fake: FakeSlack, app: App) -> AsyncIterator[SlackAdapter]:
    app.settings.slack_mode = SlackMode.SOCKET
    app.settings.slack_app_token = SecretStr(fake.app_token)
    adapter = SlackAdapter(app)
    assert not adapter.serves_http
    app.publisher.register(adapter.platform, adapter.publisher)
    await adapter.start()
    yield adapter
    await adapter.close()


async def acked(fake: FakeSlack, envelope_id: str) -> dict:
    return await fake.wait_until(
        lambda: next((a for a in fake.socket_acks if a.get("envelope_id") == envelope_id), None)
    )


async def test_socket_mode_commands_and_clicks(
    fake: FakeSlack, app: App, socket_adapter: SlackAdapter
) -> None:
    assert fake.sent("apps.connections.open")
    sender = SlackSender(fake, url="", signing_secret="")
    envelope = await fake.push("slash_commands", sender.command_payload("/daily", ALICE, "now"))
    await acked(fake, envelope)
    await fake.wait_for("respond")
    [question] = [m for m in fake.in_channel() if buttons_of(m)]

    right = await correct_position(app, int(buttons_of(question)[0]["action_id"].split(":")[2]))
    action = buttons_of(question)[right]["action_id"]
    envelope = await fake.push("interactive", sender.click_payload(question, action, BOB))
    await acked(fake, envelope)
    feedback = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert "Correct" in text_of(feedback.data)
    await fake.wait_until(lambda: "1 answered" in text_of(question))


def test_missing_tokens_are_named(app: App) -> None:
    app.settings.slack_mode = SlackMode.SOCKET
    app.settings.slack_app_token = None
    with pytest.raises(SlackConfigError, match="SLACK_APP_TOKEN"):
        SlackAdapter(app)
    app.settings.slack_mode = SlackMode.HTTP
    app.settings.slack_signing_secret = None
    with pytest.raises(SlackConfigError, match="SLACK_SIGNING_SECRET"):
        SlackAdapter(app)
