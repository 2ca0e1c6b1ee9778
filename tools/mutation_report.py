"""Mutation score per module from `mutmut results --all true`, and the surviving mutants.

A score counts killed (and timed-out) mutants over all mutants that ran; "no tests" mutants
(code no selected test reaches) count as survivors, since no test would notice them either.

    mutmut run && python tools/mutation_report.py [--min-core 85 --min-runner 75]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*([\w.]+)\.x\w*?__mutmut_\d+: (.+)$")
KILLED = {"killed", "timeout"}
IGNORED = {"skipped", "not checked"}


def collect(text: str) -> dict[str, Counter[str]]:
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            per_module[match.group(1)][match.group(2).strip()] += 1
    return per_module


def score(counts: Counter[str]) -> float | None:
    ran = sum(n for status, n in counts.items() if status not in IGNORED)
    return 100 * sum(counts[s] for s in KILLED) / ran if ran else None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--min-core", type=float, default=85.0)
    p.add_argument("--min-runner", type=float, default=75.0)
    args = p.parse_args()
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    out = subprocess.run([mutmut, "results", "--all", "true"], capture_output=True, text=True, check=False)
    per_module = collect(out.stdout)
    if not per_module:
        print("no mutmut results: run `mutmut run` first", file=sys.stderr)
        return 1
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for module, counts in sorted(per_module.items()):
        module_score = score(counts)
        if module_score is None:
            continue  # not run this time (a `MUTANTS=` subset): no score, not 0%
        print(f"{module:45s} {module_score:5.1f}%  {dict(counts)}")
        groups["runner" if module.startswith("runner") else "bot.core"].update(counts)
    failed = False
    for name, floor in (("bot.core", args.min_core), ("runner", args.min_runner)):
        value = score(groups[name])
        if value is not None:
            print(f"{name}: {value:.1f}% (target {floor:.0f}%)")
            failed |= value < floor
    survivors = [line.strip() for line in out.stdout.splitlines() if line.strip().endswith(("survived", "no tests"))]
    print(f"{len(survivors)} surviving mutants (`mutmut show NAME` shows one):")
    print("\n".join(survivors))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
