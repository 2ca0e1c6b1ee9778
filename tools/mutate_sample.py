"""`make mutate`: the mutation score of `bot/core` and `runner/` from a seeded random sample.

Every mutant takes hours on the 2-core machine (docs/mutation-testing.md): a mutant that survives
costs all the tests that reach its function, and many functions are reached by hundreds of
tests. The score of a uniform random sample of mutants is an unbiased estimate of the whole
tree's score, and its error is known: each area's sample is sized so that its 95% margin is
at most the points asked whatever the score (worst case p = 0.5, with the finite-population
correction), and the report prints the interval that the results give. The runner's margin is
wider by default: its mutants cost about ten times the core's (trial sample, 18.4 s against
1.8 s of tests per mutant: their tests start real sandboxes).
The seed comes from the git trees of the code and the tests: a rerun of the same code and tests
tries the same mutants, and any change to either draws a new sample, so tests written against
one sample's survivors are measured on mutants they were not written for. `make mutate-all`
runs every mutant.

    python tools/mutate_sample.py [--core-margin 3] [--runner-margin 6] [--seed N] [--children 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

MUTANTS = Path("mutants")
SAMPLE_FILE = MUTANTS / "sample.txt"
Z95 = 1.96


def area_of(name: str) -> str:
    return "runner" if name.startswith("runner.") else "bot.core"


def sample_size(population: int, margin: float) -> int:
    """Mutants needed for a 95% margin of ``margin`` (a fraction) at the worst case p = 0.5."""
    if population == 0:
        return 0
    infinite = (Z95 / margin) ** 2 * 0.25
    return min(population, math.ceil(infinite / (1 + (infinite - 1) / population)))


def generate() -> list[str]:
    """Let mutmut write its mutants (unchanged files are kept) and list every mutant's name."""
    import mutmut.__main__ as mutmut_main  # the pinned 3.8.1: these are the steps `mutmut run` starts with

    mutmut_main.set_mutant_under_test("mutant_generation")
    MUTANTS.mkdir(exist_ok=True)
    mutmut_main.copy_src_dir()
    mutmut_main.copy_also_copy_files()
    mutmut_main.setup_source_paths()
    mutmut_main.store_lines_covered_by_tests()
    mutmut_main.create_mutants(os.cpu_count() or 2)
    names: list[str] = []
    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        names.extend(json.loads(meta.read_text())["exit_code_by_key"])
    return sorted(names)


def default_seed() -> int:
    """The seed for this code and these tests (the trees git keeps for them); 2026 outside git."""
    trees = subprocess.run(["git", "rev-parse", "HEAD:bot/core", "HEAD:runner", "HEAD:tests"],
                           capture_output=True, text=True, check=False)
    if trees.returncode != 0:
        return 2026
    return int(hashlib.sha256(trees.stdout.encode()).hexdigest()[:8], 16)


def choose(names: list[str], margins: dict[str, float], seed: int) -> list[str]:
    """A uniform sample of each area's mutants; ``margins`` maps the area to its 95% margin."""
    rng = random.Random(seed)
    chosen: list[str] = []
    for area, margin in margins.items():
        population = sorted(n for n in names if area_of(n) == area)
        size = sample_size(len(population), margin)
        chosen.extend(rng.sample(population, size))
        print(f"{area}: {size} of {len(population)} mutants sampled (seed {seed})")
    return sorted(chosen)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--core-margin", type=float, default=3.0, help="95%% margin of bot/core, in points")
    p.add_argument("--runner-margin", type=float, default=6.0, help="95%% margin of runner/, in points")
    p.add_argument("--seed", type=int, help="default: from the git trees of bot/core, runner and tests")
    p.add_argument("--children", type=int, default=2)
    args = p.parse_args()
    margins = {"bot.core": args.core_margin / 100, "runner": args.runner_margin / 100}
    if not all(0 < m < 0.5 for m in margins.values()):
        p.error("margins are in points, between 0 and 50")
    names = generate()
    if not names:
        print("mutmut wrote no mutants: check [tool.mutmut] in pyproject.toml", file=sys.stderr)
        return 1
    seed = default_seed() if args.seed is None else args.seed
    chosen = choose(names, margins, seed)
    SAMPLE_FILE.write_text("\n".join(chosen) + "\n")
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    subprocess.run([mutmut, "run", "--max-children", str(args.children), *chosen], check=False)
    report = Path(__file__).with_name("mutation_report.py")
    return subprocess.run([sys.executable, str(report), "--sample", str(SAMPLE_FILE)], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
