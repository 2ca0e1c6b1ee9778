"""Alembic environment: async engines, SQLite batch mode, our naming convention."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

from bot.storage.models import Base

config = context.config
target_metadata = Base.metadata
if config.config_file_name is not None and config.attributes.get("connection") is None:
    from logging.config import fileConfig

    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    """The ini's sqlalchemy.url, else DATABASE_URL (plain `alembic` from the checkout)."""
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from bot.config import get_settings

        url = get_settings().database_url
    if url.startswith("sqlite"):
        from bot.storage.db import _prepare_sqlite_file

        _prepare_sqlite_file(url)
    return url


def _configure(connection: Any) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url())
    async with engine.connect() as connection:
        await connection.run_sync(_configure)
    await engine.dispose()


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is not None:
        _configure(connectable)
        return
    asyncio.run(_run_async())


if context.is_offline_mode():
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
