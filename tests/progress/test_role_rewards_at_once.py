"""Solve and readiness rewards the moment they are earned, through the fake Discord and the real
app wiring: a /submit verdict that passes gives the "N challenges solved" role before the
verdict is posted (the bot's Manage Roles checked first, each grant recorded once), and a
private answer that moves the member's estimates gives the readiness role.

The submission is judged by a real embedded runner in the sandbox (the shared ``runs``
fixture, as the challenge tests use), and its verdict comes back through the runner's result
callback."""

from __future__ import annotations

import pytest

from bot.app import App
from bot.core.content.bank import Kind
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Who
from bot.core.runs.desk import RunDesk
from bot.storage.models import Post
from tests.support.discord_fixtures import StartAdapter, correct_position
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, buttons_of, text_of
from tests.support.role_rewards import _day, _practised, rewards

pytestmark = [
    pytest.mark.not_for_mutation,  # judges real code in the sandbox: slow for mutants
    pytest.mark.platform("discord"),
]

ALICE = User(800_000_000_000_000_001, "alice")
DANA = User(800_000_000_000_000_004, "dana")
EVE = User(800_000_000_000_000_005, "eve")
RESULT_TIMEOUT = 60


async def _is_mcq(app: App, post_id: int) -> bool:
    async with app.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        return app.library[post.question_id].kind is Kind.MCQ


async def _solve(fake: FakeDiscord, app: App, user: User) -> str:
    """/challenge, then /submit its reference solution; returns the verdict members read."""
    await fake.original_of(await fake.slash("challenge", user, topic="autograd", difficulty=2))
    challenge = await app.commands.services.challenges.current(Who("discord", str(fake.guild_id), str(user.id), user.name))
    assert challenge is not None
    modal = (await fake.callback_of(await fake.slash("submit", user))).json["data"]
    field = modal["components"][0]["components"][0]
    token = await fake.submit_modal(modal, {field["custom_id"]: challenge.reference}, user)
    ack = await fake.wait_until(
        lambda: (m := fake.messages.get(fake.originals.get(token, 0))) and "Judging" in text_of(m) and m)
    await fake.wait_for("POST", f"/channels/{int(ack['id'])}/messages", timeout=RESULT_TIMEOUT)
    [verdict] = fake.in_channel(int(ack["id"]))
    return text_of(verdict)


async def test_a_passing_submit_gives_the_solved_role_at_once(
    fake: FakeDiscord, start_adapter: StartAdapter, runs: RunDesk, app: App
) -> None:
    await start_adapter()
    solver = fake.add_role("Solver", position=3)
    assert await rewards(fake, action="add", solved=1, role=str(solver)) == (
        f"Members who have solved **1** challenge now get <@&{solver}> (the moment a /submit "
        "verdict gets them there).")

    verdict = await _solve(fake, app, DANA)
    assert "✅ Solved" in verdict
    assert fake.member_roles == {DANA.id: {solver}}  # given before the verdict was posted
    assert len(fake.sent("PUT", f"/guilds/{fake.guild_id}/members/{DANA.id}/roles/{solver}")) == 1
    assert await rewards(fake) == (
        f"Role rewards in this channel\n🧩 1 challenge solved → <@&{solver}> · 1 member")

    # without Manage Roles the bot asks Discord nothing and admins read why
    fake.bot_manage_roles = False
    assert "✅ Solved" in await _solve(fake, app, EVE)
    assert EVE.id not in fake.member_roles
    assert not fake.sent("PUT", f"/guilds/{fake.guild_id}/members/{EVE.id}/roles/{solver}")
    assert await rewards(fake) == (
        f"Role rewards in this channel\n🧩 1 challenge solved → <@&{solver}> · 1 member\n"
        f"⚠️ I cannot give <@&{solver}>: the bot lacks **Manage Roles** in this server. Give its "
        "role that permission in Server Settings → Roles")


async def test_a_private_answer_that_moves_readiness_gives_the_role(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    ready = fake.add_role("Autograd ready", position=4)
    assert await rewards(fake, action="add", readiness=70, topic="autograd", role=str(ready)) == (
        f"Members whose readiness in **autograd** reaches **70%** now get <@&{ready}> (the moment "
        "an answer gets them there).")
    await _day(fake, app, discord_clock, right=[ALICE], wrong=[])  # Alice is a member now
    await _practised(app, str(ALICE.id), "autograd", 20, discord_clock.now())  # no answer checked yet
    assert ALICE.id not in fake.member_roles

    for _ in range(30):  # the quiz draws at random and may open with a flashcard: ask again
        reply = await fake.original_of(await fake.slash("quiz", ALICE, topic="autograd", count=1))
        assert reply["flags"] & EPHEMERAL
        buttons = buttons_of(reply)
        if await _is_mcq(app, int(buttons[0]["custom_id"].split(":")[2])):
            break
    else:
        pytest.fail("30 quizzes in a row opened with a flashcard")
    right = await correct_position(app, int(buttons[0]["custom_id"].split(":")[2]))
    answered = await fake.original_of(await fake.click(int(reply["id"]), buttons[right]["custom_id"], ALICE))
    assert "Correct" in text_of(answered)
    assert fake.member_roles == {ALICE.id: {ready}}
    assert await rewards(fake) == (
        f"Role rewards in this channel\n🎯 readiness in autograd ≥ 70% → <@&{ready}> · 1 member")
