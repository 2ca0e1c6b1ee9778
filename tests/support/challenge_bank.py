"""The challenge bank the challenge desk and board tests load."""

from __future__ import annotations

from bot.core.content.challenges import load_challenges

BANK = load_challenges()
