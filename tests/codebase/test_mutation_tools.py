"""The sampled `make mutate`: how many mutants it tries and how it turns results into a score.

A sample too small, or an interval computed wrongly, would make the README's mutation figure
a claim no run supports.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
from collections import Counter
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import cast

import pytest

from tests.conftest import fastest_modules_first

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sample = tool("mutate_sample")
report = tool("mutation_report")


@pytest.mark.parametrize(("population", "margin", "expected"), [
    (11_933, 0.03, 980),  # 1.96² · 0.25 / 0.03² = 1067.1; / (1 + 1066.1 / 11933) = 979.6
    (4_166, 0.03, 850),
    (100, 0.03, 92),
    (10, 0.03, 10),
    (0, 0.03, 0),
    (1_000_000, 0.05, 385),
])
def test_sample_size_gives_the_margin_at_the_worst_case(population: int, margin: float, expected: int) -> None:
    assert sample.sample_size(population, margin) == expected


def test_sample_is_seeded_per_area_and_never_repeats_a_mutant() -> None:
    names = [f"bot.core.answers.recording.x_f__mutmut_{i}" for i in range(3000)] + [
        f"runner.sandbox.x_g__mutmut_{i}" for i in range(500)]
    random.Random(1).shuffle(names)
    margins = {"bot.core": 0.03, "runner": 0.06}
    first = sample.choose(names, margins, seed=7)
    assert first == sample.choose(list(reversed(names)), margins, seed=7)  # the order mutmut lists them in
    assert first != sample.choose(names, margins, seed=8)
    assert len(set(first)) == len(first)
    assert Counter(sample.area_of(n) for n in first) == {"bot.core": 788, "runner": 175}  # as sample_size gives


def test_wilson_interval_matches_the_textbook_values() -> None:
    low, high = report.interval(Counter(killed=75, survived=20, **{"no tests": 5}))
    assert (round(low, 1), round(high, 1)) == (65.7, 82.5)
    low, high = report.interval(Counter(killed=10))
    assert (round(low, 1), round(high, 1)) == (72.2, 100.0)
    assert report.interval(Counter(killed=10, skipped=90)) == report.interval(Counter(killed=10))


def test_report_counts_only_sampled_mutants_and_every_status() -> None:
    text = "\n".join([
        "    bot.core.answers.recording.x_record__mutmut_1: killed",
        "    bot.core.answers.recording.x_record__mutmut_2: survived",
        "    bot.core.answers.recording.xǁDeskǁpress__mutmut_3: no tests",
        "    bot.core.answers.recording.x_record__mutmut_4: timeout",
        "    runner.sandbox.x_run__mutmut_1: killed",
        "    runner.sandbox.x_run__mutmut_2: not checked",
    ])
    everything = report.collect(text)
    assert everything == {
        "bot.core.answers.recording": Counter(killed=1, survived=1, timeout=1, **{"no tests": 1}),
        "runner.sandbox": Counter(killed=1, **{"not checked": 1}),
    }
    assert report.score(everything["bot.core.answers.recording"]) == 50.0
    assert report.score(everything["runner.sandbox"]) == 100.0
    only = {"bot.core.answers.recording.x_record__mutmut_2", "bot.core.answers.recording.xǁDeskǁpress__mutmut_3"}
    assert report.collect(text, only) == {"bot.core.answers.recording": Counter(survived=1, **{"no tests": 1})}


def test_a_mutants_tests_run_fastest_module_first_keeping_each_module_together(tmp_path: Path) -> None:
    order = ["tests/test_slow.py::a", "tests/test_slow.py::b", "tests/test_fast.py::c",
             "tests/test_fast.py::d", "tests/test_unmeasured.py::e", "tests/test_mid.py::f"]
    durations = {"tests/test_slow.py::a": 4.0, "tests/test_slow.py::b": 0.5, "tests/test_fast.py::c": 0.3,
                 "tests/test_fast.py::d": 0.01, "tests/test_mid.py::f": 0.2}
    stats = tmp_path / "mutmut-stats.json"
    items = cast(list[pytest.Item], [SimpleNamespace(nodeid=n) for n in order])
    fastest_modules_first(items, stats)  # no stats yet (mutmut's first pass): nothing moves
    assert [i.nodeid for i in items] == order
    stats.write_text(json.dumps({"duration_by_test": durations}))
    fastest_modules_first(items, stats)
    assert [i.nodeid for i in items] == [
        "tests/test_fast.py::c", "tests/test_fast.py::d", "tests/test_mid.py::f",
        "tests/test_slow.py::a", "tests/test_slow.py::b", "tests/test_unmeasured.py::e"]


def test_the_seed_follows_the_code_and_the_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert sample.default_seed() == 2026  # not a git checkout: the fixed fallback

    def commit(path: str, text: str) -> int:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", path], check=True)
        return sample.default_seed()

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    commit("bot/core/a.py", "x = 1\n")
    commit("runner/b.py", "y = 1\n")
    first = commit("tests/test_a.py", "def test_a(): pass\n")
    assert commit("README.md", "docs\n") == first  # the same code and tests: the same mutants
    changed = commit("tests/test_a.py", "def test_a(): assert 1\n")
    assert changed != first
    assert commit("bot/core/a.py", "x = 2\n") not in (first, changed)
