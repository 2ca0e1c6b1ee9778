"""Insert-or-ignore that works the same on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession


def dialect_insert(session: AsyncSession, table: Any) -> Any:
    name = session.get_bind().dialect.name
    return (sqlite.insert if name == "sqlite" else postgresql.insert)(table)
