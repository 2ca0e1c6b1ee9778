"""Per-instance job uid ranges, claimed with a lock file so two runners never share one.

Slot N of an instance runs jobs as `range_start + N`. Sharing a uid between two runners
would let one's job signal the other's, so each instance holds an exclusive `flock` on
its range for as long as it lives; the lock goes with the process, even on a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

RANGE = 64  # uids per instance: more slots than any host has
SEARCH = 256  # ranges tried above the configured base


def lock_dir() -> Path:
    for candidate in (Path("/run/lock"), Path(tempfile.gettempdir())):
        if candidate.is_dir() and os.access(candidate, os.W_OK):
            return candidate / "torchdrill-runner-uids"
    return Path(tempfile.gettempdir()) / "torchdrill-runner-uids"


class UidRange:
    def __init__(self, start: int, fd: int | None) -> None:
        self.start = start
        self._fd = fd

    def uid(self, slot: int) -> int:
        if slot >= RANGE:
            raise ValueError(f"at most {RANGE} slots per runner instance")
        return self.start + slot

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def claim(base: int, directory: Path | None = None) -> UidRange:
    """The first free range at or above `base`; raises if all are taken."""
    folder = directory or lock_dir()
    folder.mkdir(mode=0o700, exist_ok=True)
    for i in range(SEARCH):
        start = base + i * RANGE
        fd = os.open(folder / f"{start}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidRange(start, fd)
    raise RuntimeError(f"no free job uid range above {base}: {SEARCH} runners hold them all")
