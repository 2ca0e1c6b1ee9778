"""The Alembic migrations build exactly the schema the models describe, on both databases."""

from __future__ import annotations

import asyncio

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from bot.storage.db import Database, NotMigratedError, head_revision, migrate
from bot.storage.models import Base


def _diff(sync_conn) -> list:
    return compare_metadata(MigrationContext.configure(sync_conn), Base.metadata)


async def test_migrated_schema_matches_models(db: Database) -> None:
    async with db.engine.connect() as conn:
        diff = await conn.run_sync(_diff)
    assert diff == []
    assert await db.schema_revision() == head_revision()


async def test_unmigrated_database_is_refused_then_accepted(tmp_path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}"
    db = Database(url)
    with pytest.raises(NotMigratedError, match="torchdrill migrate"):
        await db.ensure_migrated()
    await asyncio.to_thread(migrate, url)
    await db.ensure_migrated()
    await db.dispose()


async def test_downgrade_and_upgrade_again_on_sqlite(tmp_path) -> None:
    from alembic import command

    from bot.storage.db import alembic_config

    url = f"sqlite+aiosqlite:///{tmp_path / 'cycle.db'}"
    await asyncio.to_thread(migrate, url)
    await asyncio.to_thread(command.downgrade, alembic_config(url), "base")
    db = Database(url)
    assert await db.schema_revision() is None
    await asyncio.to_thread(migrate, url)
    assert await db.schema_revision() == head_revision()
    await db.dispose()
