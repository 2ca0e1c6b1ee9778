"""Runner settings, separate from the bot's so a GPU host needs nothing of the bot.

Environment variables share the bot's names (`RUNNER_TIMEOUT_S`, `REDIS_URL`, ...), so
one `.env` configures both sides.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from runner.jobs import Limits


class RunnerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RUNNER_", env_file=".env", populate_by_name=True,
                                      env_file_encoding="utf-8", extra="ignore")

    cpu_slots: int = 1
    gpus: list[int] | None = Field(default=None, description="GPU indexes to serve; None = all")
    max_code_bytes: int = 20_000
    timeout_s: float = 20.0
    cpu_time_s: int = 20
    memory_mb: int = 2048
    max_procs: int = 256
    file_size_mb: int = 16
    disk_mb: int = 64  # size of each sandbox's private /tmp
    output_cap_bytes: int = 1_000_000
    display_chars: int = 1500
    queue_cap: int = 50
    rate_per_minute: int = 5
    allow_weak_isolation: bool = False
    job_uid_base: int = 61000  # first uid range tried; each instance locks its own 64 uids
    instance: str | None = None  # names this runner's cgroup subtree; default: pid + random
    journal_path: Path = Path("data/runner-journal.sqlite3")
    warm: bool = True  # import torch once per slot and fork per job
    redis_url: str = Field(default="redis://127.0.0.1:6379/0",
                           validation_alias=AliasChoices("RUNNER_REDIS_URL", "REDIS_URL"))
    key_prefix: str = "torchdrill:runner"

    def limits(self) -> Limits:
        return Limits(timeout_s=self.timeout_s, cpu_time_s=self.cpu_time_s,
                      memory_mb=self.memory_mb, max_procs=self.max_procs,
                      file_size_mb=self.file_size_mb, output_cap_bytes=self.output_cap_bytes,
                      display_chars=self.display_chars)
