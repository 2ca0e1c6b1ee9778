"""The benches keep running (tiny sizes) and the boards return what the hand-written SQL
returns for every scope and period. Figures are the benches' business, not asserted here."""

from __future__ import annotations

import pytest

from tests.support.bench import bench

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants


def test_answers_bench_prints_its_floors_and_ratios() -> None:
    out = bench("bench.answers", "--db", "sqlite", "--members", "10", "--posts", "3")
    assert "floor: single-row INSERT+COMMIT through the same engine" in out
    assert "ratio answer path / same-engine floor, one at a time: " in out


def test_two_processes_record_every_click_exactly_once() -> None:
    out = bench("bench.answers", "--processes", "2", "--clicks", "60")
    assert "60 distinct clicks sent by each process, 60 recorded: exactly once" in out


@pytest.mark.postgres
def test_every_board_matches_the_hand_written_query(pg_url: str) -> None:
    out = bench("bench.leaderboard", "--db", "postgres", "--members", "60", "--answers", "4000",
                "--repeats", "2")
    boards = [line for line in out.splitlines() if "top-10" in line]
    assert len(boards) == 9 and all("hand-written" in line for line in boards), out
    assert "DIFFERENT RESULTS" not in out


@pytest.mark.postgres
def test_answers_bench_on_postgres_prints_both_floors_per_round(pg_url: str) -> None:
    out = bench("bench.answers", "--db", "postgres", "--members", "10", "--posts", "3")
    rounds = [line for line in out.splitlines() if line.startswith("[postgres] round ")]
    assert len(rounds) == 3 and all("its own click statement" in r and "minimal insert" in r for r in rounds), out
    assert "ratio answer path / its own click statement through asyncpg, 8 clients (median of 3 rounds): " in out
    assert "ratio answer path / the minimal hand-written insert through asyncpg, 8 clients (median): " in out
    assert "p99 with 8 clients: " in out
