"""A member of a channel and the export of their learning report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bot.core.domain.actions import Action, Verb
from bot.core.domain.identity import Where, Who
from bot.core.drill.service import Drill
from bot.core.reveal.posts import order_of
from bot.storage.models import Post

REPO = Path(__file__).resolve().parents[2]
WHERE = Where("discord", "g1", "c1", "general")


def who(n: int) -> Who:
    return Who("discord", "g1", f"u{n}", f"User {n}")


def _export(db_url: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")}
    return subprocess.run([sys.executable, "-m", "bot.cli", "content", "quality", "--export", str(path)],
                          cwd=REPO, env={**env, "DATABASE_URL": db_url}, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


MEMBERS = 40  # members answering each post in the report tests


async def post_question(drill: Drill, publisher: Any) -> tuple[int, object, list[int]]:
    posted = await drill.ask(WHERE, publisher, kind="daily")
    async with drill.db.read() as s:
        post = await s.get(Post, posted.post_id)
        return posted.post_id, drill.library[post.question_id], order_of(post)


async def pick_choice(drill: Drill, member: int, post_id: int, order: list[int], choice: int) -> None:
    out = await drill.handle_action(who(member), Action(Verb.PICK, post_id, order.index(choice)).encode())
    assert out.recorded
