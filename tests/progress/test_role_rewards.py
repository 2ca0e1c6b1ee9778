"""Role rewards through the fake Discord (the real discord.py role endpoints): admins map a
milestone (a daily streak, challenges solved, readiness in a topic) to a role; the bot checks
its Manage Roles permission and the role's position first (GET the guild's roles and its own
member), gives the role when the milestone is reached, takes a streak role when the streak
ends, records each change once, and tells admins plainly what it cannot do."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.progress.rewards import problem_of
from bot.storage.models import Channel
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import FakeDiscord, User
from tests.support.role_rewards import ALICE, _day, _practised, rewards

pytestmark = pytest.mark.platform("discord")

BOB = User(800_000_000_000_000_002, "bob")


async def test_streak_roles_are_given_taken_and_refusals_reach_admins(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    regular = fake.add_role("Regular", position=5)
    mods = fake.add_role("Mods", position=20)  # above the bot's own role
    assert "Only members with the **Manage Server** permission can use /daily rewards." in await rewards(
        fake, BOB, action="add", streak=2, role=f"<@&{regular}>")
    assert await rewards(fake, action="add", streak=2, role="everyone") == (
        "'everyone' is not a role: pick one (role:@Name) or give its id")
    assert await rewards(fake, action="add", streak=2, role=f"<@&{regular}>") == (
        f"Members whose daily streak here reaches **2** now get <@&{regular}> (and lose it when the "
        "streak ends).")
    assert fake.sent("GET", f"/guilds/{fake.guild_id}/roles")  # checked before any grant

    await _day(fake, app, discord_clock, right=[ALICE, BOB], wrong=[])
    assert not fake.sent("PUT", f"/guilds/{fake.guild_id}/members")
    await _day(fake, app, discord_clock, right=[ALICE, BOB], wrong=[])
    assert fake.member_roles == {ALICE.id: {regular}, BOB.id: {regular}}
    assert await rewards(fake) == f"Role rewards in this channel\n🔥 streak 2 → <@&{regular}> · 2 members"

    await _day(fake, app, discord_clock, right=[BOB], wrong=[ALICE])  # Alice's streak ends
    assert fake.member_roles == {ALICE.id: set(), BOB.id: {regular}}
    assert len(fake.sent("DELETE", f"/guilds/{fake.guild_id}/members/{ALICE.id}/roles/{regular}")) == 1
    puts = len(fake.sent("PUT", "/guilds/"))
    where = Where("discord", str(fake.guild_id), str(fake.channel_id), "general")
    async with app.db.read() as session:
        channel_pk = await session.scalar(select(Channel.id).where(Channel.channel_id == str(fake.channel_id)))
    assert channel_pk is not None
    await app.drill.sync_rewards(channel_pk, where, app.publisher)  # again: nothing to change
    assert len(fake.sent("PUT", "/guilds/")) == puts

    # a role above the bot's: the bot sees it first and says so; Discord is never asked
    position = (f"I cannot give <@&{mods}>: it sits at or above the bot's own role. Drag the "
                f"bot's role above <@&{mods}> in Server Settings → Roles")
    assert await rewards(fake, action="add", streak=1, role=str(mods)) == (
        f"Members whose daily streak here reaches **1** now get <@&{mods}> (and lose it when the "
        f"streak ends).\n⚠️ {position}; until then nobody gets it.")
    assert not fake.sent("PUT", f"/guilds/{fake.guild_id}/members/{BOB.id}/roles/{mods}")
    assert await rewards(fake) == (
        "Role rewards in this channel\n"
        f"🔥 streak 1 → <@&{mods}> · 0 members\n⚠️ {position}\n"
        f"🔥 streak 2 → <@&{regular}> · 1 member")
    fake.bot_top_position = 30  # the admin fixes the role order: the next reveal gives it
    await _day(fake, app, discord_clock, right=[BOB], wrong=[])
    assert fake.member_roles[BOB.id] == {regular, mods}
    assert await rewards(fake, action="remove", role=str(mods)) == (
        f"No more reward for <@&{mods}> here (members keep what they were given).")
    assert await rewards(fake) == f"Role rewards in this channel\n🔥 streak 2 → <@&{regular}> · 1 member"


async def test_solved_and_readiness_milestones_and_a_missing_manage_roles(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    solver = fake.add_role("Solver", position=3)
    ready = fake.add_role("Autograd ready", position=4)
    assert await rewards(fake, action="add", role=str(solver)) == (
        "Say which milestone earns it: streak:7, solved:5, or readiness:70 with a topic (one of them).")
    assert await rewards(fake, action="add", readiness=70, role=str(ready)) == (
        "Say which milestone earns it: streak:7, solved:5, or readiness:70 with a topic (one of them).")
    assert await rewards(fake, action="add", solved=2, role=str(solver)) == (
        f"Members who have solved **2** challenges now get <@&{solver}> (the moment a /submit "
        "verdict gets them there).")
    assert await rewards(fake, action="add", readiness=70, topic="autograd", role=str(ready)) == (
        f"Members whose readiness in **autograd** reaches **70%** now get <@&{ready}> (the moment "
        "an answer gets them there).")

    guild = str(fake.guild_id)
    await _day(fake, app, discord_clock, right=[ALICE, BOB], wrong=[])  # both are members now
    [first, second] = app.services.challenges.bank.challenges[:2]
    for challenge in (first, second):
        await app.services.challenges.record(Who("discord", guild, str(ALICE.id), "alice"), challenge, solved=True)
    await app.services.challenges.record(Who("discord", guild, str(BOB.id), "bob"), first, solved=True)
    await _day(fake, app, discord_clock, right=[ALICE, BOB], wrong=[])
    assert fake.member_roles == {ALICE.id: {solver}}  # too few answers for any readiness yet
    await _day(fake, app, discord_clock, right=[BOB], wrong=[ALICE])  # a solve milestone stays
    assert fake.member_roles == {ALICE.id: {solver}}
    assert len(fake.sent("PUT", f"/guilds/{fake.guild_id}/members/{ALICE.id}/roles/{solver}")) == 1
    assert await rewards(fake) == (
        "Role rewards in this channel\n"
        f"🧩 2 challenges solved → <@&{solver}> · 1 member\n"
        f"🎯 readiness in autograd ≥ 70% → <@&{ready}> · 0 members")

    # without Manage Roles the bot says so before asking Discord, and grants nothing
    fake.bot_manage_roles = False
    await app.services.challenges.record(Who("discord", guild, str(BOB.id), "bob"), second, solved=True)
    puts = len(fake.sent("PUT", "/guilds/"))
    await _day(fake, app, discord_clock, right=[BOB], wrong=[])
    assert len(fake.sent("PUT", "/guilds/")) == puts and BOB.id not in fake.member_roles
    lacks = (f"I cannot give <@&{solver}>: the bot lacks **Manage Roles** in this server. Give its "
             "role that permission in Server Settings → Roles")
    assert await rewards(fake) == (
        "Role rewards in this channel\n"
        f"🧩 2 challenges solved → <@&{solver}> · 1 member\n⚠️ {lacks}\n"
        f"🎯 readiness in autograd ≥ 70% → <@&{ready}> · 0 members")
    fake.bot_manage_roles = True  # fixed: the next reveal gives Bob his role
    await _day(fake, app, discord_clock, right=[BOB], wrong=[])
    assert fake.member_roles[BOB.id] == {solver}

    await _practised(app, str(ALICE.id), "autograd", 20, discord_clock.now())  # Alice gets ready
    await _day(fake, app, discord_clock, right=[BOB], wrong=[])
    assert fake.member_roles == {ALICE.id: {solver}, BOB.id: {solver}}  # checked when hers move
    await _day(fake, app, discord_clock, right=[BOB, ALICE], wrong=[])  # her answer's reveal
    assert fake.member_roles == {ALICE.id: {solver, ready}, BOB.id: {solver}}
    assert await rewards(fake) == (
        "Role rewards in this channel\n"
        f"🧩 2 challenges solved → <@&{solver}> · 2 members\n"
        f"🎯 readiness in autograd ≥ 70% → <@&{ready}> · 1 member")


def test_the_bot_may_manage_only_roles_below_its_own_with_manage_roles() -> None:
    everyone, mine, low, high = "1", "2", "3", "4"
    roles = {everyone: (0, 0), mine: (5, 1 << 28), low: (4, 0), high: (5, 0)}
    assert problem_of(roles, [mine], everyone, low) is None
    assert problem_of(roles, [mine], everyone, high) == "position"  # equal is not below
    assert problem_of(roles, [mine], everyone, "9") == "unknown_role"
    assert problem_of({**roles, mine: (5, 0)}, [mine], everyone, low) == "manage_roles"
    assert problem_of({**roles, everyone: (0, 1 << 3), mine: (5, 0)}, [mine], everyone, low) is None  # admin
