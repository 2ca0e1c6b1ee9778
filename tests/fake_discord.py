"""A small local Discord: the REST routes and gateway events the adapter uses, nothing more.

The real discord.py client talks to it through DISCORD_API_BASE_URL / DISCORD_GATEWAY_URL.
Every REST request is recorded so tests assert on what Discord would have received. Like
Discord it drops a repeated message ``nonce`` sent with ``enforce_nonce`` (within a few
minutes), lists a channel's messages, and can be told to answer 429 (Retry-After) or 5xx, or
to create a message but hold its answer (the sender may die before it hears back).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.local_server import close_local, serve_local

API = "/api/v10"
DISCORD_EPOCH_MS = 1_420_070_400_000
EPHEMERAL = 64
LOADING = 128
MANAGE_GUILD = 1 << 5
MEMBER_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 31)  # view channel, send messages, use commands
ADMIN_PERMISSIONS = MEMBER_PERMISSIONS | MANAGE_GUILD
NONCE_WINDOW_S = 300  # Discord dedupes enforced nonces for a few minutes

# Interaction and callback types (Discord API)
PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE = 4, 5, 6, 7
AUTOCOMPLETE_RESULT, MODAL = 8, 9


@dataclass
class Request:
    method: str
    path: str  # relative to /api/v10, e.g. "/channels/3000/messages"
    query: dict[str, str]
    json: Any
    files: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass
class User:
    id: int
    name: str

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": self.name,
            "avatar": None,
            "bot": False,
        }


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


class FakeDiscord:
    app_id = 900_000_000_000_000_001
    guild_id = 900_000_000_000_000_002
    channel_id = 900_000_000_000_000_003
    token = "fake-bot-token"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.threads: dict[int, dict[str, Any]] = {}
        self.originals: dict[str, int] = {}  # interaction token -> original response message id
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" or guild id -> commands
        self.identifies: list[dict[str, Any]] = []
        self.nonces: dict[tuple[int, str], tuple[int, float]] = {}  # (channel, nonce) -> (id, t)
        self.failures: list[tuple[str, str, int, float, bool]] = []  # see fail()
        self.held_answers: dict[str, asyncio.Event] = {}  # path start -> answer once set
        self.accepted_unanswered: list[int] = []  # message ids created while an answer is held
        self.cdn: dict[str, bytes] = {}  # attachment id -> content, served on /cdn
        self.cdn_reads = 0
        self.dm_channels: dict[str, int] = {}  # user id -> direct-message channel id
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._query: dict[str, str] = {}
        self.port = 0
        self.bot = {
            "id": str(self.app_id),
            "username": "torchdrill",
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": True,
        }

    # ---- server lifecycle ----------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/cdn/{aid}/{name}", self._cdn)
        app.router.add_route("*", API + "/{tail:.*}", self._rest)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        await close_local(self._runner, self._sockets)

    @property
    def api_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def snowflake(self) -> int:
        return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) + next(self._ids)

    # ---- gateway -------------------------------------------------------------------------
    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            if frame["op"] == 1:  # heartbeat
                await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
            elif frame["op"] == 2:  # identify
                self.identifies.append(frame["d"])
                self._sockets.append(ws)
                await self._send(ws, "READY", self._ready(frame["d"]))
                await self._notify()
        if ws in self._sockets:
            self._sockets.remove(ws)
        return ws

    def _ready(self, identify: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {
            "v": 10,
            "user": self.bot,
            "guilds": [],
            "session_id": f"s{next(self._ids)}",
            "resume_gateway_url": self.gateway_url,
            "private_channels": [],
            "application": {"id": str(self.app_id), "flags": 0},
        }
        if "shard" in identify:
            data["shard"] = identify["shard"]
        return data

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        await ws.send_json({"op": 0, "t": event, "s": next(self._seq), "d": data})

    async def connected(self, timeout: float = 5) -> None:
        await self.wait_until(lambda: bool(self._sockets), timeout)

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        if not self._sockets:
            raise RuntimeError("no bot is connected to the fake gateway")
        await self._send(self._sockets[-1], event, data)

    # ---- interactions --------------------------------------------------------------------
    def member(self, user: User, *, admin: bool = False) -> dict[str, Any]:
        return {
            "user": user.payload(),
            "roles": [],
            "joined_at": iso_now(),
            "deaf": False,
            "mute": False,
            "nick": None,
            "flags": 0,
            "permissions": str(ADMIN_PERMISSIONS if admin else MEMBER_PERMISSIONS),
        }

    def channel_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.channel_id),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": "pytorch-study",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    async def interact(
        self,
        kind: int,
        data: dict[str, Any],
        user: User,
        *,
        admin: bool = False,
        message: dict[str, Any] | None = None,
    ) -> str:
        """Send INTERACTION_CREATE like Discord does; returns the interaction token."""
        interaction_id = self.snowflake()
        token = f"itoken-{interaction_id}"
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.app_id),
            "type": kind,
            "data": data,
            "guild_id": str(self.guild_id),
            "channel_id": str(self.channel_id),
            "channel": self.channel_payload(),
            "member": self.member(user, admin=admin),
            "token": token,
            "version": 1,
            "app_permissions": str(ADMIN_PERMISSIONS),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(self.guild_id)},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def slash(
        self, name: str, user: User, /, *, admin: bool = False, sub: str | None = None,
        **options: Any,
    ) -> str:
        """A slash command; an option given as ``FileOption`` is an attachment Discord hosts on
        its CDN (here: this server's /cdn route) and names in ``resolved.attachments``."""
        resolved: dict[str, Any] = {}
        opts = []
        for k, v in options.items():
            if isinstance(v, FileOption):
                aid = str(self.snowflake())
                self.cdn[aid] = v.content
                resolved[aid] = {"id": aid, "filename": v.filename, "size": len(v.content),
                                 "url": f"http://127.0.0.1:{self.port}/cdn/{aid}/{v.filename}",
                                 "proxy_url": f"http://127.0.0.1:{self.port}/cdn/{aid}/{v.filename}",
                                 "content_type": "text/yaml"}
                opts.append({"name": k, "type": 11, "value": aid})
            else:
                opts.append({"name": k, "type": _option_type(v), "value": v})
        if sub is not None:
            opts = [{"name": sub, "type": 1, "options": opts}]
        data: dict[str, Any] = {"id": str(self.snowflake()), "name": name, "type": 1, "options": opts}
        if resolved:
            data["resolved"] = {"attachments": resolved}
        return await self.interact(APPLICATION_COMMAND, data, user, admin=admin)

    async def _cdn(self, request: web.Request) -> web.Response:
        content = self.cdn.get(request.match_info["aid"])
        if content is None:
            return web.Response(status=404)
        self.cdn_reads += 1
        return web.Response(body=content, content_type="application/octet-stream")

    async def autocomplete(self, name: str, user: User, focused: str, **options: Any) -> str:
        """The member is typing option ``focused``; the other options are already filled."""
        opts = [
            {
                "name": k,
                "type": _option_type(v),
                "value": v,
                **({"focused": True} if k == focused else {}),
            }
            for k, v in options.items()
        ]
        data = {"id": str(self.snowflake()), "name": name, "type": 1, "options": opts}
        return await self.interact(AUTOCOMPLETE, data, user)

    async def click(self, message_id: int, custom_id: str, user: User) -> str:
        data = {"custom_id": custom_id, "component_type": 2}
        return await self.interact(MESSAGE_COMPONENT, data, user, message=self.messages[message_id])

    async def message_command(self, name: str, target: dict[str, Any], user: User) -> str:
        data = {
            "id": str(self.snowflake()),
            "name": name,
            "type": 3,
            "target_id": target["id"],
            "resolved": {"messages": {target["id"]: target}},
        }
        return await self.interact(APPLICATION_COMMAND, data, user)

    async def submit_modal(self, modal: dict[str, Any], values: dict[str, str], user: User) -> str:
        """Answer a modal the bot opened, filling its text inputs by custom_id."""
        rows = []
        for row in modal["components"]:
            inputs = row["components"] if row["type"] == 1 else [row["component"]]
            filled = [
                {"type": 4, "custom_id": c["custom_id"], "value": values[c["custom_id"]]}
                for c in inputs
            ]
            rows.append(
                {"type": 1, "components": filled}
                if row["type"] == 1
                else {"type": row["type"], "component": filled[0]}
            )
        data = {"custom_id": modal["custom_id"], "components": rows}
        return await self.interact(MODAL_SUBMIT, data, user)

    # ---- assertions helpers --------------------------------------------------------------
    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, predicate: Callable[[], Any], timeout: float = 5) -> Any:
        async def check() -> Any:
            async with self._changed:
                while not (result := predicate()):
                    await self._changed.wait()
                return result

        return await asyncio.wait_for(check(), timeout)

    async def wait_for(
        self,
        method: str,
        path_start: str,
        match: Callable[[Request], bool] = lambda r: True,
        *,
        timeout: float = 5,
    ) -> Request:
        def found() -> Request | None:
            for r in self.requests:
                if r.method == method and r.path.startswith(path_start) and match(r):
                    return r
            return None

        return await self.wait_until(found, timeout)

    def sent(self, method: str, path_start: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_start)]

    async def callback_of(self, token: str, timeout: float = 5) -> Request:
        return await self.wait_for(
            "POST", "/interactions/", lambda r: r.path.split("/")[3] == token, timeout=timeout
        )

    async def original_of(self, token: str, timeout: float = 5) -> dict[str, Any]:
        """The original response once the bot filled it (no longer 'thinking')."""

        def done() -> dict[str, Any] | None:
            mid = self.originals.get(token)
            msg = self.messages.get(mid) if mid else None
            return msg if msg and not msg["flags"] & LOADING else None

        return await self.wait_until(done, timeout)

    # ---- REST ----------------------------------------------------------------------------
    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = request.path[len(API) :]
        body, files = await _read_body(request)
        self._query = dict(request.query)  # read by _route before its first await
        self.requests.append(Request(request.method, path, dict(request.query), body, files))
        bot_route = not path.startswith(("/interactions/", "/webhooks/"))
        if bot_route and request.headers.get("Authorization") != f"Bot {self.token}":
            await self._notify()
            return _error(401, 0, "401: Unauthorized")
        if failure := self._failure(request.method, path):
            await self._notify()
            return failure
        try:
            response = await self._route(request.method, path.strip("/").split("/"), body, files)
            if late := self._failure(request.method, path, after=True):
                return late  # done, but the answer says otherwise
            gate = next((g for start, g in self.held_answers.items() if path.startswith(start)), None)
            if gate is not None and request.method == "POST":
                self.accepted_unanswered.append(int(json.loads(response.body)["id"]))  # type: ignore[arg-type]
                await self._notify()
                await gate.wait()
            return response
        finally:
            await self._notify()

    def fail(
        self, method: str, path_start: str, status: int, retry_after: float = 0.0,
        *, after: bool = False,
    ) -> None:
        """Answer the next matching request with ``status`` (429 with ``retry_after``); with
        ``after`` the request takes effect first (a 5xx after Discord accepted it)."""
        self.failures.append((method, path_start, status, retry_after, after))

    def hold_answer(self, path_start: str) -> asyncio.Event:
        """Create messages posted under ``path_start`` at once; answer when the event is set."""
        self.held_answers[path_start] = asyncio.Event()
        return self.held_answers[path_start]

    def _failure(self, method: str, path: str, *, after: bool = False) -> web.Response | None:
        for i, (m, start, status, retry_after, late) in enumerate(self.failures):
            if m == method and path.startswith(start) and late == after:
                del self.failures[i]
                if status == 429:  # discord.py trusts a 429 only when it came through Discord's proxy
                    return web.Response(
                        body=json.dumps({"message": "You are being rate limited.",
                                         "retry_after": retry_after, "global": False}).encode(),
                        status=429,
                        headers={"Content-Type": "application/json", "Via": "1.1 google",
                                 "Retry-After": str(retry_after)},
                    )
                return _error(status, 0, f"{status}: Internal Server Error")
        return None

    async def _route(
        self, method: str, parts: list[str], body: Any, files: list[tuple[str, bytes]]
    ) -> web.StreamResponse:
        match (method, parts):
            case ("GET", ["gateway", "bot"]):
                return _json(
                    {
                        "url": self.gateway_url,
                        "shards": 1,
                        "session_start_limit": {
                            "total": 1000,
                            "remaining": 999,
                            "reset_after": 0,
                            "max_concurrency": 1,
                        },
                    }
                )
            case ("GET", ["gateway"]):
                return _json({"url": self.gateway_url})
            case ("GET", ["users", "@me"]):
                return _json(self.bot)
            case ("POST", ["users", "@me", "channels"]):
                return _json(self._open_dm(str(body["recipient_id"])))
            case ("GET", ["oauth2", "applications", "@me"]):
                return _json(self._application())
            case ("PUT", ["applications", _, "commands"]):
                return _json(self._store_commands("global", body))
            case ("PUT", ["applications", _, "guilds", guild, "commands"]):
                return _json(self._store_commands(guild, body))
            case ("POST", ["interactions", iid, token, "callback"]):
                return self._callback(iid, token, body, files)
            case (_, ["webhooks", _, token, "messages", which]):
                mid = self.originals.get(token) if which == "@original" else int(which)
                return self._message_op(method, mid, body, files)
            case ("POST", ["webhooks", _, token]):
                message = self._new_message(
                    self.channel_id, body, files, flags=body.get("flags", 0)
                )
                return _json(message)
            case ("POST", ["channels", channel, "messages"]):
                return _json(self._create_once(int(channel), body, files))
            case ("GET", ["channels", channel, "messages"]):
                return _json(self._history(int(channel), self._query))
            case ("POST", ["channels", channel, "messages", mid, "threads"]):
                return self._start_thread(int(channel), int(mid), body)
            case (_, ["channels", _, "messages", mid]):
                return self._message_op(method, int(mid), body, files)
        return _error(404, 0, f"fake Discord has no route {method} /{'/'.join(parts)}")

    def _application(self) -> dict[str, Any]:
        return {
            "id": str(self.app_id),
            "name": "torchdrill",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.bot,
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "summary": "",
            "interactions_endpoint_url": None,
        }

    def _store_commands(self, scope: str, body: list[dict[str, Any]]) -> list[dict[str, Any]]:
        stored = [
            {
                "description": "",
                **cmd,
                "id": str(self.snowflake()),
                "application_id": str(self.app_id),
                "version": "1",
                **({"guild_id": scope} if scope != "global" else {}),
            }
            for cmd in body
        ]
        self.commands[scope] = stored
        return stored

    def _callback(
        self, iid: str, token: str, body: dict[str, Any], files: list[tuple[str, bytes]]
    ) -> web.Response:
        kind = body["type"]
        data = body.get("data") or {}
        interaction = {"id": iid, "type": kind}
        resource: dict[str, Any] = {"type": kind}
        if kind in (CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE):
            flags = data.get("flags", 0) | (LOADING if kind == DEFERRED_CHANNEL_MESSAGE else 0)
            message = self._new_message(self.channel_id, data, files, flags=flags)
            self.originals[token] = int(message["id"])
            interaction.update(
                response_message_id=message["id"],
                response_message_loading=bool(flags & LOADING),
                response_message_ephemeral=bool(flags & EPHEMERAL),
            )
            resource["message"] = message
        return _json({"interaction": interaction, "resource": resource})

    def _create_once(
        self, channel_id: int, body: dict[str, Any], files: list[tuple[str, bytes]]
    ) -> dict[str, Any]:
        """An enforced nonce seen lately returns the message it created instead of a new one."""
        nonce = body.get("nonce")
        now = time.monotonic()
        if nonce is not None and body.get("enforce_nonce"):
            seen = self.nonces.get((channel_id, str(nonce)))
            if seen and now - seen[1] < NONCE_WINDOW_S and seen[0] in self.messages:
                return {**self.messages[seen[0]], "nonce": str(nonce)}
        message = self._new_message(channel_id, body, files)
        if nonce is not None:
            self.nonces[(channel_id, str(nonce))] = (int(message["id"]), now)
            return {**message, "nonce": str(nonce)}
        return message

    def _history(self, channel_id: int, query: dict[str, str]) -> list[dict[str, Any]]:
        """Like GET /channels/{id}/messages: newest first; ``after`` gives the oldest after it."""
        limit = min(int(query.get("limit", 50)), 100)
        found = sorted((m for m in self.in_channel(channel_id)), key=lambda m: int(m["id"]))
        if "after" in query:
            found = [m for m in found if int(m["id"]) > int(query["after"])][:limit]
        else:
            if "before" in query:
                found = [m for m in found if int(m["id"]) < int(query["before"])]
            found = found[-limit:]
        return list(reversed(found))

    def posts_of(self, post_id: int) -> list[dict[str, Any]]:
        """Channel messages whose buttons belong to post ``post_id``."""
        return [m for m in self.in_channel(self.channel_id)
                if any(b.get("custom_id", "").split(":")[2:3] == [str(post_id)]
                       for b in buttons_of(m))]

    def _new_message(
        self,
        channel_id: int,
        body: dict[str, Any],
        files: list[tuple[str, bytes]],
        *,
        flags: int = 0,
    ) -> dict[str, Any]:
        if channel_id not in (self.channel_id, *self.threads, *self.dm_channels.values()):
            raise web.HTTPNotFound(
                body=json.dumps({"code": 10003, "message": "Unknown Channel"}),
                headers={"Content-Type": "application/json"},
            )
        mid = self.snowflake()
        message = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "guild_id": str(self.guild_id),
            "type": 0,
            "author": self.bot,
            "content": body.get("content") or "",
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "attachments": _attachments(files),
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": False,
            "timestamp": iso_now(),
            "edited_timestamp": None,
            "flags": flags,
        }
        self.messages[mid] = message
        return message

    def _message_op(
        self, method: str, mid: int | None, body: Any, files: list[tuple[str, bytes]]
    ) -> web.Response:
        message = self.messages.get(mid) if mid is not None else None
        if message is None:
            return _error(404, 10008, "Unknown Message")
        if method == "DELETE":
            del self.messages[mid]  # type: ignore[arg-type]
            return web.Response(status=204)
        if method == "PATCH":
            for key in ("content", "embeds", "components"):
                if key in body:
                    message[key] = body[key] or ([] if key != "content" else "")
            if files or "attachments" in body:
                message["attachments"] = _attachments(files)
            message["flags"] &= ~LOADING
            message["edited_timestamp"] = iso_now()
        return _json(message)

    def _start_thread(self, channel_id: int, mid: int, body: dict[str, Any]) -> web.Response:
        if mid not in self.messages:
            return _error(404, 10008, "Unknown Message")
        if mid in self.threads:
            return _error(400, 160004, "A thread has already been created for this message")
        thread = {
            "id": str(mid),
            "type": 11,
            "guild_id": str(self.guild_id),
            "parent_id": str(channel_id),
            "owner_id": str(self.app_id),
            "name": body["name"],
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "message_count": 0,
            "member_count": 1,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "locked": False,
                "archive_timestamp": iso_now(),
                "auto_archive_duration": body.get("auto_archive_duration", 1440),
            },
        }
        self.threads[mid] = thread
        return _json(thread, status=201)

    def user_message(self, user: User, content: str) -> dict[str, Any]:
        """A message a member wrote in the channel (target of message commands)."""
        message = self._new_message(self.channel_id, {"content": content}, [])
        message["author"] = user.payload()
        return message

    def _open_dm(self, user_id: str) -> dict[str, Any]:
        """A direct-message channel with a member (one per member, as on Discord)."""
        channel_id = self.dm_channels.setdefault(user_id, self.snowflake())
        user = {"id": user_id, "username": f"user{user_id[-4:]}", "discriminator": "0",
                "global_name": None, "avatar": None, "bot": False}
        return {"id": str(channel_id), "type": 1, "recipients": [user], "last_message_id": None}

    def direct_messages(self, user: User) -> list[dict[str, Any]]:
        channel_id = self.dm_channels.get(str(user.id))
        return [] if channel_id is None else self.in_channel(channel_id)

    def in_channel(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.messages.values() if int(m["channel_id"]) == channel_id]


def text_of(message: dict[str, Any]) -> str:
    """Everything a reader sees in a message: content, embed titles, bodies and footers."""
    parts = [message.get("content") or ""]
    for embed in message.get("embeds") or []:
        parts += [
            embed.get("title") or "",
            embed.get("description") or "",
            (embed.get("footer") or {}).get("text") or "",
        ]
    return "\n".join(parts)


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for row in message.get("components") or [] for b in row["components"]]


@dataclass(frozen=True)
class FileOption:
    """An attachment a member adds to a slash command's file option."""

    filename: str
    content: bytes


def _option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    if isinstance(value, float):
        return 10
    return 3


def _attachments(files: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(i),
            "filename": name,
            "size": len(content),
            "url": f"https://cdn/{name}",
            "proxy_url": f"https://cdn/{name}",
        }
        for i, (name, content) in enumerate(files)
    ]


def _json(data: Any, status: int = 200) -> web.Response:
    """discord.py only parses bodies whose Content-Type is exactly application/json."""
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"code": code, "message": message}, status=status)


async def _read_body(request: web.Request) -> tuple[Any, list[tuple[str, bytes]]]:
    """JSON bodies, or multipart with ``payload_json`` plus ``files[n]`` parts, like Discord."""
    if request.content_type.startswith("multipart/"):
        payload: Any = {}
        files = []
        reader = await request.multipart()
        async for part in reader:
            if part.name == "payload_json":  # type: ignore[union-attr]
                payload = json.loads(await part.text())  # type: ignore[union-attr]
            else:
                files.append((part.filename or "", bytes(await part.read())))  # type: ignore[union-attr]
        return payload, files
    if request.can_read_body:
        raw = await request.read()
        return (json.loads(raw) if raw else {}), []
    return {}, []
