"""`torchdrill serve` refuses bad set-ups with a message naming what to fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.storage.db import migrate

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

REPO = Path(__file__).resolve().parents[2]


def run_serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "serve"], cwd=REPO, env={**base, **env},
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def test_serve_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    result = run_serve({"DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'new.db'}"})
    assert result.returncode == 1
    assert "torchdrill migrate" in result.stderr and "Traceback" not in result.stderr


def test_serve_names_the_missing_slack_setting(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'ok.db'}"
    migrate(url)
    result = run_serve({"DATABASE_URL": url, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_MODE": "socket",
                        "RUNNER_BACKEND": "embedded", "HTTP_PORT": "0"})
    assert result.returncode == 1
    assert "SLACK_APP_TOKEN" in result.stderr and "Traceback" not in result.stderr
