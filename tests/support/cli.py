"""Running the `torchdrill` CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_cli(args: list[str], env: dict[str, str], timeout: float = 90) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("DISCORD_", "SLACK_", "DATABASE_", "LOG_", "REDIS_", "RUNNER_"))}
    env = {"RUNNER_BACKEND": "embedded", "HTTP_PORT": "0", "LOG_JSON": "0", **env}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], cwd=REPO, env={**base, **env},
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
