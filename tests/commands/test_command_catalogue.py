"""The catalogue is the one source: grammar, Discord tree, Slack manifest, console and help."""

from __future__ import annotations

import pytest

from bot.adapters.console.play import WORDS as CONSOLE_WORDS
from bot.adapters.discord.commands import all_commands
from bot.adapters.slack.handlers import WORDS as SLACK_WORDS
from bot.adapters.slack.listeners import served_commands
from bot.adapters.slack.manifest import manifest
from bot.core.commands.catalogue import COMMANDS, Command, OptionType
from bot.core.commands.grammar import OptionError, parse
from bot.core.commands.help import help_lines
from tests.support.catalogue_cases import CASES


def cmd(name: str) -> Command:
    found = COMMANDS.find(name)
    assert found is not None
    return found


def values(name: str, text: str) -> dict[str, object]:
    return parse(cmd(name), text).values


def test_positional_and_named_forms_give_the_same_request() -> None:
    assert values("quiz", "") == {"topic": None, "count": 5, "difficulty": None, "banks": None}
    assert values("quiz", "autograd 3 2") == {"topic": "autograd", "count": 3, "difficulty": 2, "banks": None}
    assert values("quiz", "3 Autograd") == values("quiz", "count:3 topic=autograd")
    assert values("round", "3 20 autograd") == {"count": 3, "seconds": 20, "topic": "autograd"}
    assert values("review", "") == {"count": 10, "action": None}
    assert values("review", "export") == values("review", "action:export") == {"count": 10, "action": "export"}


def test_free_text_takes_the_rest_and_a_trailing_choice_still_counts() -> None:
    assert values("leaderboard", "group month Night Owls") == {
        "scope": "group", "period": "month", "group": "Night Owls", "chart": False}
    assert values("leaderboard", "group Night Owls month") == {
        "scope": "group", "period": "month", "group": "Night Owls", "chart": False}
    assert values("leaderboard", 'group:"Night Owls" all') == {
        "scope": None, "period": "all", "group": "Night Owls", "chart": False}
    assert values("group", "create  Night Owls ") == {"action": "create", "name": "Night Owls"}
    assert values("group", "") == {"action": "list", "name": None}


def test_handlers_read_values_as_the_catalogue_types_them() -> None:
    request = parse(cmd("quiz"), "autograd 3")
    assert (request.get("topic", str), request.need("count", int)) == ("autograd", 3)
    assert request.get("difficulty", int) is None
    with pytest.raises(TypeError, match="option count holds int, not str"):
        request.get("count", str)
    with pytest.raises(TypeError, match="option difficulty has neither a value nor a default"):
        request.need("difficulty", int)


def test_a_flag_is_given_by_name_or_alone() -> None:
    assert values("leaderboard", "all chart:true")["chart"] is True
    assert values("leaderboard", "chart:no")["chart"] is False
    assert values("leaderboard", "chart") == {"scope": None, "period": None, "group": None, "chart": True}
    assert values("leaderboard", "workspace month chart") == {
        "scope": "workspace", "period": "month", "group": None, "chart": True}
    assert values("leaderboard", "group Night Owls month chart") == {
        "scope": "group", "period": "month", "group": "Night Owls", "chart": True}
    assert values("leaderboard", "group:chart")["group"] == "chart"  # a group called "chart", by name


def test_a_choice_word_is_not_taken_for_an_unknown_topic() -> None:
    assert values("quiz", "community") == {"topic": None, "count": 5, "difficulty": None, "banks": "community"}
    assert values("quiz", "autograd 3 builtin") == {
        "topic": "autograd", "count": 3, "difficulty": None, "banks": "builtin"}
    with pytest.raises(OptionError) as typo:
        values("quiz", "autogradd")
    assert str(typo.value).startswith("unknown topic 'autogradd'")


def test_a_word_no_action_accepts_is_an_unknown_action_not_free_text() -> None:
    with pytest.raises(OptionError) as group:
        values("group", "frobnicate x")
    assert str(group.value) == "unknown action 'frobnicate'; choose one of: create, join, leave, list, stats"
    with pytest.raises(OptionError) as review:
        parse(cmd("bank"), "review frobnicate")
    assert str(review.value) == ("unknown action 'frobnicate'; choose one of: next, approve, reject, "
                                 "reports, retire, dismiss")
    assert values("leaderboard", "Night Owls") == {  # scope and period have no default: skipped
        "scope": None, "period": None, "group": "Night Owls", "chart": False}


def test_sub_commands_and_aliases() -> None:
    request = parse(cmd("daily"), "schedule 07:30 Europe/Berlin mon,wed topic=autograd reveal=6")
    assert request.path == ("daily", "schedule")
    assert request.values == {"time": "07:30", "timezone": "Europe/Berlin", "weekdays": "mon,wed",
                              "topic": "autograd", "reveal_after_hours": 6.0, "banks": None}
    assert parse(cmd("daily"), "schedule time:09:00 tz:UTC").values["timezone"] == "UTC"
    assert parse(cmd("daily"), "schedule 09:00").values["timezone"] == "UTC"  # the default
    assert parse(cmd("daily"), "now").path == ("daily", "now")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("quiz", "count=lots", "count must be a whole number (got 'lots')"),
        ("quiz", "1 2 3", "too many numbers: 3 (expected count, difficulty)"),
        ("quiz", '"unclosed', "check the quotes"),
        ("quiz", "nosuchtopic", "unknown topic 'nosuchtopic'; choose one of: fundamentals"),
        ("quiz", "count:2 count:3", "count is given twice"),
        ("review", "-5", "count must be between 1 and 50 (got -5)"),
        ("review", "soon", "unknown action 'soon'; choose one of: export"),
        ("round", "tensors autograd", "unexpected argument 'autograd'"),
        ("leaderboard", "channel year", "unknown period 'year'; choose one of: week, month, all"),
        ("leaderboard", "scope:channel group:x", "group goes with scope group (got scope channel)"),
        ("daily", "sometimes", "use /daily schedule|pause|resume|now|status"),
        ("daily", "schedule", "/daily schedule needs time: HH:MM"),
        ("daily", "pause now", "/pause takes no arguments (got 'now')"),
        ("daily", "schedule 09:00 reveal=soon", "reveal_after_hours must be a number (got 'soon')"),
        ("daily", "schedule 09:00 reveal=100", "reveal_after_hours must be between 0.25 and 72 (got 100)"),
        ("group", f"create {'x' * 65}", "name is too long (65 characters; at most 64)"),
        ("leaderboard", "chart:maybe", "chart is true or false (got 'maybe')"),
    ],
)
def test_bad_input_is_refused_naming_the_option(name: str, text: str, message: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse(cmd(name), text)
    assert message in str(caught.value)


def test_every_catalogue_command_is_in_the_discord_tree_with_its_limits() -> None:
    tree = {c.name: c for c in all_commands()}
    for command in COMMANDS.commands:
        built = tree[command.name]
        leaves = ([(command, built)] if not command.subcommands else
                  [(s, next(b for b in built.commands if b.name == s.name)) for s in command.subcommands])
        for leaf, discord_leaf in leaves:
            if leaf.form_input:
                assert not discord_leaf.parameters  # opens the options form
                continue  # a code_input command: its options (run's cancel), else the code box
            params = {p.name: p for p in discord_leaf.parameters}
            assert list(params) == [o.name for o in leaf.options], leaf.name
            for option in leaf.options:
                param = params[option.name]
                assert param.required == option.required
                assert (param.min_value, param.max_value) == (
                    (option.minimum, option.maximum) if option.numeric else (None, None)
                ) or option.max_length is not None
                assert [c.value for c in param.choices] == [c.value for c in option.choices]
                assert param.autocomplete == (option.type in (OptionType.TOPIC, OptionType.TRACK))
        assert built.guild_only == command.in_channel_only
        assert (built.default_permissions is not None) == command.admin_only


def test_every_catalogue_command_is_declared_and_served_on_slack() -> None:
    declared = {c["command"]: c for c in manifest()["features"]["slash_commands"]}
    assert set(declared) == set(served_commands()) == {
        SLACK_WORDS.command(c.name) for c in COMMANDS.commands}
    assert declared["/quiz"]["usage_hint"] == "[topic] [count] [difficulty] [both|builtin|community]"
    assert "/drill-help" in declared and "/help" not in declared


def test_help_lists_every_command_under_each_platform_name() -> None:
    slack = "\n".join(help_lines(SLACK_WORDS))
    console = "\n".join(help_lines(CONSOLE_WORDS))
    for command in COMMANDS.commands:
        assert f"`{SLACK_WORDS.command(command.name)}" in slack
        assert f"`{command.name}" in console
    assert "`/drill-help`" in slack


def test_every_ranged_option_has_a_case() -> None:
    ranged = {(o.name, c.name) for c in COMMANDS.commands for o in c.options if o.maximum is not None}
    assert {(case.option.name, case.path[0]) for case in CASES} >= ranged
    assert any(case.path == ("review",) and case.value == 51 for case in CASES)


def test_readme_command_table_shows_the_catalogue_limits() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text()
    table = readme[readme.index("## Commands"):readme.index("## Configuration")]
    for command in COMMANDS.commands:
        assert f"`/{command.name}" in table or command.name == "help"
        for option in command.options:
            if option.minimum is not None and option.maximum is not None and option.type is OptionType.INT:
                assert f"{int(option.minimum)}–{int(option.maximum)}" in table, (command.name, option.name)
