"""Choosing questions: a channel never sees a repeat until its pool is exhausted.

Twins (``twin_of``: two versions of one question, e.g. a deep dive and its interview twin)
count as one question: once one is served in a cycle, the others wait for the next cycle.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from bot.core.content.bank import Kind, Library, Question, twin_groups
from bot.core.content.community import DEFAULT_BANK_SOURCE, SOURCE_WORDS
from bot.core.domain.topics import normalize_topic

if TYPE_CHECKING:
    from bot.core.stores import Tx


class ServedLog(Protocol):
    """What each channel was served, per pool and cycle (``bot.storage.served.StoredServed``),
    read and written inside the caller's transaction."""

    async def latest_cycle(self, tx: Tx, channel_id: int, pool_key: str) -> tuple[int, set[str]]:
        """The channel's current cycle of the pool (0 before any) and the questions served in it."""
        ...

    async def mark(self, tx: Tx, channel_id: int, pool_key: str, cycle: int, question_id: str) -> None:
        """Record a pick (a pick already recorded is left alone)."""
        ...


class EmptyPoolError(LookupError):
    pass


TWINS_CACHED = 32  # pools (by content) whose twin groups are kept
_twins: dict[tuple[tuple[str, str | None], ...], dict[str, frozenset[str]]] = {}


def pool_twins(candidates: Sequence[Question]) -> dict[str, frozenset[str]]:
    """``twin_groups`` of a pool, computed once per pool's content: thousands of channels
    posting at the same minute draw from the same few pools (a few ms each otherwise).
    The result is shared: read it, never change it."""
    key = tuple((q.id, q.twin_of) for q in candidates)
    groups = _twins.get(key)
    if groups is None:
        groups = _twins[key] = twin_groups(candidates)
        while len(_twins) > TWINS_CACHED:
            _twins.pop(next(iter(_twins)))
    return groups


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
    served: ServedLog,
    tx: Tx,
    channel_id: int,
    candidates: list[Question],
    pool_key: str,
    rng: random.Random | None = None,
) -> Question:
    """Pick an unseen question of the pool for this channel, starting a new cycle when all are
    seen; read and recorded in the caller's transaction ``tx``."""
    rng = rng or random.Random()
    cycle, seen = await served.latest_cycle(tx, channel_id, pool_key)
    groups = pool_twins(candidates)
    blocked = {twin for qid in seen for twin in groups.get(qid, (qid,))}
    remaining = [q for q in candidates if q.id not in blocked]
    if not remaining:
        cycle += 1
        remaining = list(candidates)
    choice = rng.choice(remaining)
    await served.mark(tx, channel_id, pool_key, cycle, choice.id)
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
