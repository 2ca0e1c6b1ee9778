"""Mutation score per module from `mutmut results --all true`, and the surviving mutants.

A score counts killed (and timed-out) mutants over all mutants that ran; "no tests" mutants
(code no selected test reaches) count as survivors, since no test would notice them either.
With ``--sample FILE`` (what `tools/mutate_sample.py` writes) only the sampled mutants count,
and each area's score comes with its 95% interval (Wilson) as an estimate of the whole tree.

    mutmut run && python tools/mutation_report.py [--min-core 85 --min-runner 75] [--sample FILE]
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutate_sample import area_of  # one rule for which area a mutant is in

LINE = re.compile(r"^\s*(([\w.]+)\.x\w*?__mutmut_\d+): (.+)$")
KILLED = {"killed", "timeout"}
IGNORED = {"skipped", "not checked"}


def collect(text: str, only: set[str] | None = None) -> dict[str, Counter[str]]:
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    for line in text.splitlines():
        match = LINE.match(line)
        if match and (only is None or match.group(1) in only):
            per_module[match.group(2)][match.group(3).strip()] += 1
    return per_module


def ran_of(counts: Counter[str]) -> int:
    return sum(n for status, n in counts.items() if status not in IGNORED)


def score(counts: Counter[str]) -> float | None:
    ran = ran_of(counts)
    return 100 * sum(counts[s] for s in KILLED) / ran if ran else None


def interval(counts: Counter[str]) -> tuple[float, float]:
    """Wilson 95% interval of the score, in percent: the sample's estimate of the whole area."""
    ran = ran_of(counts)
    killed = sum(counts[s] for s in KILLED)
    z = 1.96
    p = killed / ran
    centre = (p + z * z / (2 * ran)) / (1 + z * z / ran)
    half = z * math.sqrt(p * (1 - p) / ran + z * z / (4 * ran * ran)) / (1 + z * z / ran)
    return 100 * (centre - half), 100 * (centre + half)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--min-core", type=float, default=85.0)
    p.add_argument("--min-runner", type=float, default=75.0)
    p.add_argument("--sample", type=Path, help="score only the mutants named in this file, one per line")
    args = p.parse_args()
    only = set(args.sample.read_text().split()) if args.sample else None
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    out = subprocess.run([mutmut, "results", "--all", "true"], capture_output=True, text=True, check=False)
    per_module = collect(out.stdout, only)
    if not per_module:
        print("no mutmut results: run `mutmut run` first", file=sys.stderr)
        return 1
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for module, counts in sorted(per_module.items()):
        module_score = score(counts)
        if module_score is None:
            continue  # not run this time (a `MUTANTS=` subset): no score, not 0%
        print(f"{module:45s} {module_score:5.1f}%  {dict(counts)}")
        groups[area_of(module)].update(counts)
    failed = False
    for name, floor in (("bot.core", args.min_core), ("runner", args.min_runner)):
        value = score(groups[name])
        if value is None:
            continue
        estimate = ""
        if only is not None:
            low, high = interval(groups[name])
            estimate = f", whole-tree estimate {low:.1f}-{high:.1f}% (95%)"
        print(f"{name}: {value:.1f}% of {ran_of(groups[name])} mutants (target {floor:.0f}%){estimate}")
        failed |= value < floor
    if only is not None:
        missing = sum(counts["not checked"] for counts in per_module.values())
        if missing:
            print(f"{missing} sampled mutants did not run (stopped early?): the estimate leaves them out")
    survivors = [line.strip() for line in out.stdout.splitlines()
                 if line.strip().endswith(("survived", "no tests"))
                 and (only is None or line.strip().partition(":")[0] in only)]
    print(f"{len(survivors)} surviving mutants (`mutmut show NAME` shows one):")
    print("\n".join(survivors))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
