"""Set-up failures say one line naming what and where, and exit 1; logging is configured
before anything logs, so in JSON mode every stderr line is JSON."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.storage.db import migrate
from tests.support.cli import run_cli
from tests.support.pg_cluster import Cluster, needs_server_binaries, private_cluster

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

CLOSED = "127.0.0.1:1"  # nothing listens on port 1


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "╭" not in result.stderr, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    return lines[-1]


@pytest.fixture
def migrated(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'ok.db'}"
    migrate(url)
    return url


@pytest.mark.parametrize(("env", "line"), [
    ({"DATABASE_URL": "nonsense"}, "DATABASE_URL: use sqlite+aiosqlite:///path/to/file.db or "
     "postgresql+asyncpg://user:password@host/db (got 'nonsense')"),
    ({"EXTRA_BANKS": "banks/ours.yaml"}, """EXTRA_BANKS: not valid JSON, e.g. EXTRA_BANKS='["banks/ours.yaml"]'"""),
    ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL: use one of DEBUG, INFO, WARNING, ERROR, CRITICAL (got 'LOUD')"),
    ({"RUNNER_TIMEOUT_S": "abc"},
     "RUNNER_TIMEOUT_S: Input should be a valid number, unable to parse string as a number (got 'abc')"),
    ({"RUNNER_GPUS": "0,1"}, "RUNNER_GPUS: Input should be a valid list (got '0,1'), e.g. RUNNER_GPUS='[0, 1]'"),
])
def test_a_bad_setting_is_one_line_naming_the_variable(env: dict[str, str], line: str, migrated: str) -> None:
    play = ["play", "--db", migrated.removeprefix("sqlite+aiosqlite:///")]
    for args in (["serve"], *([play] if "DATABASE_URL" not in env else [])):  # play: --db
        result = run_cli(args, {"DATABASE_URL": migrated, **env})
        assert result.returncode == 1, result.stderr[-2000:]
        assert result.stderr.strip().splitlines() == [line]
    assert run_cli(["migrate"], {"DATABASE_URL": migrated, **env}).returncode == (
        0 if "RUNNER_" in next(iter(env)) else 1)  # migrate needs no runner settings


def test_closed_postgres_port() -> None:
    url = f"postgresql+asyncpg://postgres@{CLOSED}/test"
    result = run_cli(["serve"], {"DATABASE_URL": url})
    assert result.stderr.strip().splitlines() == [
        f"cannot use the database at {url}: [Errno 111] Connect call failed ('127.0.0.1', 1)"
    ]
    assert result.returncode == 1


@pytest.mark.postgres
def test_missing_postgres_database(pg_url: str) -> None:
    url = pg_url.rsplit("/", 1)[0] + "/no_such_database_here"
    line = one_line(run_cli(["serve"], {"DATABASE_URL": url}))
    assert line == f'cannot use the database at {url}: database "no_such_database_here" does not exist'


def test_sqlite_file_that_cannot_be_created() -> None:
    url = "sqlite+aiosqlite:////proc/no-such-dir/torchdrill.db"
    line = one_line(run_cli(["serve"], {"DATABASE_URL": url}))
    assert line.startswith(f"cannot use the database at {url}: ") and "/proc/no-such-dir" in line


@pytest.fixture
def locked_cluster() -> Iterator[Cluster]:
    yield from private_cluster(password="right-horse")


@needs_server_binaries
def test_wrong_postgres_password_is_named_and_never_printed(locked_cluster: Cluster) -> None:
    url = f"postgresql+asyncpg://postgres:wrong-battery@127.0.0.1:{locked_cluster.port}/postgres"
    result = run_cli(["serve"], {"DATABASE_URL": url})
    line = one_line(result)
    shown = f"postgresql+asyncpg://postgres:***@127.0.0.1:{locked_cluster.port}/postgres"
    assert line == f'cannot use the database at {shown}: password authentication failed for user "postgres"'
    assert "wrong-battery" not in result.stderr + result.stdout


def test_unreachable_discord_api(migrated: str) -> None:
    api = f"http://{CLOSED}/api/v10"
    result = run_cli(["serve"], {"DATABASE_URL": migrated, "DISCORD_TOKEN": "t0ken", "DISCORD_API_BASE_URL": api})
    assert one_line(result) == f"cannot reach the Discord API at {api}: [Errno 111] Connect call failed ('127.0.0.1', 1)"


SOCKET_MODE = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}


def test_unreachable_slack_api_in_socket_mode(migrated: str) -> None:
    """Socket Mode alone would retry for ever; the bot token's check says it in one line."""
    api = f"http://{CLOSED}/api/"
    result = run_cli(["serve"], {"DATABASE_URL": migrated, **SOCKET_MODE, "SLACK_API_BASE_URL": api})
    assert one_line(result) == f"cannot reach the Slack API at {api}: [Errno 111] Connect call failed ('127.0.0.1', 1)"


@pytest.fixture
def refusing_slack() -> Iterator[str]:
    """A Slack Web API that answers every call as Slack does for a revoked or wrong token."""

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"ok": False, "error": "invalid_auth"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/"
    server.shutdown()
    thread.join(timeout=10)


def test_refused_slack_token(migrated: str, refusing_slack: str) -> None:
    result = run_cli(["serve"], {"DATABASE_URL": migrated, **SOCKET_MODE, "SLACK_API_BASE_URL": refusing_slack})
    assert one_line(result) == "Slack refused SLACK_BOT_TOKEN: invalid_auth"
    assert "xoxb-1" not in result.stderr


def test_debug_keeps_the_traceback(migrated: str) -> None:
    url = f"postgresql+asyncpg://postgres@{CLOSED}/test"
    result = run_cli(["serve"], {"DATABASE_URL": url, "LOG_LEVEL": "DEBUG"})
    assert result.returncode == 1 and "Traceback" in result.stderr
    assert f"cannot use the database at {url}" in result.stderr


def test_worker_without_redis() -> None:
    result = run_cli(["runner", "worker", "--cpu-slots", "1", "--gpus", ""],
                     {"REDIS_URL": f"redis://{CLOSED}/0"})
    assert one_line(result) == f"cannot reach Redis at redis://{CLOSED}/0: [Errno 111] Connect call failed ('127.0.0.1', 1)"


def test_json_logs_from_the_first_line_with_a_bad_bank(migrated: str, tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    (content / "broken.yaml").write_text("id: broken\ntitle: [unclosed\n", encoding="utf-8")
    api = f"http://{CLOSED}/api/v10"
    result = run_cli(["serve"], {
        "DATABASE_URL": migrated, "CONTENT_DIR": str(content), "LOG_JSON": "1",
        "DISCORD_TOKEN": "t0ken", "DISCORD_API_BASE_URL": api,
    })
    assert result.returncode == 1
    records = [json.loads(line) for line in result.stderr.splitlines()]  # every line is JSON
    messages = [r["msg"] for r in records]
    assert any("broken.yaml" in m for m in messages), messages
    assert records[-1]["level"] == "ERROR" and records[-1]["msg"].startswith(f"cannot reach the Discord API at {api}")
