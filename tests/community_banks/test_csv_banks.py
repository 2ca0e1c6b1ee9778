"""Community banks from a spreadsheet: `/bank upload` with a .csv through the fake Discord.
Every problem names its CSV line; nothing is stored unless every row is clean; the stored bank
is served and exported as YAML like an uploaded one."""

from __future__ import annotations

import pytest
import yaml

from bot.app import App
from bot.core.content.csv_bank import check_csv_bank
from tests.support.discord_fixtures import StartAdapter
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, FileOption, User, text_of

pytestmark = pytest.mark.platform("discord")

ADMIN = User(800_000_000_000_000_010, "ada")
MEMBER = User(800_000_000_000_000_011, "mia")

HEADER = "Prompt,Choice A,Choice B,Choice C,Choice D,Answer,Explanation,Topic,Difficulty,Why not A,Why not B,Why not C,Why not D\n"
ROW_1 = ("When does our team call `zero_grad`?,After step,Before backward,Never,Twice,B,"
         "Gradients accumulate; clear them before each backward.,autograd,1,"
         "The next backward would add to stale grads.,,It accumulates forever.,Once is enough.\n")
ROW_2 = ('"What does\n`model.eval()` switch?",Grad mode,Device,Dropout and norm,Dtype,Dropout and norm,'
         "It changes layers that behave differently in training.,nn-modules,2,"
         "no_grad does that.,to() does that.,,Casting does that.\n")
GOOD = (HEADER + ROW_1 + ROW_2).encode()


def test_rows_with_problems_are_named_by_their_csv_line(app: App) -> None:
    broken = (HEADER + ROW_1 + ROW_2 + ROW_1.replace(",B,", ",E,") + ROW_1.replace(",1,", ",5,")
              + "too,few,cells\n" + ROW_1.replace("autograd", "")).encode()
    checked = check_csv_bank(broken, "our-loop.csv", app.library).checked
    assert not checked.ok and checked.errors == [
        "line 5: answer must be A, B, C or D (or the right choice's text), got 'E'",
        "line 6: difficulty must be 1, 2 or 3, got '5'",
        "line 7: 3 cells; the header has 13",
        "line 8: topic is empty",
    ]
    checked = check_csv_bank((HEADER + ROW_1 + ROW_2.replace("nn-modules", "quantum")).encode(),
                             "our-loop.csv", app.library).checked
    assert len(checked.errors) == 1 and checked.errors[0].startswith("line 3: topic: unknown topic 'quantum'")
    wrong_why = check_csv_bank((HEADER + ROW_1.replace(",,It", ",Nope,It")).encode(), "our-loop.csv", app.library)
    assert wrong_why.checked.errors == ["line 2: why_not_b is set but B is the right answer"]
    header = check_csv_bank(b"prompt,answer,colour\nx,y,z\n", "our-loop.csv", app.library).checked
    assert header.errors == [
        "line 1: missing columns choice_a, choice_b, choice_c, choice_d, explanation, topic, difficulty; "
        "unknown column colour (the columns are prompt, choice_a, choice_b, choice_c, choice_d, answer, "
        "explanation, topic, difficulty, optionally id, why_not_a, why_not_b, why_not_c, why_not_d)"]
    assert check_csv_bank(b"\xff" + GOOD, "our-loop.csv", app.library).checked.errors == [
        "line 1: not UTF-8 text; save the sheet as CSV UTF-8"]
    assert check_csv_bank(HEADER.encode(), "our-loop.csv", app.library).checked.errors == [
        "line 1: the file has no questions under its header"]


async def test_csv_upload_is_all_or_nothing_then_served_and_exported_as_yaml(
    fake: FakeDiscord, start_adapter: StartAdapter
) -> None:
    await start_adapter()
    broken = GOOD + ROW_1.replace(",B,", ",E,").encode()
    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.csv", broken))
    reply = await fake.original_of(token)
    assert reply["flags"] & EPHEMERAL
    assert "our-loop.csv was not stored: fix these and upload it again" in text_of(reply)
    assert "line 5: answer must be A, B, C or D (or the right choice's text), got 'E'" in text_of(reply)
    listed = await fake.original_of(await fake.slash("bank", MEMBER, sub="list"))
    assert "our-loop" not in text_of(listed)  # nothing half-imported

    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.csv", GOOD))
    assert "Bank our-loop stored: 2 questions" in text_of(await fake.original_of(token))
    quiz = await fake.original_of(await fake.slash("quiz", MEMBER, banks="community", count=2))
    assert "When does our team call" in text_of(quiz) or "model.eval()" in text_of(quiz)
    token = await fake.slash("bank", ADMIN, admin=True, sub="export", bank="our-loop")
    await fake.original_of(token)
    [(name, content)] = [f for r in fake.requests if r.files and token in r.path for f in r.files]
    assert name == "our-loop.yaml"
    bank = yaml.safe_load(content)
    assert (bank["bank"], bank["title"]) == ("our-loop", "our loop")
    first, second = bank["questions"]
    assert first["answer"] == "Before backward" and first["choices"][0] == {
        "text": "After step", "why_not": "The next backward would add to stale grads."}
    assert second["prompt"] == "What does\n`model.eval()` switch?" and second["topic"] == "nn-modules"
    # the same sheet again keeps the questions' ids (members' progress stays attached)
    token = await fake.slash("bank", ADMIN, admin=True, sub="upload", file=FileOption("our-loop.csv", GOOD))
    assert "Bank our-loop replaced (version 2): 2 questions" in text_of(await fake.original_of(token))
    token = await fake.slash("bank", ADMIN, admin=True, sub="export", bank="our-loop")
    await fake.original_of(token)
    [(_, again)] = [f for r in fake.requests if r.files and token in r.path for f in r.files]
    assert [q["id"] for q in yaml.safe_load(again)["questions"]] == [first["id"], second["id"]]
