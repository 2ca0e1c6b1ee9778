"""Calibration and the question-quality flags on a seeded world whose truth is known.

Synthetic members of known ability answer questions of known difficulty under a 2PL response
model, with planted bad questions (``bench.calibration_sim``). Printed side by side, one row
per size: Spearman rank correlation of estimated vs true difficulty and ability (batch fit and
the online Elo-style update), recall and precision of the planted flags, the batch fit's time.
Goals (issue 33): rank correlations >= 0.9 and flag recall/precision >= 0.95/0.8 at 200 answers
per question. Then one batch fit over about 1M answers on at most 2 cores (goal: minutes).

    python -m bench.calibration [--seed 1] [--sizes 50,200,1000] [--questions 100] [--big 1000000]
"""

from __future__ import annotations

import argparse
import math
import os
import time

from bench.calibration_sim import evaluate, simulate
from bot.core.domain.topics import TOPICS
from bot.core.learning.irt import fit


def _pin_two_cores() -> int:
    cores = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, cores)
    return len(cores)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sizes", default="50,200,1000", help="answers per question, comma separated")
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--big", type=int, default=1_000_000, help="answers in the timing run (0: skip)")
    args = p.parse_args()
    cores = _pin_two_cores()
    print(f"seed {args.seed}, {args.questions} questions in 2 topics, 3 planted of each of 4 flags, "
          f"{cores} cores")
    print(f"{'answers/q':>9} {'answers':>8} | {'batch rho b':>11} {'theta':>6} | "
          f"{'online rho b':>12} {'theta':>6} | {'recall':>6} {'precision':>9} | {'fit s':>6}")
    online_us: list[float] = []
    for n in (int(x) for x in args.sizes.split(",")):
        s = evaluate(simulate(args.seed, n, questions=args.questions), n)
        online_us.append(s.online_us)
        print(f"{n:>9} {s.answers:>8} | {s.difficulty_rho:>11.3f} {s.ability_rho:>6.3f} | "
              f"{s.online_difficulty_rho:>12.3f} {s.online_ability_rho:>6.3f} | "
              f"{s.recall:>6.2f} {s.precision:>9.2f} | {s.fit_seconds:>6.2f}")
        if s.missed or s.false:
            print(f"{'':>9} missed: {', '.join(s.missed) or '-'}; false: {', '.join(s.false) or '-'}")
    print(f"online update: {min(online_us):.1f} us per answer at best over the sizes "
          "(in memory, no database; the click path's own time is in bench/answers.py)")
    if args.big:
        questions = 1000
        per_question = math.ceil(args.big / questions)
        started = time.perf_counter()
        world = simulate(args.seed, per_question, questions=questions, topics=tuple(TOPICS)[:8])
        made = time.perf_counter() - started
        cpu = time.process_time()
        calibration = fit(world.picks)
        cpu = time.process_time() - cpu
        print(f"batch fit over {len(world.picks):,} answers ({questions} questions, "
              f"{len(calibration.abilities):,} member-topics, {cores} cores): "
              f"{calibration.seconds:.1f} s wall, {cpu:.1f} s CPU, "
              f"{calibration.iterations} L-BFGS iterations, "
              f"converged: {calibration.converged} (simulating the answers took {made:.1f} s)")


if __name__ == "__main__":
    main()
