"""/help, the playground's help and the shared reply texts, exactly as members read them
(issue 21: survivors and "no tests" mutants of bot/core/commands/help.py and replies.py)."""

from __future__ import annotations

from bot.core.commands.catalogue import COMMANDS, Catalogue, Command, Option, OptionType
from bot.core.commands.help import (
    help_lines,
    help_message,
    playground_help,
    playground_unknown,
    topics_message,
)
from bot.core.commands.replies import (
    RUN_PREVIEW_CHARS,
    Words,
    admin_only,
    no_such_key,
    notice,
    round_started,
    run_acknowledgement,
    unknown_command,
)
from bot.core.domain.messages import CodeBlock, Message, TextBlock

SERVER = Words(workspace="server", admins="members with Manage Server", renames={"help": "drill-help"})
CONSOLE = Words(prefix="")
SMALL = Catalogue(commands=(
    Command("alpha", "Alpha Thing In {workspace}"),
    Command("beta", "Beta", help="Beta for this {workspace}", options=(
        Option("n", OptionType.INT, "how many", required=True),
        Option("topic", OptionType.TOPIC, "topic"),
        Option("scope", OptionType.CHOICE, "where", choices=COMMANDS.find("leaderboard").options[0].choices),  # type: ignore[union-attr]
    )),
    Command("gamma", "Gamma", subcommands=(Command("one", "One"), Command("two", "Two"))),
    Command("help", "What torchdrill can do"),
))
TOPICS_LINE = ("Topics: `fundamentals`, `tensors`, `autograd`, `nn-modules`, `losses`, `optimization`, "
               "`training-loop`, `data`, `mixed-precision`, `checkpointing`, `gpu-memory`, `distributed`, "
               "`compile-export`, `performance`, `debugging`")


def blocks(message: Message) -> list[str]:
    return [b.code if isinstance(b, CodeBlock) else b.text for b in message.blocks]


# ---- help.py ------------------------------------------------------------------------------------

def test_help_lines_show_usage_help_or_description_and_the_platforms_names() -> None:
    assert help_lines(SERVER, SMALL) == [
        "`/alpha` — alpha thing in server",
        "`/beta n [topic] [channel|workspace|group]` — Beta for this server",
        "`/gamma one|two` — gamma",
        "`/drill-help` — what torchdrill can do",
    ]
    assert help_lines(CONSOLE, SMALL)[0] == "`alpha` — alpha thing in workspace"
    assert help_lines(Words()) == help_lines(Words(), COMMANDS)
    assert help_lines(Words())[0] == (
        "`/quiz [topic] [count] [difficulty] [both|builtin|community]` — "
        "a private quiz; explanations right after each answer")


def test_help_message_is_private_and_lists_commands_then_topics() -> None:
    shown = help_message(SERVER, SMALL)
    assert (shown.title, shown.ephemeral, shown.buttons) == (
        "torchdrill — daily PyTorch interview drills", True, [])
    assert blocks(shown) == ["\n".join(help_lines(SERVER, SMALL)), TOPICS_LINE]
    assert shown.footer == "Answer the daily question with the buttons. /drill-help shows this again."
    assert help_message(Words()) == help_message(Words(), COMMANDS)
    assert help_message(CONSOLE, SMALL).footer == "Answer the daily question with the buttons. help shows this again."


def test_the_playground_help_its_keys_then_the_shared_commands() -> None:
    shown = playground_help(CONSOLE, SMALL)
    assert (shown.title, shown.ephemeral) == ("torchdrill playground", False)
    said = blocks(shown)
    assert said[0].splitlines()[0] == "`today` — today's question of the playground channel"
    assert said[0].splitlines()[-1] == "`help, quit` — this list; leave (Ctrl-D works too)"
    assert said[1:] == ["**Also, as in Discord and Slack:**", "\n".join(help_lines(CONSOLE, SMALL)), TOPICS_LINE]
    assert shown.footer == (
        "Start with `today`, answer with a letter, then `reveal`. "
        "`daily schedule 09:00 Europe/Berlin mon-fri` posts one automatically while this runs.")
    assert playground_help(CONSOLE) == playground_help(CONSOLE, COMMANDS)


def test_an_unknown_playground_word_lists_what_is_known() -> None:
    shown = playground_unknown("dance", SMALL)
    assert (shown.title, shown.ephemeral) == (None, True)
    assert blocks(shown) == [
        "Unknown command `dance`. Commands: `today`, `reveal`, `topics`, `alpha`, `beta`, `gamma`, `help`, `quit`",
        "Type `help` for what each one does."]
    assert playground_unknown("dance") == playground_unknown("dance", COMMANDS)


def test_the_topics_list() -> None:
    shown = topics_message([("autograd", "Autograd"), ("tensors", "Tensors")])
    assert (shown.title, shown.ephemeral, shown.footer) == ("Topics", True, "e.g. quiz autograd 3")
    assert blocks(shown) == ["`autograd` — Autograd\n`tensors` — Tensors"]


# ---- replies.py ---------------------------------------------------------------------------------

def test_words_default_to_a_slack_like_workspace_and_rename_commands() -> None:
    words = Words()
    assert (words.workspace, words.admins, words.prefix, words.renames, words.invite) == (
        "workspace", "workspace admins", "/", {}, "Invite me first, then try again.")
    assert words.command("quiz") == "/quiz"
    assert SERVER.command("help") == "/drill-help" and SERVER.command("stats") == "/stats"
    assert CONSOLE.command("help") == "help"


def test_notices_are_private_text() -> None:
    said = notice("hello")
    assert (said.title, said.ephemeral, said.blocks, said.buttons) == (None, True, [TextBlock("hello")], [])
    assert admin_only(SERVER, "daily now").plain() == "Only members with Manage Server can use /daily now."
    assert admin_only(Words(), "help").ephemeral
    assert unknown_command(SERVER, "dance").plain() == "I don't know /dance — try /drill-help."
    assert unknown_command(CONSOLE, "dance").plain() == "I don't know dance — try help."
    assert unknown_command(Words(), "x").ephemeral
    started = round_started(3, 45)
    assert (started.plain(), started.ephemeral) == (
        "Round started: 3 questions, 45 s each. Answer each one before its time runs out. Good luck!", True)


def test_the_run_acknowledgement_shows_what_will_run_cut_at_its_preview_size() -> None:
    ack = run_acknowledgement("Ada", "print(1)", SERVER)
    assert (ack.title, ack.blocks, ack.ephemeral) == ("/run by Ada", [CodeBlock("print(1)")], False)
    assert run_acknowledgement("Ada", "", Words(renames={"run": "drill-run"})).blocks == [CodeBlock(" ")]
    assert run_acknowledgement("u1", "x", Words(renames={"run": "drill-run"})).title == "/drill-run by u1"
    exact = "a" * RUN_PREVIEW_CHARS
    assert run_acknowledgement("Ada", exact, SERVER).blocks == [CodeBlock(exact)]
    long = "\n".join(f"line_{i} = {i}" for i in range(200))
    [cut] = run_acknowledgement("Ada", long, SERVER).blocks
    assert RUN_PREVIEW_CHARS == 1000
    assert cut == CodeBlock(long[:985].rstrip() + "\n# … (cut here)")  # 985 = 1000 - the note - its newline


def test_a_typed_key_that_is_not_on_screen() -> None:
    assert no_such_key("e", ["a", "b", "next"]).plain() == (
        "There is no `e` on the message on screen; its keys are: a, b, next.")
    assert no_such_key("e", []).plain() == (
        "There is no `e` on the message on screen. Type `today` or `quiz` to get a question.")
    assert no_such_key("e", []).ephemeral and no_such_key("e", ["a"]).ephemeral
