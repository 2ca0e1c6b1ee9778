"""The help text, shared by every front end (command names differ slightly per platform)."""

from __future__ import annotations

from bot.core.messages import Message
from bot.core.topics import TOPICS

COMMANDS = (
    ("quiz [topic] [count] [difficulty]", "a private quiz (1-20 questions)"),
    ("review", "spaced repetition: due cards first, then weak topics"),
    ("round [count] [seconds] [topic]", "a live round in this channel"),
    ("stats", "your accuracy, mastery per topic and streaks"),
    ("leaderboard [scope] [period]", "scope: channel, server/workspace or group; period: week, month, all"),
    ("group create|join|leave|list [name]", "study groups"),
    ("daily schedule|pause|resume|now|status", "the channel's daily question (admins)"),
    ("run", "run a PyTorch snippet in a sandbox; the output lands in a thread"),
)


def help_message(prefix: str = "/", help_name: str = "help") -> Message:
    msg = Message(title="torchdrill — daily PyTorch interview drills", ephemeral=True)
    msg.text("\n".join(f"`{prefix}{cmd}` — {what}" for cmd, what in COMMANDS))
    msg.text("Topics: " + ", ".join(f"`{slug}`" for slug in TOPICS))
    msg.footer = f"Answer the daily question with the buttons. {prefix}{help_name} shows this again."
    return msg
