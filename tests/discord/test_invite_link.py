"""The README's invite link asks for exactly the permissions its text lists (a wrong integer
would silently drop one, e.g. Manage Roles for streak role rewards)."""
from __future__ import annotations

import re
from pathlib import Path

import discord

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_the_invite_link_carries_the_listed_permissions() -> None:
    [value] = re.findall(r"discord\.com/oauth2/authorize\?[^`]*permissions=(\d+)", README)
    listed = discord.Permissions(
        view_channel=True, send_messages=True, embed_links=True, attach_files=True,
        read_message_history=True, create_public_threads=True, send_messages_in_threads=True,
        manage_roles=True)
    assert int(value) == listed.value
    for words in ("View Channels", "Send Messages", "Embed\n   Links", "Attach Files", "Read Message History",
                  "Create\n   Public Threads", "Send Messages in Threads", "Manage Roles"):
        assert words in README
