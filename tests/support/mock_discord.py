"""The /mock tests on the fake Discord: the custom id of the right (or a wrong) choice of a mock MCQ."""

from __future__ import annotations

from typing import Any

from bot.app import App
from bot.core.domain.actions import decode
from bot.core.reveal.posts import order_of
from bot.storage.models import MockItem, Post
from tests.support.fake_discord import buttons_of


async def keyed(app: App, message: dict[str, Any], right: bool) -> str:
    first = decode(buttons_of(message)[0]["custom_id"])
    async with app.db.read() as s:
        item = await s.get(MockItem, (first.post_id, first.arg // 100))
        assert item is not None and item.post_id is not None
        post = await s.get(Post, item.post_id)
        assert post is not None
        position = order_of(post).index(app.library[post.question_id].answer_index)
    buttons = buttons_of(message)
    return str(buttons[position if right else (position + 1) % len(buttons)]["custom_id"])
