"""The success rate adaptive quizzes deliver against the target band, beside today's selection.

A seeded world with known truth: members of known ability in one topic (normal, sd 1.2) play
quizzes of 5 from a pool of questions labelled 1-3 whose true difficulty scatters around the
label (centres -1.2, 0, +1.2 logits, sd 0.4: the labels are right on average, not exactly, and
wider apart than the priors the product assumes). Answers follow the Rasch model. The adaptive
policy is the product's own code (``bot.core.learning.adaptive``: the member's picks replayed
through the online update, rings around the band, ``quiz_order``); "today" is the selection
before it, unseen questions at random. Printed: the share right the member actually got in
quizzes 3 onwards (after two to warm up), overall and by ability third, and how far that
lies from the band, for each seed. Goal (issue 33): within 5 points of the band on every seed.

    python -m bench.adaptive [--seeds 1 2 3] [--members 300] [--quizzes 8]
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.learning.adaptive import (
    DEFAULT_BAND,
    calibrator_of,
    predicted_success,
    quiz_order,
    ring,
)
from bot.core.learning.picks import Pick

CENTRES = {1: -1.2, 2: 0.0, 3: 1.2}
PER_LABEL = 30
QUIZ = 5
WARM_UP = 2  # quizzes before the delivered rate is counted
TOPIC = "tensors"


@dataclass(frozen=True)
class Delivered:
    policy: str
    right: int
    served: int
    by_third: tuple[float, float, float]  # share right for the weakest, middle, strongest third

    @property
    def share(self) -> float:
        return self.right / self.served if self.served else 0.0


def band_distance(share: float, band: tuple[float, float] = DEFAULT_BAND) -> float:
    return max(band[0] - share, share - band[1], 0.0)


def _pool(rng: random.Random) -> tuple[dict[str, int], dict[str, float]]:
    labels = {f"q{level}-{i}": level for level in CENTRES for i in range(PER_LABEL)}
    return labels, {q: CENTRES[level] + rng.gauss(0.0, 0.4) for q, level in labels.items()}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


Policy = Callable[[list[Pick], list[str], set[str], random.Random], list[str]]


def adaptive(labels: dict[str, int], band: tuple[float, float] = DEFAULT_BAND) -> Policy:
    def choose(picks: list[Pick], pool: list[str], seen: set[str], rng: random.Random) -> list[str]:
        calibrator = calibrator_of(picks, labels)
        order = quiz_order(pool, lambda q: q in seen,
                           lambda q: ring(predicted_success(calibrator, "m", q, TOPIC), band), rng)
        return order[:QUIZ]
    return choose


def today(picks: list[Pick], pool: list[str], seen: set[str], rng: random.Random) -> list[str]:
    order = quiz_order(pool, lambda q: q in seen, lambda q: 0, rng)  # every question one ring
    return order[:QUIZ]


def simulate(seed: int, members: int, quizzes: int) -> list[Delivered]:
    results = []
    for name in ("adaptive", "today"):
        rng = random.Random(seed)
        labels, truth = _pool(rng)
        policy = adaptive(labels) if name == "adaptive" else today
        per_member: list[tuple[float, int, int]] = []
        for _ in range(members):
            ability = rng.gauss(0.0, 1.2)
            picks: list[Pick] = []
            seen: set[str] = set()
            right = served = 0
            for k in range(quizzes):
                for q in policy(picks, list(labels), seen, rng):
                    correct = rng.random() < _sigmoid(ability - truth[q])
                    picks.append(Pick("m", q, TOPIC, 0, correct))
                    seen.add(q)
                    if k >= WARM_UP:
                        right += correct
                        served += 1
            per_member.append((ability, right, served))
        per_member.sort()
        thirds = [per_member[i * members // 3:(i + 1) * members // 3] for i in range(3)]
        by_third = tuple(sum(r for _, r, _ in t) / max(1, sum(s for _, _, s in t)) for t in thirds)
        results.append(Delivered(name, sum(r for _, r, _ in per_member), sum(s for _, _, s in per_member),
                                 (by_third[0], by_third[1], by_third[2])))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--members", type=int, default=300)
    parser.add_argument("--quizzes", type=int, default=8)
    args = parser.parse_args()
    low, high = DEFAULT_BAND
    print(f"band {low:.0%}-{high:.0%}; {args.members} members, {args.quizzes} quizzes of {QUIZ}, "
          f"counted from quiz {WARM_UP + 1}")
    print("seed policy    share right | weakest  middle  strongest third | off the band")
    for seed in args.seeds:
        for d in simulate(seed, args.members, args.quizzes):
            weak, mid, strong = d.by_third
            print(f"{seed:>4} {d.policy:<9} {d.share:>11.1%} | {weak:>7.1%} {mid:>7.1%} {strong:>9.1%}       "
                  f"| {100 * band_distance(d.share):>5.1f} points")


if __name__ == "__main__":
    main()
