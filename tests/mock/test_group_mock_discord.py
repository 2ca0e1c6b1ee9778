"""Group mocks and community tracks through the real discord.py adapter and the fake Discord:
an admin uploads the server's own tracks (checked like content/tracks.yaml, ``line N:``
problems), the track option offers built-in and the server's tracks by autocomplete, an
unknown track lists them; an admin schedules a group mock (a member may not); the tick posts
it once with Start; two members press Start and get the same first question privately; at the
close the board is posted once in the post's thread."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App
from bot.core.domain.clock import FakeClock
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, FileOption, User, buttons_of, text_of
from tests.support.mock_discord import keyed

pytestmark = pytest.mark.platform("discord")

ADMIN = User(800_000_000_000_000_001, "alice")
MEMBER = User(800_000_000_000_000_002, "bob")
AUTOCOMPLETE_RESULT = 8

OURS = b"""tracks:
  - slug: vision
    name: Vision engineer
    aliases: [cv]
    difficulty: 2
    weights: {tensors: 2, nn-modules: 2, performance: 1}
    challenges: [layer-norm, one-hot]
"""
BROKEN = b"""tracks:
  - slug: ml
    name: Mine
    weights: {tensors: 2, quantum: 1}
    challenges: [layer-norm, no-such-challenge]
"""


def public(fake: FakeDiscord, channel_id: int) -> list[dict[str, Any]]:
    return [m for m in fake.in_channel(channel_id) if not (m.get("flags") or 0) & EPHEMERAL]


async def reply_to(fake: FakeDiscord, token: str) -> str:
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    return text_of(reply)


async def test_community_tracks_and_a_group_mock_on_discord(
    fake: FakeDiscord, start_adapter: StartAdapter, app: App, discord_clock: FakeClock
) -> None:
    await start_adapter()
    broken = await reply_to(fake, await fake.slash("bank", ADMIN, admin=True, sub="upload",
                                                   file=FileOption("tracks.yaml", BROKEN)))
    assert broken == (
        "\ntracks.yaml was not stored: fix these and upload it again\n```text\n"
        "line 2: slug: 'ml' is taken (a built-in track, or a word /mock reads)\n"
        "line 4: weights: unknown topic 'quantum' (known: autograd, checkpointing, compile-export, data, "
        "debugging, distributed, fundamentals, gpu-memory, losses, mixed-precision, nn-modules, "
        "optimization, performance, tensors, training-loop)\n"
        "line 5: challenges: unknown challenge 'no-such-challenge'\n```\n")
    refused = await reply_to(fake, await fake.slash("bank", MEMBER, sub="upload", file=FileOption("tracks.yaml", OURS)))
    assert refused == "\n\nOnly members with the **Manage Server** permission can use /bank upload.\n"
    stored = await reply_to(fake, await fake.slash("bank", ADMIN, admin=True, sub="upload",
                                                   file=FileOption("tracks.yaml", OURS)))
    assert stored == (
        "\nTracks stored: 1 of this community's own\nMembers can now take them with /mock (their names show "
        "in its track list); uploading a tracks file again replaces them:\n`vision` **Vision engineer** · "
        "Tensors 2, nn.Module and layers 2, Performance 1\n")
    token = await fake.autocomplete("mock", MEMBER, focused="track", track="")
    callback = await fake.callback_of(token)
    assert callback.json["type"] == AUTOCOMPLETE_RESULT
    assert callback.json["data"]["choices"] == [
        {"name": "ML engineer (ml)", "value": "ml"}, {"name": "Research engineer (research)", "value": "research"},
        {"name": "Training/infra engineer (infra)", "value": "infra"},
        {"name": "Vision engineer (vision)", "value": "vision"}]
    callback = await fake.callback_of(await fake.autocomplete("mock", MEMBER, focused="track", track="vis"))
    assert callback.json["data"]["choices"] == [{"name": "Vision engineer (vision)", "value": "vision"}]
    assert await reply_to(fake, await fake.slash("mock", MEMBER, track="nope")) == (
        "\n\nThere is no track 'nope'. Tracks here: ml (ML engineer), research (Research engineer), "
        "infra (Training/infra engineer), vision (Vision engineer).\n")
    assert await reply_to(fake, await fake.slash("mock", MEMBER, action="schedule", at="09:30")) == (
        "\n\nOnly members with the **Manage Server** permission can use /mock schedule.\n")
    scheduled = await reply_to(fake, await fake.slash("mock", ADMIN, admin=True, action="schedule", at="09:30",
                                                      track="cv", minutes=20))
    assert scheduled == (
        "\n\nGroup mock #1 scheduled: Vision engineer · 20 min · Wed 04 Mar 09:30 UTC. At that time I post it "
        "here with a Start button; everyone who presses it gets the same 11 questions (8 MCQs, 2 explain-it "
        "questions (self-graded), 1 coding challenge), and the board goes up when it closes at Wed 04 Mar "
        "09:50 UTC. `/mock cancel 1` cancels it.\n")
    discord_clock.advance(30 * 60)
    await app.scheduler.tick()
    await app.scheduler.tick()
    [post] = public(fake, fake.channel_id)
    assert text_of(post) == (
        "\n🎤 Group mock #1 · Vision engineer · 20 min\nEveryone gets the same 11 questions: 8 MCQs, "
        "2 explain-it questions (self-graded), 1 coding challenge. Press **Start** for your own private "
        "session; every session ends at Wed 04 Mar 09:50 UTC.\n\nThe board of this mock appears in this "
        "post's thread when it closes.\n")
    [start] = buttons_of(post)
    assert start["label"] == "Start"
    first = await fake.original_of(await fake.click(int(post["id"]), start["custom_id"], MEMBER))
    second = await fake.original_of(await fake.click(int(post["id"]), start["custom_id"], ADMIN))
    for joined in (first, second):
        assert joined["flags"] & EPHEMERAL  # each member's session is private
        assert text_of(joined).startswith("\nMock · MCQ 1/8 · ")
        assert text_of(joined).endswith("⏱ 20:00 left · ends 09:50 UTC · item 1/11 · Vision engineer")
    assert text_of(first).split("\n")[:3] == text_of(second).split("\n")[:3]  # the same question
    discord_clock.advance(60)
    right = await fake.original_of(await fake.click(int(second["id"]), await keyed(app, second, True), ADMIN))
    assert "Answer recorded; results come in the report." in text_of(right)
    discord_clock.advance(19 * 60)
    await app.scheduler.tick()
    await app.scheduler.tick()
    [board] = public(fake, int(post["id"]))  # in the post's thread, once
    assert text_of(board) == (
        "\n🏁 Group mock #1 closed · Vision engineer · 20 min\n2 members took part · ranked by score, then "
        "time:\n🥇 **alice** — 1/11 (9%) · 20 min\n🥈 **bob** — 0/11 (0%) · 20 min\n")
