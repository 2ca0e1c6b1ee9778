"""Answers per second and p50/p99 latency of the whole "member clicks a choice" core path.

The path measured is Drill.handle_action: load the post, record the answer idempotently,
score it, update spaced repetition, and build both the private reply and the refreshed
public view. Targets (issue 3): >= 1,000 answers/s on SQLite, p99 < 20 ms on both databases,
on a 2-core machine.

    python bench/answers.py [--db sqlite|postgres|both] [--members 200] [--posts 20]
"""

from __future__ import annotations

import asyncio
import random
import time

from bench.common import backends, fresh_database, parser, summary
from bot.core.actions import Action, Verb
from bot.core.clock import SystemClock
from bot.core.content import load_library
from bot.core.identity import Where, Who
from bot.core.service import Drill


class NullPublisher:
    async def publish(self, where, message, *, thread_of=None) -> str:  # noqa: ANN001
        return "ref"

    async def update(self, where, ref, message) -> None:  # noqa: ANN001
        pass


async def run(kind: str, members: int, posts: int, concurrency: int, admin: str) -> None:
    library = load_library()
    async with fresh_database(kind, admin) as db:
        drill = Drill(db, library, SystemClock(), random.Random(1))
        where = Where("bench", "w", "c")
        people = [Who("bench", "w", f"u{i}", f"User {i}") for i in range(members)]
        post_ids = [
            (await drill.ask(where, NullPublisher(), kind="daily")).post_id for _ in range(posts)
        ]
        # warm-up: every member exists (first contact creates the member row)
        warm_post = (await drill.ask(where, NullPublisher(), kind="daily")).post_id
        for who in people:
            await drill.handle_action(who, Action(Verb.PICK, warm_post, 0).encode())

        clicks = [(who, pid, random.randrange(4)) for pid in post_ids for who in people]
        random.shuffle(clicks)
        half = len(clicks) // 2
        sequential, concurrent = clicks[:half], clicks[half:]

        latencies: list[float] = []
        started = time.perf_counter()
        for who, pid, pos in sequential:
            t0 = time.perf_counter()
            await drill.handle_action(who, Action(Verb.PICK, pid, pos).encode())
            latencies.append(time.perf_counter() - t0)
        seq_rate = len(sequential) / (time.perf_counter() - started)
        print(f"[{kind}] sequential: {seq_rate:,.0f} answers/s")
        print(f"[{kind}] {summary('latency, one at a time', latencies)}")

        queue: asyncio.Queue[tuple[Who, int, int]] = asyncio.Queue()
        for item in concurrent:
            queue.put_nowait(item)
        conc_latencies: list[float] = []

        async def client() -> None:
            while not queue.empty():
                who, pid, pos = queue.get_nowait()
                t0 = time.perf_counter()
                await drill.handle_action(who, Action(Verb.PICK, pid, pos).encode())
                conc_latencies.append(time.perf_counter() - t0)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        rate = len(concurrent) / (time.perf_counter() - started)
        print(f"[{kind}] {concurrency} concurrent clients: {rate:,.0f} answers/s")
        print(f"[{kind}] {summary(f'latency with {concurrency} clients', conc_latencies)}")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--members", type=int, default=200)
    p.add_argument("--posts", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=8)
    args = p.parse_args()
    for kind in backends(args.db):
        asyncio.run(run(kind, args.members, args.posts, args.concurrency, args.pg_admin_url))


if __name__ == "__main__":
    main()
