"""Migrations from the command line: up and down to any revision, base included, on both
databases, through `torchdrill migrate --revision` and through plain `alembic`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from bot.storage.db import Database, head_revision, migrate_to, revisions
from bot.storage.models import Base
from tests.conftest import PG_ADMIN_URL

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

REPO = Path(__file__).resolve().parents[2]


def _tables(sync_conn) -> set[str]:
    from sqlalchemy import inspect

    return set(inspect(sync_conn).get_table_names()) - {"alembic_version"}


def _diff(sync_conn) -> list:
    return compare_metadata(MigrationContext.configure(sync_conn), Base.metadata)


async def _state(url: str) -> tuple[str | None, set[str], list]:
    db = Database(url)
    try:
        async with db.engine.connect() as conn:
            return await db.schema_revision(), await conn.run_sync(_tables), await conn.run_sync(_diff)
    finally:
        await db.dispose()


async def _round_trip(url: str) -> None:
    first = await asyncio.to_thread(migrate_to, url, "head")
    assert (first.before, first.after, first.direction) == (None, head_revision(), "upgraded")
    revision, tables, diff = await _state(url)
    assert revision == head_revision() and diff == [] and "channel_scores" in tables
    for target in reversed(revisions()[:-1]):  # step down one by one, then to base
        done = await asyncio.to_thread(migrate_to, url, target)
        assert done.direction == "downgraded" and done.after == target
    down = await asyncio.to_thread(migrate_to, url, "base")
    assert down.after is None and down.direction == "downgraded"
    revision, tables, _ = await _state(url)
    assert revision is None and tables == set()
    again = await asyncio.to_thread(migrate_to, url, "head")
    assert again.direction == "upgraded"
    revision, _, diff = await _state(url)
    assert revision == head_revision() and diff == []
    same = await asyncio.to_thread(migrate_to, url, "head")
    assert same.direction == "unchanged"


async def test_round_trip_to_base_and_back_on_sqlite(tmp_path: Path) -> None:
    await _round_trip(f"sqlite+aiosqlite:///{tmp_path / 'trip.db'}")


@pytest.mark.postgres
async def test_round_trip_to_base_and_back_on_postgres(pg_url: str) -> None:
    name = f"torchdrill_mig_{uuid.uuid4().hex[:8]}"
    admin = Database(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    async with admin.engine.connect() as conn:
        await conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        await _round_trip(PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}")
    finally:
        async with admin.engine.connect() as conn:
            await conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.dispose()


def _run(args: list[str], url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url, "LOG_JSON": "0"}
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_cli_says_what_it_did_up_and_down(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    cli = [sys.executable, "-m", "bot.cli", "migrate"]
    up = _run(cli, url)
    assert up.returncode == 0 and f"from base to {head_revision()}" in up.stdout, up.stderr
    down = _run([*cli, "--revision", "base"], url)
    assert down.returncode == 0 and f"downgraded {url} from {head_revision()} to base" in down.stdout
    assert asyncio.run(_state(url))[0] is None
    bad = _run([*cli, "--revision", "nope"], url)
    assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
        f"unknown revision 'nope'; known: base, {', '.join(revisions())}, head"
    ]
    first = _run([*cli, "--revision", revisions()[0]], url)
    assert first.returncode == 0 and f"from base to {revisions()[0]}" in first.stdout


def test_plain_alembic_works_from_the_checkout(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'sub' / 'plain.db'}"
    alembic = [str(Path(sys.executable).with_name("alembic"))]
    up = _run([*alembic, "upgrade", "head"], url)
    assert up.returncode == 0, up.stderr
    assert asyncio.run(_state(url))[0] == head_revision()
    down = _run([*alembic, "downgrade", "base"], url)
    assert down.returncode == 0, down.stderr
    assert asyncio.run(_state(url))[0] is None
    current = _run([*alembic, "current"], url)
    assert current.returncode == 0 and "Traceback" not in current.stderr
