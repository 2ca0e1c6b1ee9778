"""Liveness, readiness and metrics over HTTP, for orchestrators and Prometheus.

`/healthz` answers while the event loop runs (restart me if not); `/readyz` runs the
dependency checks (send me traffic only if they pass); `/metrics` is the Prometheus text.
The same routes mount into the Slack HTTP-mode aiohttp app, so one port serves both.
Readiness never echoes exception messages (they can quote URLs); details go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from bot.observability.metrics import CONTENT_TYPE, render_latest

log = logging.getLogger(__name__)

Check = Callable[[], Awaitable[bool]]
CHECKS_KEY: web.AppKey[dict[str, Any]] = web.AppKey("torchdrill_health_checks", dict)


class Detail:
    """Facts shown under `details` in /readyz that never make it fail (e.g. which torch the
    runner serves); registered next to the checks. None means nothing to show yet."""

    def __init__(self, read: Callable[[], Mapping[str, Any] | None]) -> None:
        self.read = read
CHECK_TIMEOUT_S = 3.0


async def _healthz(_request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _run_check(name: str, check: Check) -> str:
    try:
        ok = await asyncio.wait_for(check(), CHECK_TIMEOUT_S)
    except TimeoutError:
        log.warning("readiness check timed out", extra={"check": name})
        return "timeout"
    except Exception as exc:
        log.warning("readiness check failed: %s", exc, extra={"check": name})
        return f"error: {type(exc).__name__}"
    return "ok" if ok else "failed"


def _details(entries: Mapping[str, Check | Detail]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    for name, entry in entries.items():
        if isinstance(entry, Detail):
            try:
                value = entry.read()
            except Exception as exc:
                log.warning("readiness detail failed: %s", exc, extra={"check": name})
                continue
            if value is not None:
                shown[name] = dict(value)
    return shown


async def _readyz(request: web.Request) -> web.Response:
    entries = request.app[CHECKS_KEY]
    checks = {n: c for n, c in entries.items() if not isinstance(c, Detail)}
    names = list(checks)
    results = await asyncio.gather(*(_run_check(n, checks[n]) for n in names))
    report = dict(zip(names, results, strict=True))
    failing = [n for n, r in report.items() if r != "ok"]
    body: dict[str, Any] = {"status": "ok" if not failing else "unavailable", "checks": report}
    if failing:
        body["failing"] = failing
    details = _details(entries)
    if details:
        body["details"] = details
    return web.json_response(body, status=503 if failing else 200)


async def _metrics(_request: web.Request) -> web.Response:
    response = web.Response(body=render_latest())
    response.headers["Content-Type"] = CONTENT_TYPE
    return response


def add_health_routes(app: web.Application, checks: Mapping[str, Check | Detail]) -> None:
    """Mount /healthz, /readyz and /metrics on an app that has not started yet."""
    app[CHECKS_KEY] = dict(checks)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)


def make_health_app(checks: Mapping[str, Check | Detail]) -> web.Application:
    """A stand-alone app for when nothing else (Slack HTTP mode) serves HTTP."""
    app = web.Application()
    add_health_routes(app, checks)
    return app


async def start_http(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve `app` in the running loop; stop with ``await runner.cleanup()``.

    Port 0 picks a free port; ``runner.addresses`` tells which.
    """
    runner = web.AppRunner(app, access_log=None)  # probes every few seconds would flood logs
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    return runner


def database_check(db: Any) -> Check:
    """`SELECT 1` through the bot's engine (a `bot.storage.db.Database`)."""
    from sqlalchemy import text

    async def check() -> bool:
        async with db.engine.connect() as conn:
            return (await conn.execute(text("SELECT 1"))).scalar_one() == 1

    return check


def schema_check(db: Any) -> Check:
    """Ready only on a database migrated to this code's head revision."""
    from bot.storage.db import head_revision

    async def check() -> bool:
        return await db.schema_revision() == head_revision()

    return check


def redis_check(url: str) -> Check:
    """PING on a short-lived connection (probes are rare; no pool to manage or leak)."""

    async def check() -> bool:
        from redis.asyncio import Redis

        client = Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            return bool(await client.ping())
        finally:
            await client.aclose()

    return check


def runner_detail(app: Any) -> Detail:
    """The torch, CUDA build and devices of the runner serving /run in this process (the
    embedded backend); absent while it starts, or when workers are other hosts."""

    def read() -> Mapping[str, Any] | None:
        desk = getattr(app, "runs", None)
        runtime = getattr(desk.runner, "runtime", None) if desk is not None else None
        return runtime.to_dict() if runtime is not None else None

    return Detail(read)


def posting_detail(read: Callable[[], Mapping[str, Any]]) -> Detail:
    """Scheduled posting in this process: queued and running posts, and the posts found late
    (posted past their time) or missed (not posted within the catch-up grace)."""
    return Detail(read)
