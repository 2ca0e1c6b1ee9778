"""Choosing questions: a channel never sees a repeat until its pool is exhausted.

Twins (``twin_of``: two versions of one question, e.g. a deep dive and its interview twin)
count as one question: once one is served in a cycle, the others wait for the next cycle.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.content.bank import Kind, Library, Question, twin_groups
from bot.core.content.community import DEFAULT_BANK_SOURCE, SOURCE_WORDS
from bot.core.model.topics import normalize_topic
from bot.storage.models import Served
from bot.storage.upsert import dialect_insert


class EmptyPoolError(LookupError):
    pass


def pool(
    library: Library,
    *,
    topic: str | None = None,
    difficulty: int | None = None,
    kinds: Sequence[Kind] | None = None,
    community: tuple[str, str] | None = None,
    source: str = DEFAULT_BANK_SOURCE,
) -> list[Question]:
    """Questions matching the filters, from the banks ``source`` names for ``community``
    (built-in only when no community is given); an unknown topic raises UnknownTopicError."""
    wanted_topic = normalize_topic(topic) if topic else None
    found = [
        q
        for q in library.offered_to(community, source)
        if (wanted_topic is None or q.topic == wanted_topic)
        and (difficulty is None or q.difficulty == difficulty)
        and (kinds is None or q.kind in kinds)
    ]
    if not found:
        what = " ".join(
            part
            for part in (
                f"topic {wanted_topic}" if wanted_topic else "",
                f"difficulty {difficulty}" if difficulty else "",
                "/".join(k.value for k in kinds) if kinds else "",
                SOURCE_WORDS.get(source, "") if community is not None else "",
            )
            if part
        )
        raise EmptyPoolError(f"no questions match {what or 'the filter'}")
    return found


def pool_key_of(topic: str | None, source: str = DEFAULT_BANK_SOURCE) -> str:
    """Which rotation a channel's pick belongs to: every question once per cycle of its pool.

    The built-in-and-community pool keeps the key it had before community banks existed, so
    channels carry on their cycle.
    """
    key = f"mcq:{normalize_topic(topic) if topic else 'all'}"
    return key if source == DEFAULT_BANK_SOURCE else f"{key}:{source}"


async def next_for_channel(
    session: AsyncSession,
    channel_id: int,
    candidates: list[Question],
    pool_key: str,
    rng: random.Random | None = None,
) -> Question:
    """Pick an unseen question of the pool for this channel, starting a new cycle when all are seen."""
    rng = rng or random.Random()
    cycle = await session.scalar(
        select(func.max(Served.cycle)).where(Served.channel_id == channel_id, Served.pool == pool_key)
    )
    cycle = cycle or 0
    seen = set(
        await session.scalars(
            select(Served.question_id).where(
                Served.channel_id == channel_id, Served.pool == pool_key, Served.cycle == cycle
            )
        )
    )
    groups = twin_groups(candidates)
    blocked = {twin for qid in seen for twin in groups.get(qid, (qid,))}
    remaining = [q for q in candidates if q.id not in blocked]
    if not remaining:
        cycle += 1
        remaining = list(candidates)
    choice = rng.choice(remaining)
    await session.execute(
        dialect_insert(session, Served)
        .values(channel_id=channel_id, pool=pool_key, cycle=cycle, question_id=choice.id)
        .on_conflict_do_nothing()
    )
    return choice


def without_twins(questions: Sequence[Question]) -> list[Question]:
    """The questions in order, keeping only the first version of each twin group."""
    groups = twin_groups(questions)
    taken: set[str] = set()
    kept = []
    for q in questions:
        if q.id not in taken:
            kept.append(q)
            taken |= groups.get(q.id, {q.id})
    return kept


def shuffled_order(question: Question, rng: random.Random | None = None) -> list[int]:
    order = list(range(len(question.choices)))
    (rng or random.Random()).shuffle(order)
    return order
