"""CI's bank snippets: warm interpreters (bot/snippet_pool.py) against one interpreter each.

Runs the same bank snippets both ways with the same number of parallel slots and prints
both totals, plus the floor measured in the same run: the seconds spent inside the snippets
themselves divided by the slots (what any runner must pay). Usage:
``python -m bench.snippets [--count 40] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

from bot.core.content.bank import load_library
from bot.snippet_pool import needs_own_process, run_all, run_isolated


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--count", type=int, default=40, help="bank snippets to run each way")
    p.add_argument("--workers", type=int, default=2, help="parallel slots for both ways")
    args = p.parse_args()
    snippets = [s for q in load_library().questions for s in q.code
                if s.runnable and not needs_own_process(s)][: args.count]

    started = time.monotonic()
    warm = run_all(snippets, workers=args.workers)
    warm_s = time.monotonic() - started

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        cold = list(pool.map(run_isolated, snippets))
    cold_s = time.monotonic() - started

    floor = sum(o.seconds for o in warm) / args.workers
    failed = sum(o.returncode != 0 for o in warm), sum(o.returncode != 0 for o in cold)
    print(f"{len(snippets)} snippets, {args.workers} slots (failed: warm {failed[0]}, cold {failed[1]})")
    print(f"warm interpreters: {warm_s:.1f} s  ({warm_s / len(snippets) * 1000:.0f} ms/snippet)")
    print(f"one interpreter each: {cold_s:.1f} s  ({cold_s / len(snippets) * 1000:.0f} ms/snippet)")
    print(f"floor (time inside the snippets / slots): {floor:.1f} s")
    print(f"warm is {cold_s / warm_s:.1f}x faster than cold; warm is {warm_s / floor:.1f}x its floor")


if __name__ == "__main__":
    main()
