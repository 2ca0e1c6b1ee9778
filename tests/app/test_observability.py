"""Logs never carry secrets or user code; metrics and health/readiness over real HTTP."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import REGISTRY as GLOBAL_REGISTRY
from pydantic import SecretStr

from bot.config import Settings
from bot.observability import health, logs, metrics
from bot.observability.health import (
    add_health_routes,
    database_check,
    make_health_app,
    redis_check,
    schema_check,
    start_http,
)
from bot.storage.db import Database
from tests.support.redis_runner import REDIS_URL

SLACK_BOT = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_APP = "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef"
DISCORD = "MTAyMzQ1Njc4OTAxMjM0NTY3OA.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
DB_PASSWORD = "s3cr3t-Pa55word"
DB_URL = f"postgresql+asyncpg://drill:{DB_PASSWORD}@db.internal:5432/torchdrill"
REQUIRE_SERVICES = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


def _capture(json_mode: bool | None, **kw: object) -> io.StringIO:
    stream = io.StringIO()
    logs.setup_logging("DEBUG", json_mode, stream=stream, **kw)  # type: ignore[arg-type]
    return stream


# ---------------------------------------------------------------- redaction


@pytest.mark.parametrize("secret", [SLACK_BOT, SLACK_APP, DISCORD, "xoxp-11-22-33-abcdefabcdef"])
def test_token_shapes_are_redacted(secret: str) -> None:
    out = logs.redact(f"calling with token={secret} now")
    assert secret not in out
    assert out == f"calling with token={logs.REDACTED} now"


def test_authorization_header_values_are_redacted() -> None:
    out = logs.redact("headers={'Authorization': 'Bot abc123def456ghi789jkl'} Bearer zzzzyyyyxxxxwwwwvvvv")
    assert "abc123def456ghi789jkl" not in out and "zzzzyyyyxxxxwwwwvvvv" not in out
    assert "Bot [REDACTED]" in out and "Bearer [REDACTED]" in out


def test_url_password_is_redacted_but_url_stays_readable() -> None:
    out = logs.redact(f"cannot connect to {DB_URL}: refused")
    assert DB_PASSWORD not in out
    assert "postgresql+asyncpg://drill:[REDACTED]@db.internal:5432/torchdrill" in out


def test_ordinary_text_is_left_alone() -> None:
    text = "user 42 answered q-17 in 3.2 s (torch.nn.functional.cross_entropy)"
    assert logs.redact(text) == text


def test_registered_secrets_from_settings(restore_logging: None) -> None:
    settings = Settings(
        _env_file=None, slack_signing_secret=SecretStr("plain-signing-secret-value"),
        discord_token=SecretStr(DISCORD), database_url=DB_URL,
        redis_url="redis://:redis-pass-123@cache:6379/0",
    )
    logs.register_settings_secrets(settings)
    out = logs.redact("signing plain-signing-secret-value, redis-pass-123 reused elsewhere")
    assert "plain-signing-secret-value" not in out and "redis-pass-123" not in out
    assert out.count(logs.REDACTED) == 2


# ---------------------------------------------------------------- log output


def test_json_lines_have_fields_and_no_secrets(restore_logging: None) -> None:
    settings = Settings(_env_file=None, slack_bot_token=SecretStr(SLACK_BOT), database_url=DB_URL)
    stream = _capture(True, settings=settings)
    log = logging.getLogger("torchdrill.test")
    log.info("connecting to %s", DB_URL, extra={"guild": "g1", "attempt": 2})
    log.warning("slack said no for %s", SLACK_BOT, extra={"headers": {"Authorization": f"Bearer {SLACK_BOT}"}})
    try:
        raise RuntimeError(f"login failed for {DISCORD} at {DB_URL}")
    except RuntimeError:
        log.exception("gateway error")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    entries = [json.loads(line) for line in lines]  # every line is valid JSON
    first = entries[0]
    assert {"ts", "level", "logger", "msg"} <= set(first)
    assert first["level"] == "INFO" and first["logger"] == "torchdrill.test"
    assert first["guild"] == "g1" and first["attempt"] == 2
    assert first["msg"].startswith("connecting to postgresql+asyncpg://drill:[REDACTED]@")
    assert entries[1]["headers"] == {"Authorization": "Bearer [REDACTED]"}
    assert "RuntimeError" in entries[2]["exc"]
    everything = stream.getvalue()
    for secret in (SLACK_BOT, DISCORD, DB_PASSWORD):
        assert secret not in everything


def test_user_code_is_logged_only_as_a_fingerprint(restore_logging: None) -> None:
    code = "import torch\nAPI_KEY = 'my-own-key'\nprint(torch.ones(3))\n"
    stream = _capture(True)
    logging.getLogger("torchdrill.runner").info("job queued", extra={"code": code, "job": "j1"})
    entry = json.loads(stream.getvalue())
    assert "my-own-key" not in stream.getvalue() and "torch.ones" not in stream.getvalue()
    digest = hashlib.sha256(code.encode()).hexdigest()[:12]
    assert entry["code"] == f"<code {len(code)} chars sha256:{digest}>"
    assert entry["job"] == "j1"


def test_text_mode_is_readable_and_redacted(restore_logging: None) -> None:
    stream = _capture(False)
    logging.getLogger("torchdrill.test").info("token %s", SLACK_APP, extra={"channel": "c1"})
    line = stream.getvalue().strip()
    assert SLACK_APP not in line
    assert "INFO" in line and "torchdrill.test: token [REDACTED]" in line and "channel=c1" in line
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_default_format_follows_the_terminal(restore_logging: None) -> None:
    piped = io.StringIO()
    logs.setup_logging("INFO", None, stream=piped)
    logging.getLogger("x").info("hello")
    assert json.loads(piped.getvalue())["msg"] == "hello"
    tty = _Tty()
    logs.setup_logging("INFO", None, stream=tty)
    logging.getLogger("x").info("hello")
    assert not tty.getvalue().startswith("{") and "x: hello" in tty.getvalue()
    assert piped.getvalue().count("hello") == 1  # the old handler was replaced, not stacked


def test_bad_format_arguments_do_not_lose_the_record() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "two %s %s", ("only-one",), None)
    assert logs.RedactingFilter().filter(record) is True
    entry = json.loads(logs.JsonFormatter().format(record))
    assert "only-one" in entry["msg"] and "two %s %s" in entry["msg"]


# ---------------------------------------------------------------- metrics


def _sample(name: str, labels: dict[str, str]) -> float:
    value = metrics.REGISTRY.get_sample_value(name, labels)
    return value or 0.0


def test_metrics_live_in_their_own_registry() -> None:
    names = {m.name for m in metrics.REGISTRY.collect()}
    assert {"torchdrill_answers_recorded", "torchdrill_interaction_seconds",
            "torchdrill_runner_queue_depth", "torchdrill_runner_job_seconds",
            "torchdrill_sandbox_failures"} <= names
    assert GLOBAL_REGISTRY.get_sample_value("torchdrill_runner_queue_depth") is None


def test_observe_interaction_times_success_and_failure() -> None:
    labels = {"platform": "console", "kind": "answer"}
    before = _sample("torchdrill_interaction_seconds_count", labels)
    with metrics.observe_interaction("console", "answer"):
        pass
    with pytest.raises(ValueError), metrics.observe_interaction("console", "answer"):
        raise ValueError("slow failure")
    assert _sample("torchdrill_interaction_seconds_count", labels) == before + 2


def test_render_latest_exposes_recorded_values() -> None:
    metrics.ANSWERS_RECORDED.labels(platform="slack").inc()
    metrics.RUNNER_QUEUE_DEPTH.set(7)
    metrics.RUNNER_JOB_SECONDS.labels(state="done", device="cuda:0").observe(1.5)
    metrics.SANDBOX_FAILURES.labels(reason="oom").inc()
    text = metrics.render_latest().decode()
    assert 'torchdrill_answers_recorded_total{platform="slack"}' in text
    assert "torchdrill_runner_queue_depth 7.0" in text
    assert 'torchdrill_runner_job_seconds_bucket{device="cuda:0",le="2.0",state="done"}' in text
    assert 'torchdrill_sandbox_failures_total{reason="oom"}' in text


# ---------------------------------------------------------------- health over HTTP


async def _ok() -> bool:
    return True


async def _down() -> bool:
    return False


async def _leaky() -> bool:
    raise ConnectionError(f"could not reach {DB_URL}")


@pytest.fixture
async def serve() -> AsyncIterator:
    runners: list[web.AppRunner] = []

    async def _serve(app: web.Application) -> str:
        runner = await start_http(app, "127.0.0.1", 0)
        runners.append(runner)
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    yield _serve
    for runner in runners:
        await runner.cleanup()


async def _get(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


async def test_healthz_and_readyz_when_all_checks_pass(serve) -> None:
    base = await serve(make_health_app({"database": _ok, "redis": _ok}))
    status, _, body = await _get(base + "/healthz")
    assert status == 200 and json.loads(body) == {"status": "ok"}
    status, _, body = await _get(base + "/readyz")
    assert status == 200
    assert json.loads(body) == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}


async def test_readyz_names_failing_checks_without_leaking_details(serve, restore_logging: None) -> None:
    stream = _capture(True)
    base = await serve(make_health_app({"database": _leaky, "redis": _down, "schema": _ok}))
    status, _, body = await _get(base + "/readyz")
    assert status == 503
    report = json.loads(body)
    assert report["failing"] == ["database", "redis"]
    assert report["checks"] == {"database": "error: ConnectionError", "redis": "failed", "schema": "ok"}
    assert DB_PASSWORD not in body
    logged = [json.loads(line) for line in stream.getvalue().splitlines()]
    failure = next(e for e in logged if e.get("check") == "database")
    assert "db.internal" in failure["msg"] and DB_PASSWORD not in stream.getvalue()


async def test_readyz_times_out_a_hanging_check(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "CHECK_TIMEOUT_S", 0.2)

    async def hang() -> bool:
        await asyncio.sleep(30)
        return True

    base = await serve(make_health_app({"redis": hang}))
    status, _, body = await _get(base + "/readyz")
    assert status == 503 and json.loads(body)["checks"] == {"redis": "timeout"}


async def test_metrics_endpoint_serves_prometheus_text(serve) -> None:
    metrics.ANSWERS_RECORDED.labels(platform="discord").inc()
    base = await serve(make_health_app({}))
    status, content_type, body = await _get(base + "/metrics")
    assert status == 200 and content_type.startswith("text/plain")
    assert 'torchdrill_answers_recorded_total{platform="discord"}' in body


async def test_routes_mount_into_an_existing_app(serve) -> None:
    async def events(_request: web.Request) -> web.Response:
        return web.Response(text="slack events")

    app = web.Application()
    app.router.add_post("/slack/events", events)
    add_health_routes(app, {"database": _ok})
    base = await serve(app)
    assert (await _get(base + "/readyz"))[0] == 200
    async with aiohttp.ClientSession() as session, session.post(base + "/slack/events") as r:
        assert await r.text() == "slack events"


async def test_database_and_schema_checks_on_real_sqlite(tmp_path: Path, sqlite_template: Path) -> None:
    empty = Database(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    migrated_path = tmp_path / "migrated.db"
    shutil.copy(sqlite_template, migrated_path)
    migrated = Database(f"sqlite+aiosqlite:///{migrated_path}")
    try:
        assert await database_check(empty)() is True
        assert await schema_check(empty)() is False
        assert await schema_check(migrated)() is True
    finally:
        await empty.dispose()
        await migrated.dispose()


async def test_database_check_fails_when_the_server_is_down() -> None:
    db = Database("postgresql+asyncpg://postgres:pw@127.0.0.1:1/none")
    try:
        with pytest.raises(OSError):
            await database_check(db)()
    finally:
        await db.dispose()


@pytest.mark.redis
async def test_redis_check_against_real_redis() -> None:
    try:
        ok = await redis_check(REDIS_URL)()
    except Exception as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")
    assert ok is True
    from redis.exceptions import ConnectionError as RedisConnectionError

    with pytest.raises(RedisConnectionError):
        await redis_check("redis://127.0.0.1:1/0")()


async def test_container_probe_exit_codes(serve) -> None:
    base = await serve(make_health_app({}))
    port = base.rsplit(":", 1)[1]

    def probe(port: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HTTP_PORT": port}
        return subprocess.run([sys.executable, "-m", "bot.observability.probe"], env=env,
                              capture_output=True, text=True, timeout=30, check=False)

    healthy = await asyncio.to_thread(probe, port)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    down = await asyncio.to_thread(probe, "1")
    assert down.returncode == 1 and "unhealthy" in down.stdout
