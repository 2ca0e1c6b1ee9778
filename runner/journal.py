"""A tiny sqlite3 record of unfinished jobs in embedded mode.

Why: the in-process queue dies with the bot. On the next start every job still listed
here is reported to its member as interrupted, with the reply_to needed to reach them.
sqlite3 (stdlib, synchronous) is enough: one short write per state change.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from runner.jobs import JobRequest


class Journal:
    def __init__(self, path: Path | str | None) -> None:
        self._db: sqlite3.Connection | None = None
        if path is not None:
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), isolation_level=None, timeout=10)
            self._db.execute("PRAGMA journal_mode=WAL")
            # a commit survives the process dying (what a restart needs), without an fsync on
            # the job's path; only a power cut can lose the last few, as with any WAL
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS runner_jobs (job_id TEXT PRIMARY KEY,"
                             " request TEXT NOT NULL, running INTEGER NOT NULL DEFAULT 0,"
                             " created REAL NOT NULL)")

    def add(self, job_id: str, request: JobRequest) -> None:
        if self._db:
            self._db.execute("INSERT OR REPLACE INTO runner_jobs VALUES (?, ?, 0, ?)",
                             (job_id, json.dumps(request.to_dict()), time.time()))

    def mark_running(self, job_id: str) -> None:
        if self._db:
            self._db.execute("UPDATE runner_jobs SET running = 1 WHERE job_id = ?", (job_id,))

    def remove(self, job_id: str) -> None:
        if self._db:
            self._db.execute("DELETE FROM runner_jobs WHERE job_id = ?", (job_id,))

    def leftovers(self) -> list[tuple[str, JobRequest, bool]]:
        """Jobs a previous process accepted but never finished: (id, request, was_running)."""
        if not self._db:
            return []
        rows = self._db.execute(
            "SELECT job_id, request, running FROM runner_jobs ORDER BY created").fetchall()
        return [(job_id, JobRequest.from_dict(json.loads(req)), bool(running))
                for job_id, req, running in rows]

    def close(self) -> None:
        if self._db:
            self._db.close()
            self._db = None
