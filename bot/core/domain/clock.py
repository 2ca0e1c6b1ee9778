"""Time as a dependency, so rounds, reveals, weeks and DST are tested with a fake clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class FakeClock:
    """Starts at a given UTC instant.

    With ``auto=True`` (default) ``sleep`` jumps time forward at once. With ``auto=False`` a
    sleeper waits until a test moves time past its wake-up point with ``advance``/``set``.
    """

    def __init__(self, start: datetime, *, auto: bool = True) -> None:
        self._now = start if start.tzinfo else start.replace(tzinfo=UTC)
        self.auto = auto
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0, **delta: float) -> None:
        self.set(self._now + timedelta(seconds=seconds, **delta))

    def set(self, when: datetime) -> None:
        self._now = when
        for wake, fut in list(self._sleepers):
            if wake <= when and not fut.done():
                fut.set_result(None)
        self._sleepers = [(w, f) for w, f in self._sleepers if not f.done()]

    @property
    def sleepers(self) -> int:
        return len(self._sleepers)

    async def sleep(self, seconds: float) -> None:
        if self.auto:
            self.advance(seconds)
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self._now + timedelta(seconds=seconds), fut))
        await fut


def as_utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; everything we store is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
