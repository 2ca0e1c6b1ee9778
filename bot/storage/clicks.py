"""The answer path's storage behind ``bot.core.answers.ports.ClickStore``: a click's read and
write as the hot statements (``bot.storage.hot_statements``), on an ORM session or on the raw
click transaction of ``bot.storage.hot_writes`` alike.

The dialect branch lives here: on PostgreSQL the answer, its card and the post's kept count are
one statement (``RECORD_PG``, or ``RECORD_PG_FIRST`` for a post kept in the snapshot cache,
whose member's card is not read first); on SQLite, whose write transaction is exclusive, they
are a few statements and the count read before the write is still exact after it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.answers.ports import ClickState, NextCard, Recorded, Snapshots
from bot.core.content.bank import Question
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.progress.ports import StreakRow
from bot.core.reveal.posts import PostSnapshot
from bot.core.stores import MemberRef
from bot.storage import hot_statements as hot
from bot.storage.db import core_connection
from bot.storage.estimates import apply_revealed
from bot.storage.hot_writes import before_write
from bot.storage.identity import member_ref
from bot.storage.models import Post
from bot.storage.progress_queries import streak_of

# Built once: constructing statements per click costs more than running them.
_POSTS = Post.__table__
assert isinstance(_POSTS, Table)  # a declarative model maps one Table
_CLOSE_POST = (
    update(_POSTS).where(_POSTS.c.id == bindparam("post_id")).values(closed_at=bindparam("closed_at"))
)
_SNAPSHOT_COLUMNS = len(hot.SNAPSHOT_FIELDS)


class StoredClicks:
    """``ClickStore``: stateless; the transaction (a session or a raw click's) carries all."""

    async def member(self, tx: AsyncSession, who: Who, clock: Clock) -> MemberRef:
        return await member_ref(tx, who, clock)

    def snapshots(self, tx: AsyncSession) -> Snapshots | None:
        cache: Snapshots | None = tx.info.get("post_cache")  # set by Database on raw PostgreSQL clicks
        return cache

    async def click_state(self, tx: AsyncSession, post_id: int, member_id: int) -> ClickState | None:
        row = await hot.first(tx, hot.CLICK_STATE, {"post_id": post_id, "member_id": member_id})
        if row is None:
            return None
        data = dict(zip(hot.SNAPSHOT_FIELDS, row[:_SNAPSHOT_COLUMNS], strict=True))
        data["speed_bonus"] = bool(data["speed_bonus"])
        card_state, card_reps, streak, answered = row[_SNAPSHOT_COLUMNS:]
        return ClickState(PostSnapshot(**data), card_state, card_reps, streak, int(answered or 0))

    async def choice_of(self, tx: AsyncSession, post_id: int, member_id: int) -> int | None:
        found = await hot.first(tx, hot.CHOICE, {"post_id": post_id, "member_id": member_id})
        return found[0] if found else None

    async def record_pick(self, tx: AsyncSession, answer: dict[str, Any], next_card: NextCard,
                          before: ClickState | None, *, simple: bool) -> Recorded:
        before_write(tx, simple=simple)  # a raw click that needs the session leaves now
        values = {**answer, "stripe": hot.stripe_of(answer["member_id"])}
        if before is None:  # a kept snapshot (PostgreSQL): the card is written as new unless one exists
            first = await hot.first(tx, hot.RECORD_PG_FIRST, {**values, **next_card(None, None)})
            assert first is not None
            answer_id, answered, card_new, streak = first
            if answer_id is not None and not card_new:
                found = await hot.first(tx, hot.CARD_OF, values)
                state, reps = found if found is not None else (None, None)
                await hot.upsert_srs_card(tx, next_card(state, reps))
            return Recorded(answer_id, int(answered), streak)
        card = next_card(before.card_state, before.card_reps)
        if hot.one_statement_writes(tx):
            answer_id, answered = await hot.record_with_card(tx, {**values, **card})
            return Recorded(answer_id, answered, before.streak)
        answer_id = await hot.insert_answer(tx, values)
        if answer_id is not None:
            await hot.upsert_srs_card(tx, card)
            if values["channel_id"] is not None:
                await hot.rows(tx, hot.BUMP_COUNT, values)
        # SQLite: the write transaction is exclusive, so the count read before is still exact
        return Recorded(answer_id, before.answered + (answer_id is not None), before.streak)

    async def record_answer(self, tx: AsyncSession, answer: dict[str, Any]) -> int | None:
        return await hot.insert_answer(tx, answer)

    async def close(self, tx: AsyncSession, post_id: int, now: datetime) -> None:
        conn = await core_connection(tx)
        await conn.execute(_CLOSE_POST, {"post_id": post_id, "closed_at": now})

    async def apply_revealed(self, tx: AsyncSession, post_id: int, question: Question, now: datetime) -> None:
        await apply_revealed(tx, post_id, question, now)

    async def streak(self, tx: AsyncSession, member_id: int, channel_id: int) -> StreakRow | None:
        return await streak_of(tx, member_id, channel_id)
