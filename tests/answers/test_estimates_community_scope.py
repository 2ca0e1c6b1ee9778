"""Stored estimates of a community's own question live in that community's scope (its
workspace), online (at the reveal) and after the refit; built-in ones share scope 0."""

from __future__ import annotations

from sqlalchemy import select

from bot.core.domain.actions import Action, Verb, decode
from bot.core.domain.identity import Who
from bot.storage.estimates import refit
from bot.storage.models import Answer, QuestionDifficulty, QuestionDifficultyStripe
from tests.support.community_banks import GOOD, admin, upload


async def test_a_community_question_is_calibrated_within_its_community(world, clock) -> None:
    desk, publisher = world
    await upload(desk, GOOD)
    await desk.execute_text(admin(), "daily", "schedule 09:00 banks:community")
    await desk.execute_text(admin(), "daily", "now")
    post_id = decode(publisher.posts[-1][1].buttons[0].action_id).post_id
    drill = desk.services.drill
    for i in range(6):
        who = Who("test", "ws-a", f"u-{i}", f"m{i}")
        assert (await drill.handle_action(who, Action(Verb.PICK, post_id, i % 4).encode())).recorded
    clock.advance(hours=13)
    await drill.reveal_due(publisher)
    async with drill.db.read() as session:
        question_id, workspace_id = (await session.execute(
            select(Answer.question_id, Answer.workspace_id).where(Answer.post_id == post_id).limit(1))).one()
        scopes = set((await session.execute(select(QuestionDifficultyStripe.scope_id))).scalars())
    assert question_id.startswith("c") and scopes == {workspace_id} and workspace_id != 0
    summary = await refit(drill.db, drill.library, clock.now())
    async with drill.db.read() as session:
        base = (await session.execute(select(QuestionDifficulty.question_id, QuestionDifficulty.scope_id,
                                             QuestionDifficulty.n))).all()
    assert summary.scopes == 1 and base == [(question_id, workspace_id, 6)]
