"""The slash commands and the "Run code" message command, defined once for serving and syncing.

Callbacks find the adapter's ``Handlers`` on the client, so ``torchdrill discord sync`` can
build the same tree without a database.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.adapters.discord.interactions import Handlers, where_of, who_of
from bot.adapters.discord.render import render_message
from bot.adapters.discord.views import RunCodeModal
from bot.core.help import help_message

SCOPES = [
    app_commands.Choice(name="this channel", value="channel"),
    app_commands.Choice(name="this server", value="workspace"),
    app_commands.Choice(name="a study group", value="group"),
]
PERIODS = [
    app_commands.Choice(name="this week", value="week"),
    app_commands.Choice(name="this month", value="month"),
    app_commands.Choice(name="all time", value="all"),
]
GROUP_ACTIONS = [
    app_commands.Choice(name=name, value=name) for name in ("create", "join", "leave", "list")
]


def handlers(interaction: discord.Interaction) -> Handlers:
    found = getattr(interaction.client, "handlers", None)
    if not isinstance(found, Handlers):
        raise RuntimeError("this Discord client has no torchdrill handlers attached")
    return found


async def topic_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    choices = handlers(interaction).app.drill.topic_choices(current)
    return [app_commands.Choice(name=display, value=slug) for slug, display in choices]


@app_commands.command(name="quiz", description="A private quiz")
@app_commands.describe(
    topic="topic (default: all)",
    count="how many questions (1-20)",
    difficulty="1 easy, 2 medium, 3 hard",
)
@app_commands.autocomplete(topic=topic_autocomplete)
async def quiz(
    interaction: discord.Interaction,
    topic: str | None = None,
    count: int = 5,
    difficulty: int | None = None,
) -> None:
    h = handlers(interaction)
    await h.answer(
        interaction,
        lambda: h.app.drill.quiz(
            who_of(interaction), topic=topic, count=count, difficulty=difficulty
        ),
    )


@app_commands.command(
    name="review", description="Spaced repetition: due cards first, then weak topics"
)
@app_commands.describe(count="how many cards")
async def review(interaction: discord.Interaction, count: int = 10) -> None:
    h = handlers(interaction)
    await h.answer(interaction, lambda: h.app.drill.review(who_of(interaction), count=count))


@app_commands.command(name="round", description="A live quiz round in this channel")
@app_commands.describe(
    count="questions", seconds="seconds per question", topic="topic (default: all)"
)
@app_commands.autocomplete(topic=topic_autocomplete)
@app_commands.guild_only()
async def round_(
    interaction: discord.Interaction, count: int = 5, seconds: int = 30, topic: str | None = None
) -> None:
    h = handlers(interaction)
    await h.answer(
        interaction, lambda: h.start_round(interaction, count=count, seconds=seconds, topic=topic)
    )


@app_commands.command(name="stats", description="Your accuracy, mastery per topic and streaks")
async def stats(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    where = where_of(interaction) if interaction.guild_id else None
    await h.answer(interaction, lambda: h.app.drill.stats(who_of(interaction), where))


@app_commands.command(name="leaderboard", description="Who scored most")
@app_commands.describe(
    scope="channel, server or study group",
    period="week, month or all time",
    group="study group name (with scope: a study group)",
)
@app_commands.choices(scope=SCOPES, period=PERIODS)
@app_commands.guild_only()
async def leaderboard(
    interaction: discord.Interaction,
    scope: str | None = None,
    period: str | None = None,
    group: str | None = None,
) -> None:
    h = handlers(interaction)
    await h.answer(
        interaction,
        lambda: h.app.drill.leaderboard(
            who_of(interaction), where_of(interaction), scope=scope, period=period, group=group
        ),
        ephemeral=False,
    )


@app_commands.command(name="group", description="Study groups: create, join, leave or list")
@app_commands.describe(action="what to do", name="group name")
@app_commands.choices(action=GROUP_ACTIONS)
@app_commands.guild_only()
async def group(
    interaction: discord.Interaction, action: str = "list", name: str | None = None
) -> None:
    h = handlers(interaction)
    await h.answer(interaction, lambda: h.app.drill.group(who_of(interaction), action, name))


daily = app_commands.Group(
    name="daily",
    description="The channel's daily question (Manage Server)",
    guild_only=True,
    default_permissions=discord.Permissions(manage_guild=True),
)


@daily.command(name="schedule", description="Post a daily question here at a fixed time")
@app_commands.describe(
    time="HH:MM",
    timezone="IANA name, e.g. Europe/Berlin",
    weekdays="e.g. mon-fri or mon,wed,fri",
    topic="topic (default: all)",
    reveal_after_hours="hours until the answer is revealed",
)
@app_commands.autocomplete(topic=topic_autocomplete)
async def daily_schedule(
    interaction: discord.Interaction,
    time: str,
    timezone: str = "UTC",
    weekdays: str | None = None,
    topic: str | None = None,
    reveal_after_hours: float | None = None,
) -> None:
    h = handlers(interaction)
    await h.daily(
        interaction,
        lambda where: h.app.daily.set_schedule(
            where,
            at=time,
            timezone=timezone,
            weekdays=weekdays,
            topic=topic,
            reveal_after_hours=reveal_after_hours,
        ),
    )


@daily.command(name="pause", description="Pause the daily question in this channel")
async def daily_pause(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    await h.daily(interaction, lambda where: h.app.daily.set_paused(where, True))


@daily.command(name="resume", description="Resume the daily question in this channel")
async def daily_resume(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    await h.daily(interaction, lambda where: h.app.daily.set_paused(where, False))


@daily.command(name="now", description="Post today's question now")
async def daily_now(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    await h.daily(interaction, h.app.daily.post_now)


@daily.command(name="status", description="Show this channel's daily schedule")
async def daily_status(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    await h.daily(interaction, h.app.daily.status)


@app_commands.command(
    name="run", description="Run a PyTorch snippet in a sandbox; output in a thread"
)
async def run(interaction: discord.Interaction) -> None:
    h = handlers(interaction)
    if h.app.runs is None:
        await h.on_run_code(interaction, "")  # answers that the runner is unavailable
        return
    await interaction.response.send_modal(RunCodeModal(h.app.settings.runner_max_code_bytes))


@app_commands.context_menu(name="Run code")
async def run_code(interaction: discord.Interaction, message: discord.Message) -> None:
    await handlers(interaction).on_run_code(interaction, message.content)


@app_commands.command(name="help", description="What torchdrill can do")
async def help_(interaction: discord.Interaction) -> None:
    rendered = render_message(help_message("/", "help"))
    await interaction.response.send_message(ephemeral=True, **rendered.send_kwargs())


COMMANDS: list[app_commands.Command | app_commands.Group | app_commands.ContextMenu] = [
    quiz,
    review,
    round_,
    stats,
    leaderboard,
    group,
    daily,
    run,
    run_code,
    help_,
]


def add_commands(tree: app_commands.CommandTree) -> None:
    for command in COMMANDS:
        tree.add_command(command)
