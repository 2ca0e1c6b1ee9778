"""How long `/bank quality builtin` takes to build its reply on a database of many answers.

A seeded database: members answer built-in multiple-choice questions (one closed private post per
answer, so none is held back as open), each member with a stored ability per topic. Then the
desk's report (the stored estimates and the bounded aggregate, exactly as chat runs it) is timed,
whole and per read. The reply comes after the interaction's deferral, so this is how long a
member waits for it, not a risk to the 3 s acknowledgement.

    python -m bench.quality --answers 100000 --db sqlite
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime

from sqlalchemy import insert

from bench.common import backends, fresh_database, parser
from bot.core.content.bank import Kind, load_library
from bot.core.domain.identity import Who
from bot.core.learning.quality import QualityRules
from bot.core.learning.quality_desk import QualityDesk
from bot.core.learning.report import items_of
from bot.storage.db import Database
from bot.storage.learning_picks import StoredQualityData
from bot.storage.models import Answer, Member, MemberAbility, Post, Workspace

BATCH = 5_000


async def seed(db: Database, answers: int, members: int, rng: random.Random) -> None:
    library = load_library()
    questions = [q for q in library.questions if q.kind is Kind.MCQ]
    topics = sorted({q.topic for q in questions})
    now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
    async with db.write() as s:
        await s.execute(insert(Workspace), [{"id": 1, "platform": "bench", "external_id": "w", "name": "w"}])
        await s.execute(insert(Member), [{"id": m, "workspace_id": 1, "user_id": f"u{m}", "display_name": f"u{m}",
                                          "created_at": now} for m in range(1, members + 1)])
        await s.execute(insert(MemberAbility), [
            {"member_id": m, "topic": t, "mean": rng.gauss(0, 1), "var": 0.2, "n": 10, "updated_at": now}
            for m in range(1, members + 1) for t in topics])
    for start in range(0, answers, BATCH):
        n = min(BATCH, answers - start)
        picked = [rng.choice(questions) for _ in range(n)]
        async with db.write() as s:
            await s.execute(insert(Post), [
                {"id": start + k + 1, "kind": "quiz", "question_id": q.id, "member_id": 1 + (start + k) % members,
                 "opened_at": now, "closed_at": now} for k, q in enumerate(picked)])
            rows = []
            for k, q in enumerate(picked):
                choice = q.answer_index if rng.random() < 0.6 else rng.randrange(len(q.choices))
                rows.append({"post_id": start + k + 1, "member_id": 1 + (start + k) % members, "workspace_id": 1,
                             "question_id": q.id, "topic": q.topic, "choice": choice,
                             "correct": choice == q.answer_index, "response_ms": rng.randrange(2_000, 40_000),
                             "answered_at": now})
            await s.execute(insert(Answer), rows)


async def run(kind: str, answers: int, members: int, pg_admin_url: str) -> None:
    async with fresh_database(kind, pg_admin_url) as db:
        started = time.perf_counter()
        await seed(db, answers, members, random.Random(1))
        seeded = time.perf_counter() - started
        library = load_library()
        data = StoredQualityData(db)
        items = items_of(library.questions)
        t0 = time.perf_counter()
        stats = await data.stats(items, None, QualityRules().groups)
        t1 = time.perf_counter()
        await data.estimates(items, None)
        t2 = time.perf_counter()
        reply = await QualityDesk(data, library).report(Who("bench", "w", "u1", "u1"), "builtin", None)
        t3 = time.perf_counter()
        counted = sum(s.answers for s in stats.values())
        print(f"{kind:8} {counted:>9,} answers on {len(stats)} questions ({members} members; seeding took "
              f"{seeded:.1f} s): aggregate {t1 - t0:.2f} s, estimates {t2 - t1:.2f} s, whole reply {t3 - t2:.2f} s "
              f"({len(reply.attachments[0].content):,} bytes of table)")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--answers", type=int, default=100_000)
    p.add_argument("--members", type=int, default=2_000)
    args = p.parse_args()
    for kind in backends(args.db):
        asyncio.run(run(kind, args.answers, args.members, args.pg_admin_url))


if __name__ == "__main__":
    main()
