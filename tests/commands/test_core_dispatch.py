"""The CommandDesk as members meet it: who is refused and with which words, how typed text and
Discord-style values are validated, and what each command answers (issue 21: survivors and
"no tests" mutants of bot/core/commands/dispatch.py; also bot/core/domain/tasks.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from bot.app import build_daily, build_services
from bot.core.challenges.desk import challenge_message
from bot.core.commands.catalogue import COMMANDS, Catalogue, Command
from bot.core.commands.dispatch import Caller, CommandDesk, Pending
from bot.core.commands.grammar import Request
from bot.core.commands.help import help_message
from bot.core.commands.replies import Words
from bot.core.domain.actions import Action, Verb
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.domain.tasks import BackgroundTasks
from bot.core.domain.topics import TOPICS
from bot.core.drill.service import Drill
from bot.observability.metrics import REGISTRY
from tests.conftest import RecordingPublisher
from tests.support.board_helpers import answer_daily, player
from tests.support.dispatch import (
    ADA,
    BANK,
    BO,
    HERE,
    SORRY,
    WORDS,
    NoRunner,
    admin,
    member,
    notice_of,
)


class Changes:
    """DailyPosting's on_change: counts the times the scheduler is told to rebuild."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


@pytest.fixture
def changes() -> Changes:
    return Changes()


@pytest.fixture
async def desk(drill: Drill, publisher: RecordingPublisher, changes: Changes) -> AsyncIterator[CommandDesk]:
    built = CommandDesk(build_services(drill, build_daily(drill, publisher, on_change=changes), publisher, NoRunner()))
    yield built
    await built.close()


def interactions(platform: str, kind: str) -> float:
    return REGISTRY.get_sample_value("torchdrill_interaction_seconds_count",
                                     {"platform": platform, "kind": kind}) or 0.0


# ---- refusals: unknown commands, admins only, channels only ------------------------------------

async def test_an_unknown_command_is_named_with_the_platforms_help(desk: CommandDesk, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="bot.core.commands.dispatch")
    typed = await desk.execute_text(member(), "/nosuch", "anything")
    assert notice_of(typed) == "I don't know /nosuch — try /drill-help."
    valued = await desk.execute_values(member(), ("nosuch", "sub"), {"x": 1})
    assert notice_of(valued) == "I don't know /nosuch — try /drill-help."
    assert notice_of(await desk.execute_text(member(), "/Xray", "")) == "I don't know /Xray — try /drill-help."
    console = await desk.execute_text(Caller(ADA, HERE, words=Words(prefix="")), "nosuch", "")
    assert notice_of(console) == "I don't know nosuch — try help."
    warned = [(r.getMessage(), r.command) for r in caplog.records if r.name == "bot.core.commands.dispatch"]
    assert warned == [("unknown command", "/nosuch"), ("unknown command", "nosuch"),
                      ("unknown command", "/Xray"), ("unknown command", "nosuch")]


async def test_a_command_name_is_found_whatever_its_case_and_slash(desk: CommandDesk) -> None:
    shown = await desk.execute_text(member(), "/HELP", "")
    assert shown.title == "torchdrill — daily PyTorch interview drills"


async def test_a_caller_is_a_member_with_the_default_words_unless_told(desk: CommandDesk) -> None:
    plain = Caller(ADA, HERE)
    assert (plain.is_admin, plain.words) == (False, Words())
    refused = await desk.execute_text(plain, "daily", "status")
    assert notice_of(refused) == "Only workspace admins can use /daily status."


async def test_admin_commands_refuse_members_in_the_platforms_words(desk: CommandDesk,
                                                                    publisher: RecordingPublisher) -> None:
    for text, key in (("now", "daily now"), ("schedule 09:00", "daily schedule"), ("pause", "daily pause")):
        refused = await desk.execute_text(member(), "daily", text)
        assert notice_of(refused) == f"Only members with Manage Server can use /{key}."
    # an admin-only subcommand of a command members may use
    assert notice_of(await desk.execute_text(member(), "bank", "export x")) == (
        "Only members with Manage Server can use /drill-bank export.")
    assert notice_of(await desk.execute_values(member(), ("bank", "review"), {})) == (
        "Only members with Manage Server can use /drill-bank review.")
    # the admin check comes first, also in a direct message
    assert notice_of(await desk.execute_text(member(where=None), "daily", "status")) == (
        "Only members with Manage Server can use /daily status.")
    assert publisher.posts == []


async def test_channel_commands_refuse_direct_messages(desk: CommandDesk) -> None:
    dm = member(where=None)
    assert notice_of(await desk.execute_text(dm, "round", "")) == (
        "/round works in a channel, not in a direct message.")
    assert notice_of(await desk.execute_text(dm, "bank", "list")) == (
        "/drill-bank list works in a channel, not in a direct message.")
    assert notice_of(await desk.execute_text(admin(where=None), "daily", "status")) == (
        "/daily status works in a channel, not in a direct message.")
    assert notice_of(await desk.execute_values(dm, ("leaderboard",), {})) == (
        "/leaderboard works in a channel, not in a direct message.")
    # commands that need no channel answer in a direct message
    assert (await desk.execute_text(dm, "stats", "")).title == "Stats for Ada"


async def test_refusal_of_says_why_before_any_form_is_shown(desk: CommandDesk) -> None:
    assert notice_of(desk.refusal_of(member(), ("nosuch",))) == "I don't know /nosuch — try /drill-help."
    assert notice_of(desk.refusal_of(member(), ("bank", "upload"))) == (
        "Only members with Manage Server can use /drill-bank upload.")
    assert desk.refusal_of(admin(), ("bank", "upload")) is None
    assert notice_of(desk.refusal_of(admin(where=None), ("bank", "upload"))) == (
        "/drill-bank upload works in a channel, not in a direct message.")
    assert notice_of(desk.refusal_of(member(where=None), ("suggest",))) == (
        "/suggest works in a channel, not in a direct message.")
    assert desk.refusal_of(member(), ("suggest",)) is None
    assert desk.refusal_of(member(where=None), ("quiz",)) is None
    # catalogued, but served by a code box rather than a handler (run's handler is its cancel)
    assert desk.refusal_of(member(), ("run",)) is None
    assert notice_of(await desk.execute_text(member(), "submit", "")) == "I don't know /submit — try /drill-help."


async def test_execute_refuses_a_request_that_skipped_prepare(desk: CommandDesk,
                                                              publisher: RecordingPublisher) -> None:
    now = Request(COMMANDS.find("daily").sub("now"), ("daily", "now"), {})  # type: ignore[union-attr]
    assert notice_of(await desk.execute(member(), now)) == "Only members with Manage Server can use /daily now."
    assert publisher.posts == []
    assert notice_of(await desk.execute(admin(), now)) == "Posted today's question."
    assert len(publisher.posts) == 1


def test_command_finds_catalogue_entries(desk: CommandDesk) -> None:
    assert desk.catalogue is COMMANDS
    assert desk.command("quiz") is COMMANDS.find("quiz")
    assert desk.command("nosuch") is None


# ---- parsing and validating ----------------------------------------------------------------------

async def test_bad_text_is_answered_with_the_grammars_words(desk: CommandDesk) -> None:
    cases = {
        ("quiz", "count:0"): "count must be between 1 and 20 (got 0)",
        ("quiz", "count:five"): "count must be a whole number (got 'five')",
        ("quiz", "nosuchtopic"): "unknown topic 'nosuchtopic'",
        ("stats", "x"): "/stats takes no arguments (got 'x')",
        ("daily", "bogus"): "use /daily schedule|pause|resume|now|status|challenge|digest|rewards|streak",
        ("daily", ""): "use /daily schedule|pause|resume|now|status|challenge|digest|rewards|streak",
        ("daily", "schedule"): "/daily schedule needs time: HH:MM",
        ("quiz", 'count:"5'): "could not read the arguments (No closing quotation); check the quotes",
    }
    for (name, text), said in cases.items():
        reply = notice_of(await desk.execute_text(admin(), name, text))
        assert reply.startswith(said), (name, text, reply)


async def test_values_are_validated_like_text(desk: CommandDesk) -> None:
    quiz = await desk.execute_values(member(), ("quiz",), {"count": 2, "topic": None, "difficulty": None})
    assert quiz.title == "Quiz 1/2 · Tensors · ★☆☆"
    assert notice_of(await desk.execute_values(member(), ("quiz",), {"count": 99})) == (
        "count must be between 1 and 20 (got 99)")
    assert notice_of(await desk.execute_values(member(), ("quiz",), {"colour": "red"})) == (
        "/quiz has no option 'colour'")
    assert notice_of(await desk.execute_values(admin(), ("daily",), {})) == (
        "use /daily schedule|pause|resume|now|status|challenge|digest|rewards|streak")
    assert notice_of(await desk.execute_values(admin(), ("bank", "upload"), {"file": None})) == (
        "/bank upload needs file: the bank, a .yaml file or a .csv sheet")
    scheduled = await desk.execute_values(admin(), ("daily", "schedule"), {"time": "09:00", "timezone": "Europe/Berlin"})
    assert scheduled.title == "Daily question scheduled"


async def test_pending_done_answers_what_it_was_given() -> None:
    said = Message(title="done")
    assert await Pending.done(said).finish() is said


# ---- /daily now: the claim is durable before the acknowledgement --------------------------------

async def test_daily_now_claims_in_prepare_and_posts_in_finish(desk: CommandDesk,
                                                               publisher: RecordingPublisher) -> None:
    before = interactions("discord", "daily now")
    pending = await desk.prepare_text(admin(), "daily", "now")
    assert publisher.posts == []  # claimed, not yet posted
    assert notice_of(await pending.finish()) == "Posted today's question."
    assert len(publisher.posts) == 1 and (publisher.posts[0][1].title or "").startswith("Daily question")
    assert interactions("discord", "daily now") == before + 1


async def test_daily_now_whose_claim_fails_is_sorry_and_posts_nothing(desk: CommandDesk, publisher, caplog,
                                                                     monkeypatch) -> None:
    async def broken(where: Where) -> object:
        raise RuntimeError("database is gone")

    monkeypatch.setattr(desk.services.daily, "claim_now", broken)
    with caplog.at_level(logging.ERROR, logger="bot.core.commands.dispatch"):
        reply = await desk.execute_text(admin(), "daily", "now")
    assert notice_of(reply) == SORRY
    assert [r.getMessage() for r in caplog.records] == ["/daily now could not record its claim"]
    assert publisher.posts == []


async def test_daily_now_whose_post_fails_is_sorry(desk: CommandDesk, caplog, monkeypatch) -> None:
    async def broken(claim: object) -> Message:
        raise RuntimeError("platform down")

    monkeypatch.setattr(desk.services.daily, "finish_now", broken)
    with caplog.at_level(logging.ERROR, logger="bot.core.commands.dispatch"):
        reply = await desk.execute_text(admin(), "daily", "now")
    assert notice_of(reply) == SORRY
    assert [(r.getMessage(), r.command) for r in caplog.records] == [("command failed", "daily now")]


# ---- errors inside a command ------------------------------------------------------------------

async def test_a_members_mistake_is_said_and_a_bug_is_sorry(desk: CommandDesk, caplog, monkeypatch) -> None:
    assert notice_of(await desk.execute_text(member(), "group", "join Nope")) == (
        "there is no study group called 'Nope'; /group list shows them")
    assert notice_of(await desk.execute_text(member(), "quiz", "banks:community")).startswith(
        "no questions match")

    async def broken(who: Who, where: Where | None) -> Message:
        raise RuntimeError("bug")

    monkeypatch.setattr(desk.services.drill.practice, "stats", broken)
    before = interactions("discord", "stats")
    with caplog.at_level(logging.ERROR, logger="bot.core.commands.dispatch"):
        reply = await desk.execute_text(member(), "stats", "")
    assert notice_of(reply) == SORRY
    assert [(r.getMessage(), r.command) for r in caplog.records] == [("command failed", "stats")]
    assert interactions("discord", "stats") == before + 1  # a failure is timed too


# ---- what each command answers ---------------------------------------------------------------

async def test_quiz_and_review_take_their_options(desk: CommandDesk) -> None:
    one = await desk.execute_text(member(), "quiz", "tensors 1")
    assert (one.title, one.ephemeral, [b.label for b in one.buttons]) == (
        "Quiz 1/1 · Tensors · ★☆☆", True, ["A", "B", "C", "D"])
    hard = await desk.execute_text(member(BO), "quiz", "optimization count:3 difficulty:3")
    assert hard.title == "Quiz 1/3 · Optimizers and schedulers · ★★★"
    # the test library: each topic has one difficulty, so either option alone names the topic
    for topic, difficulty, title in (("tensors", 1, "Tensors · ★☆☆"), ("autograd", 2, "Autograd · ★★☆"),
                                     ("optimization", 3, "Optimizers and schedulers · ★★★")):
        by_topic = await desk.execute_text(member(), "quiz", f"{topic} count:1")
        by_difficulty = await desk.execute_text(member(), "quiz", f"difficulty:{difficulty} count:1")
        assert (by_topic.title, by_difficulty.title) == (f"Quiz 1/1 · {title}", f"Quiz 1/1 · {title}")
    assert notice_of(await desk.execute_text(member(), "quiz", "banks:community")) == (
        "no questions match in this community's banks")
    review = await desk.execute_text(member(), "review", "count:2")
    assert (review.title or "").startswith("Review 1/2 · ")


async def test_a_round_starts_in_the_background_and_plays_to_the_end(desk: CommandDesk,
                                                                     publisher: RecordingPublisher) -> None:
    started = await desk.execute_text(member(), "round", "2 10 tensors")
    assert notice_of(started) == (
        "Round started: 2 questions, 10 s each. Answer each one before its time runs out. Good luck!")
    [task] = desk.tasks.tasks
    assert task.get_name() == "round 1"
    async with asyncio.timeout(10):
        await task
    titles = [m.title for _, m, _ in publisher.posts]
    assert titles[0] is not None and "Tensors" in titles[0]
    assert publisher.posts[-1][1].plain() == "**Round — final standings**\nNo answers yet."
    assert desk.tasks.tasks == set()


async def test_a_second_round_in_the_channel_is_refused(drill: Drill, publisher, changes) -> None:
    desk = CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner()))
    drill.clock.auto = False  # type: ignore[attr-defined]
    await desk.execute_text(member(), "round", "")
    again = await desk.execute_text(member(BO), "round", "")
    assert notice_of(again) == "A round is already running in this channel; wait for it to finish."
    [task] = desk.tasks.tasks
    await desk.close()
    assert task.cancelled() and desk.tasks.tasks == set()


async def test_stats_adds_solved_challenges_per_topic(desk: CommandDesk) -> None:
    plain = await desk.execute_text(member(), "stats", "")
    assert (plain.title, plain.ephemeral) == ("Stats for Ada", True)
    assert plain.plain() == "**Stats for Ada**\nNo answers yet. Try /quiz or answer today's question!"
    tensors = [c for c in BANK.challenges if c.topic == "tensors"][:2]
    autograd = next(c for c in BANK.challenges if c.topic == "autograd")
    for challenge in (*tensors, autograd):
        await desk.services.challenges.record(ADA, challenge, solved=True)
    await desk.services.challenges.record(ADA, next(c for c in BANK.challenges if c.topic == "losses"), solved=False)
    shown = await desk.execute_text(member(), "stats", "")
    assert shown.plain().splitlines()[-1] == (
        f"🧩 Challenges solved: {TOPICS['autograd']} 1, {TOPICS['tensors']} 2")
    assert await desk.stats_of(ADA, None) == shown
    retired = autograd.model_copy(update={"id": "retired-1", "topic": "retired-topic"})  # a topic since dropped
    await desk.services.challenges.record(ADA, retired, solved=True)
    assert (await desk.stats_of(ADA, None)).plain().splitlines()[-1] == (
        f"🧩 Challenges solved: {TOPICS['autograd']} 1, retired-topic 1, {TOPICS['tensors']} 2")


async def test_stats_in_a_channel_shows_its_streak_and_the_button_every_channels(
        desk: CommandDesk, drill: Drill, publisher: RecordingPublisher) -> None:
    await answer_daily(drill, publisher, {1: True}, Where("discord", "g1", "c-2", "random"))
    here = (await desk.execute_text(member(player(1)), "stats", "")).plain().splitlines()
    everywhere = (await desk.press(player(1), Action(Verb.PROGRESS, 1).encode())).reply.plain().splitlines()
    assert here[:2] == ["**Stats for Player 1**", "**1** answered · **100%** correct · streak **0** (best 0)"]
    assert everywhere[:2] == ["**Stats for Player 1**", "**1** answered · **100%** correct · streak **1** (best 1)"]


async def test_leaderboard_passes_scope_period_group_chart_and_the_platforms_word(
        desk: CommandDesk, drill: Drill, publisher: RecordingPublisher) -> None:
    empty = await desk.execute_text(member(), "leaderboard", "")
    assert (empty.title, empty.ephemeral) == ("Leaderboard · this channel · week 10, 2026", False)
    await answer_daily(drill, publisher, {1: True, 2: False}, HERE)
    board = await desk.execute_text(member(), "leaderboard", "workspace all")
    assert board.title == "Leaderboard · this server · all time"
    assert board.attachments == []
    charted = await desk.execute_text(member(), "leaderboard", "workspace month chart:true")
    assert charted.title == "Leaderboard · this server · March 2026"
    assert [a.inline for a in charted.attachments] == [True]
    assert notice_of(await desk.execute_text(member(), "leaderboard", "group Owls")) == (
        "there is no study group called 'Owls'; /group list shows them")


async def test_group_actions_and_stats_needing_a_name(desk: CommandDesk) -> None:
    assert notice_of(await desk.execute_text(member(), "group", "")) == (
        "No study groups yet. Create one with /group create <name>.")
    assert notice_of(await desk.execute_text(member(), "group", "stats")) == (
        "/drill-group stats needs a group name.")
    assert notice_of(await desk.execute_text(member(), "group", "create Owls")) == (
        "Created study group **Owls** and added you to it.")
    stats = await desk.execute_text(member(), "group", "stats Owls")
    assert (stats.title, stats.ephemeral) == ("Study group Owls", True)
    assert notice_of(await desk.execute_values(member(), ("group",), {"action": "stats", "name": "  "})) == (
        "/drill-group stats needs a group name.")


async def test_daily_subcommands_as_an_admin_reads_them(desk: CommandDesk, changes: Changes) -> None:
    assert notice_of(await desk.execute_text(admin(), "daily", "pause")) == (
        "This channel has no daily schedule yet. Set one with /daily schedule.")
    assert notice_of(await desk.execute_text(admin(), "daily", "status")) == (
        "No daily question here yet. Example: /daily schedule time:09:00 timezone:Europe/Berlin weekdays:mon-fri")
    scheduled = await desk.execute_text(
        admin(), "daily", "schedule 08:30 tz:Europe/Berlin days:mon,wed topic:autograd reveal:2 banks:builtin")
    assert scheduled.plain() == (
        "**Daily question scheduled**\n"
        "▶ active · 08:30 Europe/Berlin on mon,wed · Autograd · built-in banks only · reveal after 2 h "
        "or at the next post\nNext question: Mon 09 Mar 08:30 CET")
    elsewhere = admin(where=Where("discord", "g1", "c-2", "random"))  # the default banks: not named
    assert (await desk.execute_text(elsewhere, "daily", "schedule 08:30 tz:UTC days:mon")).plain().splitlines()[1] == (
        "▶ active · 08:30 UTC on mon · all topics · reveal after 12 h or at the next post")
    assert notice_of(await desk.execute_text(admin(), "daily", "pause")) == "Daily questions paused."
    assert notice_of(await desk.execute_text(admin(), "daily", "status")).startswith("⏸ paused · 08:30")
    assert notice_of(await desk.execute_text(admin(), "daily", "resume")) == "Daily questions resumed."
    assert notice_of(await desk.execute_text(admin(), "daily", "status")).startswith("▶ active · 08:30")
    told = changes.count
    assert notice_of(await desk.execute_text(admin(), "daily", "challenge wed 10:00")) == (
        "Weekly challenge: wed 10:00 Europe/Berlin. Next: Wed 11 Mar 10:00 CET.")
    assert notice_of(await desk.execute_text(admin(), "daily", "digest fri 17:00")) == (
        "Weekly digest: fri 17:00 Europe/Berlin. Next: Fri 06 Mar 17:00 CET.")
    assert changes.count == told + 2  # the weekly options tell the scheduler through the daily's hook
    status = notice_of(await desk.execute_text(admin(), "daily", "status"))
    assert "Weekly challenge: wed 10:00 Europe/Berlin" in status and "Weekly digest: fri 17:00 Europe/Berlin" in status


async def test_the_weekly_digest_names_the_hardest_question_from_the_library(
        desk: CommandDesk, drill: Drill, publisher: RecordingPublisher, clock: FakeClock) -> None:
    await desk.execute_text(admin(), "daily", "schedule 09:00 Europe/Berlin")
    post_id, _ = await answer_daily(drill, publisher, {1: False, 2: False, 3: True}, HERE)
    clock.advance(hours=24 * 7)
    posted = notice_of(await desk.execute_text(admin(), "daily", "digest now"))
    assert posted.startswith("Posted")
    digest = publisher.posts[-1][1].plain()
    prompts = [q.prompt for q in drill.library.questions if q.prompt in digest]
    assert len(prompts) == 1, digest


async def test_help_lists_the_desks_own_catalogue(drill: Drill, publisher) -> None:
    small = Catalogue(commands=(Command("quiz", "A private quiz"), Command("help", "What torchdrill can do")))
    desk = CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner()), small)
    shown = await desk.execute_text(member(), "help", "")
    assert shown == help_message(WORDS, small)
    assert shown.plain().splitlines()[1:3] == ["`/quiz` — a private quiz", "`/drill-help` — what torchdrill can do"]
    assert notice_of(await desk.execute_text(member(), "stats", "")) == "I don't know /stats — try /drill-help."


async def test_challenge_actions_use_the_platforms_names(desk: CommandDesk, publisher) -> None:
    assert notice_of(await desk.execute_text(member(), "challenge", "hint")) == (
        "You have no open challenge. Start one with /drill-challenge.")
    board = await desk.execute_text(member(), "challenge", "board")
    assert board.plain() == "**🧩 Challenges board · this server**\nNo solves yet. Be the first: /challenge"
    await desk.services.challenges.record(BO, BANK.challenges[0], solved=True)
    await desk.services.challenges.record(Who("discord", "g2", "u-zed", "Zed"), BANK.challenges[1], solved=True)
    await desk.services.challenges.record(Who("slack", "g1", "u-sam", "Sam"), BANK.challenges[1], solved=True)
    board = await desk.execute_text(member(), "challenge", "board")
    assert board.plain() == ("**🧩 Challenges board · this server**\n"
                             f"1. Bo — {BANK.challenges[0].points} pts · 1 solved")
    mine = await desk.execute_text(member(), "challenge", "mine")
    assert (mine.title, mine.plain().splitlines()[1]) == ("🧩 Your challenges", f"Solved 0 of {len(BANK.challenges)}.")
    assert notice_of(await desk.execute_text(member(), "challenge", "week")) == (
        "This channel has no weekly challenge this week. Admins start one with /daily challenge.")
    assert notice_of(await desk.execute_text(member(), "challenge", "new autograd 1")) == (
        "No challenge matches topic autograd and difficulty 1.")
    opened = await desk.execute_text(member(), "challenge", "new tensors 1")
    current = await desk.services.challenges.current(ADA)
    assert current is not None and (current.topic, current.difficulty) == ("tensors", 1)
    how = "`/drill-submit` to submit your solution; `/drill-challenge hint` for a hint"
    assert opened == challenge_message(current, how)
    hint = await desk.execute_text(member(), "challenge", "hint")
    assert hint.title == f"💡 Hint 1/{len(current.hints)}: {current.title}"


async def test_the_weekly_challenge_opens_from_the_command_and_the_button(desk: CommandDesk) -> None:
    await desk.execute_text(admin(), "daily", "schedule 09:00 Europe/Berlin")
    await desk.execute_text(admin(), "daily", "challenge wed 10:00")  # now is Wed 10:00 CET
    pk = await _channel_pk(desk)
    claim = await desk.services.weekly.fire(pk)
    assert claim is not None
    item = await desk.services.weekly.current_item(HERE)
    assert item is not None
    week = await desk.execute_text(member(), "challenge", "week")
    how = "`/drill-submit` to submit your solution; `/drill-challenge hint` for a hint"
    assert week == challenge_message(BANK.get(item), how)  # type: ignore[arg-type]
    taken = (await desk.press(BO, Action(Verb.TAKE, claim).encode())).reply
    assert taken == challenge_message(BANK.get(item), "`/submit` to submit your solution; `/challenge hint` for a hint")  # type: ignore[arg-type]
    assert (await desk.services.challenges.current(BO)).id == item  # type: ignore[union-attr]


async def _channel_pk(desk: CommandDesk) -> int:
    from bot.storage.identity import channel_row

    async with desk.services.drill.db.write() as session:
        return (await channel_row(session, HERE)).id


# ---- buttons -------------------------------------------------------------------------------------

async def test_press_routes_buttons_and_answers_bad_ones(desk: CommandDesk, drill: Drill) -> None:
    for bad in ("not-a-button", "td:z:1:0", "td:w:x:0", "td:p:1"):
        out = await desk.press(ADA, bad)
        assert notice_of(out.reply) == "That button is not one of mine anymore.", bad
    nothing = (await desk.press(ADA, Action(Verb.TAKE, 987654).encode())).reply
    assert notice_of(nothing) == (
        "This channel has no weekly challenge this week. Admins start one with /daily challenge.")
    await desk.services.challenges.record(ADA, BANK.challenges[0], solved=True)
    progress = (await desk.press(ADA, Action(Verb.PROGRESS, 1).encode())).reply
    assert progress.ephemeral is True
    assert progress.plain() == (await desk.stats_of(ADA, None)).plain()
    assert progress.plain().endswith(f"🧩 Challenges solved: {TOPICS[BANK.challenges[0].topic]} 1")
    quiz = await desk.execute_text(member(), "quiz", "tensors 1")
    picked = await desk.press(ADA, quiz.buttons[0].action_id)
    assert picked.reply.ephemeral and picked.recorded


def test_topic_choices_are_the_librarys_topics(desk: CommandDesk) -> None:
    everything = [(slug, TOPICS[slug]) for slug in ("tensors", "autograd", "optimization")]
    assert sorted(desk.topic_choices()) == sorted(everything)
    assert desk.topic_choices("auto") == [("autograd", "Autograd")]
    assert desk.topic_choices("zzz") == []


# ---- background tasks ----------------------------------------------------------------------------

async def test_background_tasks_keep_log_and_cancel(caplog) -> None:
    tasks = BackgroundTasks()
    release = asyncio.Event()

    async def works() -> str:
        await release.wait()
        return "done"

    async def fails() -> str:
        raise ValueError("boom")

    async def hangs() -> None:
        await asyncio.Event().wait()

    tasks.spawn(works(), "worker")
    [worker] = tasks.tasks
    assert worker.get_name() == "worker"
    tasks.spawn(fails(), "failer")
    [failer] = tasks.tasks - {worker}
    with caplog.at_level(logging.ERROR, logger="bot.core.domain.tasks"):
        async with asyncio.timeout(5):
            assert await failer is None
    assert [(r.getMessage(), r.exc_info is not None) for r in caplog.records] == [
        ("background task failer failed", True)]
    release.set()
    async with asyncio.timeout(5):
        assert await worker == "done"
    await asyncio.sleep(0)  # done callbacks run on the next turn of the loop
    assert tasks.tasks == set()
    tasks.spawn(hangs(), "hanger")
    [hanger] = tasks.tasks
    await asyncio.sleep(0)  # it runs, waiting
    async with asyncio.timeout(5):
        await tasks.cancel_all()
    assert hanger.cancelled()
    await asyncio.sleep(0)
    assert tasks.tasks == set()

