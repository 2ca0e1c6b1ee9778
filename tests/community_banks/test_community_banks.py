"""Community banks through the command desk on both databases: upload with every kind of
problem answered as `line N: …`, nothing stored unless clean; scoping across two communities;
versions (old posts keep working); disable/export; the /suggest → /bank review flow with the
author told; YAML bombs and oversized files; what members read on the served questions."""

from __future__ import annotations

import asyncio
import random
import textwrap

import pytest
import yaml

from bot.app import build_daily, build_drill, build_services
from bot.core.commands.dispatch import Caller, CommandDesk
from bot.core.content.bank import Library
from bot.core.content.community import (
    MAX_QUESTIONS_PER_BANK,
    MAX_UPLOAD_BYTES,
    MAX_YAML_NODES,
    SUGGEST_CHOICES_HELP,
    check_bank_text,
    inert,
)
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Upload
from bot.storage.db import Database
from tests.support.community_banks import (
    ADMIN,
    GOOD,
    HERE,
    SUGGESTION,
    NoRunner,
    Publisher,
    admin,
    bank_yaml,
    mcq,
    upload,
)

MEMBER = Who("test", "ws-a", "u-mia", "mia")
OTHER = Who("test", "ws-b", "u-olaf", "olaf")
THERE = Where("test", "ws-b", "c-b", "general")


async def test_upload_list_show_and_only_that_community_is_served_them(world) -> None:
    desk, publisher = world
    stored = await upload(desk, GOOD)
    assert stored.title == "Bank our-loop stored: 2 questions"
    listed = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain()
    assert "`our-loop` **Our loop** · 2 questions · version 1" in listed
    shown = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "show our-loop")).plain()
    assert "`ours-zero-grad` · Autograd · mcq · When does our team call `zero_grad`?" in shown
    # the other community has none, and its quizzes never include ours
    other = (await desk.execute_text(Caller(OTHER, THERE), "bank", "list")).plain()
    assert "has no community banks yet" in other
    refused = await desk.execute_text(Caller(OTHER, THERE), "quiz", "banks:community")
    assert "no questions match" in refused.plain()
    theirs = await desk.execute_text(Caller(OTHER, THERE), "quiz", "count:20")
    ours = await desk.execute_text(Caller(MEMBER, HERE), "quiz", "banks:community count:2")
    assert "zero_grad" not in theirs.plain() and "model.eval()" not in theirs.plain()
    assert "When does our team call" in ours.plain() or "What does `model.eval()` switch?" in ours.plain()


async def test_a_channel_daily_from_community_banks_only(world, clock) -> None:
    desk, publisher = world
    await upload(desk, GOOD)
    set_up = await desk.execute_text(admin(), "daily", "schedule 09:00 banks:community")
    assert "community banks only" in set_up.plain()
    prompts = set()
    for _ in range(4):  # two questions: a cycle of two, then a new cycle
        await desk.execute_text(admin(), "daily", "now")
        prompts.add(publisher.posts[-1][1].plain().splitlines()[1])
    assert len(publisher.posts) == 4
    assert all("our team" in p or "model.eval" in p for p in prompts), prompts
    # the other community cannot choose our banks: it has none
    refused = await desk.execute_text(admin(OTHER, THERE), "daily", "schedule 09:00 banks:community")
    assert "no questions match mcq in this community's banks" in refused.plain()


async def test_every_problem_is_a_numbered_line_and_nothing_is_stored(world) -> None:
    desk, _ = world
    broken = textwrap.dedent("""\
        bank: broken
        title: Broken
        questions:
          - id: b-one
            kind: mcq
            topic: nosuchtopic
            difficulty: 2
            prompt: Which?
            choices: [A, B]
            answer: A
            explanation: Because.
          - id: b-two
            kind: mcq
            topic: autograd
            difficulty: 2
            prompt: Which one?
            choices: [{text: A}, {text: B}]
            answer: C
            explanation: Because.
          - id: b-three
            kind: mcq
            topic: autograd
            difficulty: 2
            prompt: "Which __init__ runs?"
            choices: [{text: A}, {text: B}]
            answer: A
            explanation: Because.
        """).encode()
    reply = (await upload(desk, broken, "broken.yaml")).plain()
    assert reply.startswith("**broken.yaml was not stored: fix these and upload it again**")
    assert "line 6: topic: unknown topic 'nosuchtopic'" in reply
    assert "line 18: answer: the mcq answer is not among its choices" in reply
    assert "line 24: b-three: prompt: __init__ outside backticks (Discord underlines it)" in reply
    assert "has no why_not" not in reply  # a warning for an uploaded bank: not a reason to refuse
    listed = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain()
    assert "has no community banks yet" in listed
    syntax = (await upload(desk, b"bank: x\ntitle: [unclosed\n", "x.yaml")).plain()
    assert "line 3: invalid YAML" in syntax


async def test_yaml_bombs_tags_and_sizes_are_refused_before_building_anything(world, library) -> None:
    laughs = "a: &a [" + ",".join(["x"] * 10) + "]\n"
    for level in "bcdefgh":
        prev = chr(ord(level) - 1)
        laughs += f"{level}: &{level} [" + ",".join([f"*{prev}"] * 10) + "]\n"
    checked = check_bank_text(laughs, "bomb.yaml", library)
    assert not checked.ok
    assert checked.errors[0].endswith(f"expands to more than {MAX_YAML_NODES:,} values (anchors and aliases "
                                      "multiply); write the questions out")
    deep = "bank: " + "[" * 40 + "]" * 40
    assert "nested deeper than 12 levels" in check_bank_text(deep, "d.yaml", library).errors[0]
    abyss = "bank: " + "[" * 50_000 + "]" * 50_000  # deeper than Python's own recursion limit
    assert check_bank_text(abyss, "a.yaml", library).errors == ["line 1: nested deeper than 12 levels"]
    tagged = check_bank_text("bank: !!python/object/apply:os.system ['true']\n", "t.yaml", library)
    assert tagged.errors and "invalid YAML" in tagged.errors[0]
    big = check_bank_text(b"#" * (MAX_UPLOAD_BYTES + 1), "big.yaml", library)
    assert big.errors == [f"line 1: The file is {MAX_UPLOAD_BYTES + 1:,} bytes; an upload may be at most "
                          f"{MAX_UPLOAD_BYTES:,}."]
    many = bank_yaml("many", [mcq(f"q-{i}", f"Question {i}?", "Yes", ["No", "Maybe", "Later"])
                              for i in range(MAX_QUESTIONS_PER_BANK + 1)])
    assert f"a community bank holds at most {MAX_QUESTIONS_PER_BANK}" in check_bank_text(
        many, "many.yaml", library).errors[0]
    assert "not UTF-8" in check_bank_text(b"bank: \xff\xfe", "u.yaml", library).errors[0]


async def test_reupload_is_a_new_version_and_old_posts_keep_working(world) -> None:
    desk, publisher = world
    await upload(desk, GOOD)
    await desk.execute_text(admin(), "daily", "schedule 09:00 banks:community")
    await desk.execute_text(admin(), "daily", "now")
    first = publisher.posts[-1][1]
    key_of_first = next(b for b in first.buttons)
    replacement = bank_yaml("our-loop", [
        mcq("ours-amp", "Which context enables autocast?", "`torch.amp.autocast`",
            ["`torch.no_grad`", "`torch.inference_mode`", "`torch.jit.script`"], topic="mixed-precision"),
    ], title="Our loop v2")
    replaced = await upload(desk, replacement)
    assert replaced.title == "Bank our-loop replaced (version 2): 1 question"
    # the old post's question was dropped from the bank, yet a click on it still counts
    outcome = await desk.press(MEMBER, key_of_first.action_id)
    assert "removed" not in outcome.reply.plain()
    assert outcome.recorded
    shown = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "show our-loop")).plain()
    assert "Version 2 · served · 1 question" in shown and "ours-amp" in shown and "ours-eval" not in shown


async def test_disable_enable_export(world) -> None:
    desk, _ = world
    await upload(desk, GOOD)
    member_try = await desk.execute_text(Caller(MEMBER, HERE), "bank", "disable our-loop")
    assert member_try.plain() == "Only workspace admins can use /bank disable."
    off = await desk.execute_text(admin(), "bank", "disable our-loop")
    assert "Bank our-loop is disabled" in off.plain()
    refused = await desk.execute_text(Caller(MEMBER, HERE), "quiz", "banks:community")
    assert "no questions match" in refused.plain()
    await desk.execute_text(admin(), "bank", "enable our-loop")
    assert "When does our team" in (await desk.execute_text(Caller(MEMBER, HERE), "quiz",
                                                              "banks:community count:2")).plain()
    exported = await desk.execute_text(admin(), "bank", "export our-loop")
    assert [a.filename for a in exported.attachments] == ["our-loop.yaml"]
    assert exported.attachments[0].content == GOOD
    missing = await desk.execute_text(admin(), "bank", "export nope")
    assert missing.plain() == "There is no community bank 'nope' here; /bank list shows them."
    # another community cannot reach our bank by its id
    assert "There is no community bank" in (await desk.execute_text(admin(OTHER, THERE), "bank",
                                                                     "export our-loop")).plain()


async def test_suggest_review_approve_and_reject_tell_the_author(world) -> None:
    desk, publisher = world
    missing_why = await desk.execute_text(Caller(MEMBER, HERE), "suggest",
                                          'prompt:"Which?" choices:"*A; B; C" explanation:"A." topic:autograd')
    assert "Your suggestion needs a few fixes (nothing was queued)" in missing_why.plain()
    assert "distractor 'B' has no why it is wrong (after |)" in missing_why.plain()
    queued = await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION)
    assert queued.plain().startswith("Thanks! Suggestion #1 is waiting")
    await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION.replace("accumulate into", "fill"))
    review = (await desk.execute_text(admin(), "bank", "review")).plain()
    assert "Suggestion #1 by mia (2 waiting)" in review
    assert "✅ A. `.grad` of each leaf" in review and "▫️ B. `.data` of each leaf — _backward never writes data_" \
        in review
    assert "Only workspace admins" in (await desk.execute_text(Caller(MEMBER, HERE), "bank", "review")).plain()
    assert "no suggestion #1 here" in (await desk.execute_text(admin(OTHER, THERE), "bank",
                                                               "review approve id:1")).plain()
    approved = await desk.execute_text(admin(), "bank", "review approve id:1")
    assert approved.plain() == "Suggestion #1 approved into bank suggestions as `suggestion-1`."
    assert publisher.told[-1][0] == MEMBER  # the author, in their own workspace
    assert publisher.told[-1][1].plain() == ("Your suggestion #1 was approved and added to the bank "
                                             "suggestions. Thank you!")
    again = await desk.execute_text(admin(), "bank", "review approve id:1")
    assert again.plain() == "Suggestion #1 was already approved."
    no_reason = await desk.execute_text(admin(), "bank", "review reject id:2")
    assert "Say why with reason:" in no_reason.plain()
    rejected = await desk.execute_text(admin(), "bank", 'review reject id:2 reason:"a near duplicate of #1"')
    assert rejected.plain() == "Suggestion #2 rejected; the author is told why."
    assert publisher.told[-1][1].plain() == "Your suggestion #2 was not accepted: a near duplicate of #1"
    listed = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain()
    assert "`suggestions` **Member suggestions** · 1 question · version 1" in listed
    quiz = await desk.execute_text(Caller(MEMBER, HERE), "quiz", "banks:community count:1")
    assert "What does `loss.backward()` accumulate into?" in quiz.plain()


async def test_import_in_chat_returns_a_draft_or_the_line_that_stops_it(world) -> None:
    desk, _ = world
    raw = (b"Question 1\n\nWhat does zero_grad do?\n\nAccepted Answer\n\nClears the gradients\n\n"
           b"Answer\n\nSteps the optimizer\n")
    reply = await desk.execute_values(admin(), ("bank", "import"),
                                      {"format": "mcq", "file": Upload("team.txt", raw)})
    assert reply.title == "Draft bank from team.txt"
    assert [a.filename for a in reply.attachments] == ["team.draft.yaml"]
    draft = reply.attachments[0].content.decode()
    assert "What does zero_grad do?" in draft and "Clears the gradients" in draft
    bad = await desk.execute_values(admin(), ("bank", "import"),
                                    {"format": "mcq", "file": Upload("notes.txt", b"just some text\n")})
    assert bad.plain() == "line 1: no 'Question N' heading found (is this the mcq format?)"
    unknown = await desk.execute_text(admin(), "bank", "import format:pdf")
    assert "unknown format 'pdf'; choose one of: mcq, numbered, qa, longform" in unknown.plain()


def test_community_text_cannot_ping_mention_or_hide_links() -> None:
    assert inert("hi @everyone and @here") == "hi @\u200beveryone and @\u200bhere"
    assert inert("<!channel> <@U123> <#C1> <@&42>") == "<\u200b!channel> <\u200b@U123> <\u200b#C1> <\u200b@&42>"
    assert inert("[docs](https://evil.example)") == "docs (https://evil.example)"


async def test_a_second_replica_serves_an_upload_it_did_not_take(db: Database, clock: FakeClock) -> None:
    """Two processes share the database but not their memory: the one that did not take the
    upload offers the bank at its next selection and counts clicks on the other's posts."""
    from tests.conftest import make_library

    def replica() -> tuple[CommandDesk, Publisher]:
        publisher = Publisher()
        drill = build_drill(db, make_library(), clock, rng=random.Random(5))
        return CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner())), publisher

    (first, first_pub), (second, _) = replica(), replica()
    await second.execute_text(Caller(MEMBER, HERE), "quiz", "count:1")  # its shelf is loaded, empty
    await upload(first, GOOD)
    quiz = await second.execute_text(Caller(MEMBER, HERE), "quiz", "banks:community count:2")
    assert "When does our team call" in quiz.plain() or "model.eval()" in quiz.plain()
    await first.execute_text(admin(), "daily", "schedule 09:00 banks:community")
    await first.execute_text(admin(), "daily", "now")
    post = first_pub.posts[-1][1]
    fresh = replica()[0]  # a process started after the post: nothing loaded yet
    outcome = await fresh.press(MEMBER, post.buttons[0].action_id)
    assert outcome.recorded and "removed" not in outcome.reply.plain()


def test_duplicate_ids_balance_and_reference_rules_of_content_check_apply(library: Library) -> None:
    twice = bank_yaml("dup", [mcq("same-id", "First?", "Yes", ["No", "Maybe", "Later"]),
                              mcq("same-id", "Second?", "Yes", ["No", "Maybe", "Later"])])
    assert any("duplicate id 'same-id' (first at line 4)" in e for e in check_bank_text(twice, "d.yaml", library).errors)
    # eight MCQs whose key is always the longest choice: a tell the balance lint refuses
    longest = bank_yaml("tells", [mcq(f"tell-{i}", f"Which one {i}?", f"The much longer right answer {i}",
                                      ["Short", "Tiny", "Brief"]) for i in range(8)])
    errors = check_bank_text(longest, "t.yaml", library).errors
    assert any("the key is strictly the longest choice in 8 of 8 MCQs (100%; at most 30%)" in e for e in errors)
    dangling = bank_yaml("refs", [{**mcq("ref-one", "Which?", "Yes", ["No", "Maybe", "Later"]),
                                   "related": ["nowhere-to-be-found"]}])
    assert any("'nowhere-to-be-found' is neither a question of this bank nor a built-in one" in e
               for e in check_bank_text(dangling, "r.yaml", library).errors)


async def test_the_community_limits_the_readme_names(world, library: Library) -> None:
    from bot.core.content.community import (
        MAX_BANKS_PER_COMMUNITY,
        MAX_FIELD_CHARS,
        MAX_PENDING_PER_MEMBER,
        MAX_PENDING_SUGGESTIONS,
    )

    desk, _ = world
    for i in range(MAX_BANKS_PER_COMMUNITY):
        stored = await upload(desk, bank_yaml(f"bank-{i}", [mcq(f"b{i}-q", f"Question {i}?", "Yes",
                                                                ["No", "Maybe", "Later"])]))
        assert stored.title == "Bank bank-" + str(i) + " stored: 1 question"
    refused = await upload(desk, bank_yaml("one-more", [mcq("om-q", "One more?", "Yes", ["No", "Maybe", "Later"])]))
    assert refused.plain() == (f"This community already has {MAX_BANKS_PER_COMMUNITY} banks; "
                               "disable or replace one first.")
    long_text = {**mcq("long-q", "Long?", "Yes", ["No", "Maybe", "Later"]), "explanation": "x" * (MAX_FIELD_CHARS + 1)}
    errors = check_bank_text(bank_yaml("long", [long_text]), "l.yaml", library).errors
    assert any(f"explanation is {MAX_FIELD_CHARS + 1:,} characters; at most {MAX_FIELD_CHARS:,}" in e for e in errors)

    def suggestion(n: int) -> str:
        return SUGGESTION.replace("accumulate into", f"accumulate into ({n})")

    members = [Who("test", "ws-a", f"u-{m}", f"member {m}") for m in range(MAX_PENDING_SUGGESTIONS // MAX_PENDING_PER_MEMBER)]
    for n in range(MAX_PENDING_PER_MEMBER):
        assert "is waiting" in (await desk.execute_text(Caller(members[0], HERE), "suggest", suggestion(n))).plain()
    sixth = await desk.execute_text(Caller(members[0], HERE), "suggest", suggestion(99))
    assert sixth.plain() == (f"You have {MAX_PENDING_PER_MEMBER} suggestions waiting for review; "
                             "wait until admins have looked at them.")
    for member in members[1:]:
        for n in range(MAX_PENDING_PER_MEMBER):
            assert "is waiting" in (await desk.execute_text(Caller(member, HERE), "suggest", suggestion(n))).plain()
    full = await desk.execute_text(Caller(MEMBER, HERE), "suggest", suggestion(100))
    assert full.plain() == "The review queue is full; try again after admins have reviewed it."


async def test_review_offers_the_members_own_community_questions_only(world) -> None:
    desk, _ = world
    await upload(desk, GOOD)
    ours = (await desk.execute_text(Caller(MEMBER, HERE), "review", "50")).plain()
    theirs = (await desk.execute_text(Caller(OTHER, THERE), "review", "50")).plain()
    assert "Review 1/17 ·" in ours and "Review 1/15 ·" in theirs  # 15 built-in, and our 2


async def test_two_admins_uploading_the_same_new_bank_at_once_both_succeed(
    db: Database, library: Library, clock: FakeClock
) -> None:
    """Two replicas (each its own engine) can both find no bank and both insert it; the loser of
    the unique constraint stores its upload as the next version, not "something went wrong"."""
    second_db = Database(db.url)

    def desk_on(database: Database) -> CommandDesk:
        drill = build_drill(database, library, clock, rng=random.Random(4))
        return CommandDesk(build_services(drill, build_daily(drill, Publisher()), Publisher(), NoRunner()))

    other = Who(ADMIN.platform, ADMIN.workspace, "u-admin-2", "admin two")
    one, two = desk_on(db), desk_on(second_db)
    await one.execute_text(Caller(MEMBER, HERE), "bank", "list")  # both know the workspace
    try:
        replies = await asyncio.gather(upload(one, GOOD), upload(two, GOOD, who=other))
    finally:
        await second_db.dispose()
    assert sorted(m.title or "" for m in replies) == [
        "Bank our-loop replaced (version 2): 2 questions", "Bank our-loop stored: 2 questions"]
    listed = (await one.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain()
    assert "`our-loop` **Our loop** · 2 questions · version 2" in listed


async def test_approving_into_an_uploaded_bank_keeps_its_comments(world) -> None:
    """The uploader's YAML is theirs: an approved suggestion is added to it, comments kept."""
    desk, _ = world
    commented = b"# Our team's loop questions; ask Ana before editing.\n" + GOOD.replace(
        b"questions:\n", b"questions:\n# the first two came from the March retro\n", 1)
    await upload(desk, commented)
    await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION)
    approved = await desk.execute_text(admin(), "bank", "review approve id:1 bank:our-loop")
    assert approved.plain() == "Suggestion #1 approved into bank our-loop as `suggestion-1`."
    exported = (await desk.execute_text(admin(), "bank", "export our-loop")).attachments[0].content
    assert exported.startswith(commented)  # every line as uploaded, then the new question
    assert b"# the first two came from the March retro" in exported and b"id: suggestion-1" in exported
    listed = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain()
    assert "`our-loop` **Our loop** · 3 questions · version 2" in listed


def test_a_question_is_appended_as_text_only_where_that_reads_back_the_same() -> None:
    from bot.core.content.community import with_question_appended

    entry = {"id": "new", "kind": "mcq", "answer": "A"}
    last = "bank: b  # ours\nquestions:\n  - id: old  # keep me\n    kind: mcq\n"
    appended = with_question_appended(last, entry)
    assert appended.startswith(last) and yaml.safe_load(appended)["questions"][-1] == entry
    not_last = "questions:\n- id: old\ntitle: T  # the title comes last here\n"
    redone = with_question_appended(not_last, entry)
    assert yaml.safe_load(redone) == {"questions": [{"id": "old"}, entry], "title": "T"}


async def test_an_approved_suggestion_whose_id_is_taken_gets_its_own(world) -> None:
    """The bank already holds a question with the suggestion's id: the new one is kept apart."""
    desk, _ = world
    taken = bank_yaml("our-loop", [mcq("suggestion-1", "Already here?", "Yes", ["No", "Maybe", "Later"])])
    await upload(desk, taken)
    await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION)
    approved = await desk.execute_text(admin(), "bank", "review approve id:1 bank:our-loop")
    assert approved.plain() == "Suggestion #1 approved into bank our-loop as `suggestion-1-1`."
    exported = yaml.safe_load((await desk.execute_text(admin(), "bank", "export our-loop")).attachments[0].content)
    assert [q["id"] for q in exported["questions"]] == ["suggestion-1", "suggestion-1-1"]
    assert exported["questions"][1]["prompt"] == "What does `loss.backward()` accumulate into?"


async def test_approving_into_a_new_bank_at_the_bank_limit_is_refused_and_kept(world) -> None:
    from bot.core.content.community import MAX_BANKS_PER_COMMUNITY

    desk, publisher = world
    for i in range(MAX_BANKS_PER_COMMUNITY):
        await upload(desk, bank_yaml(f"bank-{i}", [mcq(f"b{i}-q", f"Question {i}?", "Yes", ["No", "Maybe", "Later"])]))
    await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION)
    refused = await desk.execute_text(admin(), "bank", "review approve id:1")
    assert refused.plain() == (f"This community already has {MAX_BANKS_PER_COMMUNITY} banks; "
                               "approve into an existing one with bank:ID.")
    assert publisher.told == []
    kept = await desk.execute_text(admin(), "bank", "review approve id:1 bank:bank-0")
    assert kept.plain() == "Suggestion #1 approved into bank bank-0 as `suggestion-1`."


async def test_list_show_and_review_read_exactly_so(world) -> None:
    """What admins and members read from /bank list, /bank show and /bank review, word for word."""
    desk, _ = world
    assert (await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")).plain() == (
        "This workspace has no community banks yet. Admins add one with /bank upload (a YAML file, "
        "same format as the built-in banks).")
    many = [mcq(f"q{i:02d}", f"Question {i}?", "Yes", ["No", "Maybe", "Later"], topic="optimization") for i in range(22)]
    stored = await upload(desk, bank_yaml("alpha", many, title="Many"), "alpha.yaml")
    assert stored.title == "Bank alpha stored: 22 questions", stored.plain()
    await upload(desk, bank_yaml("alpha", many[1:], title="Many"), "alpha.yaml")  # q00 retired
    with_code = {**mcq("run-me", "What prints?", "2", ["1", "3", "4"]),
                 "code": [{"title": "Try it", "code": "print(1 + 1)\n"}]}
    await upload(desk, bank_yaml("zeta", [with_code, mcq("z2", "Z?", "Yes", ["No", "Maybe", "Later"])], title="Zed"),
                 "zeta.yaml")
    await desk.execute_text(admin(), "bank", "disable zeta")
    listed = await desk.execute_text(Caller(MEMBER, HERE), "bank", "list")
    assert listed.ephemeral and listed.plain() == (
        "**Community banks of this workspace**\n"
        "`alpha` **Many** · 21 questions · version 2\n"
        "`zeta` **Zed** · 2 questions · version 1 · ⏸ disabled")
    shown = await desk.execute_text(Caller(MEMBER, HERE), "bank", "show alpha")
    lines = shown.plain().splitlines()
    assert shown.ephemeral and lines[:3] == ["**alpha: Many**", "Version 2 · served · 21 questions",
                                             "`q01` · Optimizers and schedulers · mcq · Question 1?"]
    assert len(lines) == 2 + 20 + 1 and lines[-2] == "`q20` · Optimizers and schedulers · mcq · Question 20?"
    assert lines[-1] == "… and 1 more (/bank export gives the whole file)"
    zeta = (await desk.execute_text(Caller(MEMBER, HERE), "bank", "show zeta")).plain().splitlines()
    assert zeta == ["**zeta: Zed**", "Version 1 · disabled · 2 questions",
                    "`run-me` · Autograd · mcq · What prints?", "`z2` · Autograd · mcq · Z?",
                    "1 snippet was not run at upload; paste one into /run to check it in the sandbox."]
    assert (await desk.execute_text(admin(), "bank", "review")).plain() == "No suggestions are waiting for review."
    await desk.execute_text(Caller(OTHER, THERE), "suggest", SUGGESTION)  # another community's
    assert (await desk.execute_text(admin(), "bank", "review")).plain() == "No suggestions are waiting for review."
    await desk.execute_text(Caller(MEMBER, HERE), "suggest", SUGGESTION)
    await desk.execute_text(Caller(ADMIN, HERE), "suggest", SUGGESTION.replace("accumulate into", "fill"))
    review = await desk.execute_text(admin(), "bank", "review")
    assert review.ephemeral and review.title == "Suggestion #2 by mia (2 waiting)"


def test_a_served_community_question_is_inert_everywhere_and_keeps_its_bank_references() -> None:
    from bot.core.content.bank import Kind, Question
    from bot.core.content.community import inert, served_question

    q = Question(
        id="q-one", bank="upload", kind=Kind.MCQ, topic="autograd", difficulty=1,
        prompt="@everyone which one?", choices=["<@U1> this", "that [one](https://evil.example)", "other", "none"],
        answer="<@U1> this", why_not={"that [one](https://evil.example)": "@here it is not", "other": "no",
                                      "none": "no"},
        explanation="See [the docs](https://evil.example).", related=["q-two", "builtin-q"], twin_of="q-two",
    )
    served = served_question(q, 7, "ours", {"q-one", "q-two"})
    assert (served.id, served.bank) == ("c7.q-one", "community:ours")
    assert served.prompt == inert(q.prompt) == "@\u200beveryone which one?"
    assert served.choices == [inert(c) for c in q.choices] and served.answer == "<\u200b@U1> this"
    assert served.why_not == {"that one (https://evil.example)": "@\u200bhere it is not", "other": "no", "none": "no"}
    assert served.explanation == "See the docs (https://evil.example)."
    assert (served.related, served.twin_of) == (["c7.q-two", "builtin-q"], "c7.q-two")
    assert served_question(q.model_copy(update={"twin_of": None}), 7, "ours", {"q-one"}).twin_of is None


async def test_an_uploaded_ping_reaches_members_inert(world) -> None:
    desk, _ = world
    pinging = bank_yaml("pings", [mcq("ping-q", "@everyone: when does `zero_grad` run?", "Before backward",
                                      ["After step", "Never", "Twice"])])
    assert (await upload(desk, pinging, "pings.yaml")).title == "Bank pings stored: 1 question"
    quiz = await desk.execute_text(Caller(MEMBER, HERE), "quiz", "banks:community count:1")
    assert "@\u200beveryone: when does `zero_grad` run?" in quiz.plain() and "@everyone" not in quiz.plain()


def test_each_too_long_field_is_named_on_its_own_line(library: Library) -> None:
    from bot.core.content.community import MAX_FIELD_CHARS

    over, at = "p" * (MAX_FIELD_CHARS + 1), "q" * MAX_FIELD_CHARS
    long_q = {**mcq("long-q", over, "A" * (MAX_FIELD_CHARS + 1), ["B" * (MAX_FIELD_CHARS + 1), at, "D"]),
              "code": [{"code": "x = 1\n"}, {"code": "c" * (MAX_FIELD_CHARS + 1)}],
              "related": ["long-q2", "no-such-question"], "twin_of": "nowhere"}
    ok_q = {**mcq("long-q2", "Fine?", "Yes", ["No", "Maybe", "Later"]), "explanation": at}  # at the limit: fine
    text = bank_yaml("long", [long_q, ok_q])
    lines = text.decode().splitlines()

    def line_of(fragment: str, after: int = 0) -> int:
        return next(n for n, line in enumerate(lines, 1) if n > after and fragment in line)

    q_line = line_of("id: long-q")
    errors = check_bank_text(text, "long.yaml", library).errors
    n = f"{MAX_FIELD_CHARS + 1:,} characters; at most {MAX_FIELD_CHARS:,}"
    assert set(errors) >= {
        f"line {line_of('prompt: ppp')}: long-q: prompt is {n}",
        f"line {line_of('answer: AAA')}: long-q: answer is {n}",
        f"line {line_of('text: BBB')}: long-q: choices is {n}",
        f"line {line_of('code: ccc')}: long-q: code is {n}",
        f"line {line_of('related:', q_line)}: long-q: 'no-such-question' is neither a question of this bank "
        "nor a built-in one",
        f"line {line_of('twin_of:', q_line)}: long-q: 'nowhere' is neither a question of this bank nor a built-in one",
    }, errors
    assert not any(e.startswith(f"line {line_of('id: long-q2')}") or "long-q2: explanation" in e for e in errors)


@pytest.mark.parametrize(("choices", "problems"), [
    ("A | no; B | no", ["choices: start the right choice with *"]),
    ("*A; *B | no", ["choices: mark only one choice with *"]),
    ("*A", [f"choices: at least two ({SUGGEST_CHOICES_HELP})"]),
    ("", ["choices: start the right choice with *", f"choices: at least two ({SUGGEST_CHOICES_HELP})"]),
])
def test_suggestion_choices_problems_name_the_form_field(library: Library, choices: str, problems: list[str]) -> None:
    from bot.core.content.community import check_suggestion

    checked = check_suggestion(prompt="Which?", choices=choices, explanation="Because.", topic="autograd",
                               difficulty=1, slug="suggestion-1", builtin=library)
    assert (checked.question, checked.errors) == (None, problems)


def test_a_suggestion_on_lines_with_why_nots_becomes_the_question_asked(library: Library) -> None:
    from bot.core.content.community import check_suggestion

    checked = check_suggestion(
        prompt="What does `loss.backward()` fill?", choices="*`.grad` of leaves\n`.data` | never data\n"
        "The optimizer | reads grads later\nThe loss | holds no grads\n", explanation="Leaves get `.grad`.",
        topic="Autograd", difficulty=2, slug="suggestion-9", builtin=library)
    assert checked.errors == [] and checked.question is not None
    q = checked.question
    assert (q.id, q.topic, q.difficulty, q.answer) == ("suggestion-9", "autograd", 2, "`.grad` of leaves")
    assert q.choices == ["`.grad` of leaves", "`.data`", "The optimizer", "The loss"]
    assert q.why_not == {"`.data`": "never data", "The optimizer": "reads grads later", "The loss": "holds no grads"}
    broken = check_suggestion(prompt="Which?", choices="*A; A | dup; C | c; D | d", explanation="x",
                              topic="autograd", difficulty=1, slug="suggestion-2", builtin=library)
    assert (broken.question, broken.errors) == (None, ["the mcq has duplicate choices"])  # no "line 5: id: "
    no_why = check_suggestion(prompt="Which?", choices="*A; B | b; C | c; D", explanation="x",
                              topic="autograd", difficulty=1, slug="suggestion-2", builtin=library)
    assert no_why.errors == ["distractor 'D' has no why it is wrong (after |)"]


def test_a_stored_community_question_reads_back_with_its_bank_references() -> None:
    from bot.core.content.bank import Kind, Question
    from bot.core.content.community import dump_question, load_question, served_question

    q = Question(id="q-one", bank="upload", kind=Kind.MCQ, topic="autograd", difficulty=1, prompt="P?",
                 choices=["a", "b", "c", "d"], answer="a", why_not={"b": "no", "c": "no", "d": "no"},
                 explanation="E.", related=["q-two", "builtin-q"], twin_of="q-two")
    served = served_question(q, 12, "ours", {"q-one", "q-two"})
    back = load_question(dump_question(served))
    assert back == served and (back.id, back.related, back.twin_of) == ("c12.q-one", ["c12.q-two", "builtin-q"],
                                                                        "c12.q-two")
