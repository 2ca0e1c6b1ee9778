"""Which answers stay private: the one predicate boards, stats, the digest and the estimates share."""

from __future__ import annotations

from sqlalchemy import ColumnElement, select

from bot.storage.models import Answer, Post


def on_open_question() -> ColumnElement[bool]:
    """The answer belongs to a channel question not revealed yet: its pick stays private."""
    open_posts = select(Post.id).where(Post.closed_at.is_(None), Post.channel_id.is_not(None))
    return Answer.post_id.in_(open_posts)
