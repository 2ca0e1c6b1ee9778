"""The Slack App Home: opening it and the lines a member reads there."""

from __future__ import annotations

from typing import Any

from tests.support.fake_slack import FakeSlack, SlackSender, User


def home_lines(view: dict[str, Any]) -> list[str]:
    """Each block's text as the member reads it (headers, sections, context)."""
    lines = []
    for block in view["blocks"]:
        if isinstance(block.get("text"), dict):
            lines.append(block["text"]["text"])
        for element in block.get("elements", []):
            if element.get("type") == "mrkdwn":
                lines.append(element["text"])
    return lines


async def open_home(fake: FakeSlack, slack: SlackSender, user: User, count: int = 1) -> dict[str, Any]:
    status, _ = await slack.open_home(user)
    assert status == 200
    await fake.wait_for("views.publish", count=count, user_id=user.id)
    return fake.home_views[(slack.team, user.id)]
