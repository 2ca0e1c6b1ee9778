"""/challenge and /submit end to end through real slack-bolt against the fake Slack: the
problem arrives privately, /submit opens a modal prefilled with its stub, and a wrong
solution's verdict lands in the acknowledgement's thread."""

from __future__ import annotations

import pytest

from bot.adapters.slack.handlers import CODE_ACTION_ID, CODE_BLOCK_ID
from bot.app import App
from bot.core.domain.identity import Who
from bot.core.runs.desk import RunDesk
from tests.support.fake_slack import FakeSlack, SlackSender, text_of
from tests.support.slack_fixtures import CAROL

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]

RESULT_TIMEOUT = 60


async def test_open_then_submit_a_wrong_solution_in_the_prefilled_modal(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk, app: App
) -> None:
    await slack.command("/challenge", CAROL, "losses 1")
    shown = await fake.wait_for("respond")
    assert shown.data["response_type"] == "ephemeral"
    assert "/submit" in text_of(shown.data)

    status, _ = await slack.command("/submit", CAROL)
    assert status == 200
    opened = await fake.wait_for("views.open")
    view = opened.data["view"]
    assert view["title"]["text"] == "Submit your solution"
    [block] = view["blocks"]
    stub = block["element"]["initial_value"]
    assert "raise NotImplementedError" in stub and block["element"]["max_length"] == 3000

    status, body = await slack.submit_view(view, {CODE_BLOCK_ID: {CODE_ACTION_ID: stub}}, CAROL)
    assert status == 200 and body == ""
    ack = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if "Judging" in text_of(m)), None))
    assert "carol submitted a solution" in text_of(ack)
    verdict = await fake.wait_until(
        lambda: next(iter(fake.in_channel(thread_ts=ack["ts"])), None), RESULT_TIMEOUT)
    text = text_of(verdict)
    assert "tests passed" in text and "First failure: test '" in text
    assert "NotImplementedError" in text and "🏅" not in text


async def test_a_right_solution_reaches_the_workspace_board(
    fake: FakeSlack, slack: SlackSender, runs: RunDesk, app: App
) -> None:
    await slack.command("/challenge", CAROL, "losses 1")
    await fake.wait_for("respond")
    challenge = await app.commands.services.challenges.current(
        Who("slack", fake.team_id, CAROL.id, CAROL.name))
    assert challenge is not None
    await slack.command("/submit", CAROL)
    view = (await fake.wait_for("views.open")).data["view"]
    await slack.submit_view(view, {CODE_BLOCK_ID: {CODE_ACTION_ID: challenge.reference}}, CAROL)
    ack = await fake.wait_until(
        lambda: next((m for m in fake.in_channel() if "Judging" in text_of(m)), None))
    verdict = await fake.wait_until(
        lambda: next(iter(fake.in_channel(thread_ts=ack["ts"])), None), RESULT_TIMEOUT)
    assert f"+{challenge.points} points (first solve)" in text_of(verdict)
    await slack.command("/leaderboard", CAROL, "workspace all")
    board = text_of((await fake.wait_for("respond", count=2)).data)
    assert f"— {challenge.points} pts · coding challenges" in board and "carol" in board
