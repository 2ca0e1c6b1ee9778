"""Table-driven from the catalogue: Discord gets the same out-of-range refusal as Slack and the
console (Discord's client enforces ranges too, but a raw request must not get past the core)."""

from __future__ import annotations

import pytest

from bot.core.commands.catalogue import COMMANDS
from tests.support.catalogue_cases import CASES, OutOfRange
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, User, text_of

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("discord"),
]

ALICE = User(800_000_000_000_000_001, "alice")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_discord_refuses_out_of_range_with_the_core_message(
    case: OutOfRange, fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    options: dict[str, object] = {**case.required, case.option.name: case.value}
    sub = case.path[1] if len(case.path) > 1 else None
    if COMMANDS.find(case.path[0]).form_input:  # type: ignore[union-attr]
        opened = await fake.callback_of(await fake.slash(case.path[0], ALICE))
        modal = opened.json["data"]
        typed = {f"td-opt-{name}": str(value) for name, value in options.items()}
        token = await fake.submit_modal(modal, {c["custom_id"]: typed.get(c["custom_id"], "")
                                                for row in modal["components"] for c in row["components"]},
                                        ALICE)
    else:
        token = await fake.slash(case.path[0], ALICE, admin=case.admin_only, sub=sub, **options)
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert case.refusal in text_of(reply)


async def test_unknown_command_and_foreign_buttons_are_answered(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    token = await fake.slash("nosuch", ALICE)
    callback = await fake.callback_of(token)
    assert callback.json["data"]["flags"] & EPHEMERAL
    assert "I don't know /nosuch — try /help." in text_of(callback.json["data"])
    message = fake.user_message(ALICE, "an old message with someone else's buttons")
    for custom_id in ("totally-bogus", "td:a:notanumber:0"):
        token = await fake.click(int(message["id"]), custom_id, ALICE)
        callback = await fake.callback_of(token)
        assert callback.json["data"]["flags"] & EPHEMERAL
        assert "That button is not one of mine anymore." in text_of(callback.json["data"])
