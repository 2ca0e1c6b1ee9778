"""Serving a fake platform: an aiohttp app on 127.0.0.1 at a free port."""

from __future__ import annotations

from aiohttp import web


async def serve_local(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]


async def close_local(runner: web.AppRunner | None, sockets: list[web.WebSocketResponse]) -> None:
    """Close open websockets first, so clients see a clean close, then stop the server."""
    for ws in list(sockets):
        await ws.close()
    if runner is not None:
        await runner.cleanup()
