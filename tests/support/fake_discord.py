"""A small local Discord: the REST routes and gateway events the adapter uses, nothing more.

The real discord.py client talks to it through DISCORD_API_BASE_URL / DISCORD_GATEWAY_URL.
Every REST request is recorded so tests assert on what Discord would have received. Like
Discord it drops a repeated message ``nonce`` sent with ``enforce_nonce`` (within a few
minutes), lists a channel's messages, and can be told to answer 429 (Retry-After) or 5xx, or
to create a message but hold its answer (the sender may die before it hears back).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.local_server import close_local, serve_local

API = "/api/v10"
DISCORD_EPOCH_MS = 1_420_070_400_000
EPHEMERAL = 64
LOADING = 128
MANAGE_GUILD = 1 << 5
MANAGE_ROLES = 1 << 28
MEMBER_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 31)  # view channel, send messages, use commands
ADMIN_PERMISSIONS = MEMBER_PERMISSIONS | MANAGE_GUILD
NONCE_WINDOW_S = 300  # Discord dedupes enforced nonces for a few minutes
# Discord's rate limits: 50 requests/s per bot across routes (interactions and webhooks apart),
# and per-route buckets per channel, answered with 429 + retry_after and X-RateLimit-* headers.
GLOBAL_PER_S = 50
ROUTE_LIMITS: dict[str, tuple[int, float]] = {  # bucket -> (requests, per seconds)
    "message-create": (5, 5.0), "message-edit": (5, 5.0), "message-delete": (5, 1.0),
    "history": (5, 5.0), "thread-create": (5, 5.0),
}

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


@dataclass(frozen=True)
class Place:
    """Where an interaction happens: its server (None in a DM), channel, the integration
    owners that authorised it ({"0": guild} for a server install, {"1": user} for a user
    install) and Discord's context (0 guild, 1 DM with the bot, 2 group chat or other DM)."""

    guild_id: int | None
    channel_id: int
    owners: dict[str, str]
    context: int


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
        # guild roles as Discord enforces them: the bot needs Manage Roles and may only manage
        # roles below its own highest role; otherwise 403 Missing Permissions (code 50013)
        self.roles: dict[int, dict[str, Any]] = {}  # role id -> {"id", "name", "position"}
        self.member_roles: dict[int, set[int]] = {}  # user id -> role ids
        self.bot_manage_roles = True
        self.bot_top_position = 10
        self.interaction_channels: dict[str, int] = {}  # interaction token -> its channel
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._query: dict[str, str] = {}
        self.port = 0
        self.channels = {self.channel_id}  # text channels of the guild (tests add more)
        self.global_per_s = GLOBAL_PER_S  # tests may raise it; the default is Discord's
        self.route_limits = dict(ROUTE_LIMITS)
        self.throttled: list[tuple[str, str, bool]] = []  # 429s answered: (method, path, global)
        self._recent: collections.deque[float] = collections.deque()  # bot requests, last second
        self._buckets: dict[tuple[str, str], list[float]] = {}  # (bucket, channel) -> [used, reset]
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
        place: Place | None = None,
    ) -> str:
        """Send INTERACTION_CREATE like Discord does; returns the interaction token.

        ``place``: where a member used the app as their own (a user install), e.g. a server
        that has not added the bot: the payload names the member as the authorizing owner."""
        interaction_id = self.snowflake()
        token = f"itoken-{interaction_id}"
        place = place or Place(self.guild_id, self.channel_id, {"0": str(self.guild_id)}, 0)
        self.interaction_channels[token] = place.channel_id
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.app_id),
            "type": kind,
            "data": data,
            "channel_id": str(place.channel_id),
            "channel": {**self.channel_payload(), "id": str(place.channel_id),
                        **({"guild_id": str(place.guild_id)} if place.guild_id else
                           {"type": 1 if place.context == 1 else 3, "recipients": [user.payload()]})},
            "token": token,
            "version": 1,
            "app_permissions": str(ADMIN_PERMISSIONS),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": place.owners,
            "context": place.context,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if place.guild_id is not None:
            payload["guild_id"] = str(place.guild_id)
            payload["member"] = self.member(user, admin=admin)
        else:
            payload["user"] = user.payload()
        if message is not None:
            payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def slash(
        self, name: str, user: User, /, *, admin: bool = False, sub: str | None = None,
        place: Place | None = None, **options: Any,
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
        return await self.interact(APPLICATION_COMMAND, data, user, admin=admin, place=place)

    def user_install_in(self, user: User, guild_id: int, channel_id: int) -> Place:
        """A server that has not added the bot, where ``user`` installed the app to their
        account: the bot cannot see or post in ``channel_id`` (it is not one of its channels)."""
        return Place(guild_id, channel_id, {"1": str(user.id)}, 0)

    def user_install_dm(self, user: User) -> Place:
        """The member's DM with the bot, through their user install."""
        channel = self.dm_channels.setdefault(str(user.id), self.snowflake())
        return Place(None, channel, {"1": str(user.id)}, 1)

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

    async def click(self, message_id: int, custom_id: str, user: User, place: Place | None = None) -> str:
        data = {"custom_id": custom_id, "component_type": 2}
        return await self.interact(MESSAGE_COMPONENT, data, user, message=self.messages[message_id],
                                   place=place)

    async def message_command(self, name: str, target: dict[str, Any], user: User, *,
                              admin: bool = False) -> str:
        data = {
            "id": str(self.snowflake()),
            "name": name,
            "type": 3,
            "target_id": target["id"],
            "resolved": {"messages": {target["id"]: target}},
        }
        return await self.interact(APPLICATION_COMMAND, data, user, admin=admin)

    async def submit_modal(self, modal: dict[str, Any], values: dict[str, str], user: User,
                           place: Place | None = None) -> str:
        """Answer a modal the bot opened, by custom_id: a text input gets its value (an optional
        one left out is sent empty, as Discord does), a select menu (in a label) the option
        picked. Like Discord's client, it refuses what a member could not submit: a value over
        a box's max_length, a pick that is not one of the menu's options, a required field left
        empty."""
        rows = []
        for row in modal["components"]:
            inputs = row["components"] if row["type"] == 1 else [row["component"]]
            filled = [self._filled(c, values) for c in inputs]
            rows.append(
                {"type": 1, "components": filled}
                if row["type"] == 1
                else {"type": row["type"], "component": filled[0]}
            )
        data = {"custom_id": modal["custom_id"], "components": rows}
        return await self.interact(MODAL_SUBMIT, data, user, place=place)

    @staticmethod
    def _filled(component: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        cid = component["custom_id"]
        value = values.get(cid)
        if value is None and component.get("required", True):
            raise AssertionError(f"Discord would not submit the modal without {cid}")
        if component["type"] == 3:  # a string select
            offered = [o["value"] for o in component["options"]]
            if value is not None and value not in offered:
                raise AssertionError(f"{value!r} is not an option of {cid}: {offered}")
            return {"type": 3, "custom_id": cid, "values": [] if value is None else [value]}
        value = value or ""
        if len(value) > component.get("max_length", 4000):
            raise AssertionError(f"Discord caps {cid} at {component.get('max_length')} characters")
        return {"type": 4, "custom_id": cid, "value": value}

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
        limits: dict[str, str] = {}
        if bot_route:
            throttled, limits = self._rate_limit(request.method, path.strip("/").split("/"))
            if throttled is not None:
                self.throttled.append((request.method, path, "X-RateLimit-Global" in throttled.headers))
                await self._notify()
                return throttled
        if failure := self._failure(request.method, path):
            await self._notify()
            return failure
        try:
            response = await self._route(request.method, path.strip("/").split("/"), body, files)
            response.headers.update(limits)
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

    def _rate_limit(self, method: str, parts: list[str]) -> tuple[web.Response | None, dict[str, str]]:
        """(a 429, or None and the route's X-RateLimit-* headers) for one bot request."""
        now = time.monotonic()
        while self._recent and now - self._recent[0] >= 1.0:
            self._recent.popleft()
        if len(self._recent) >= self.global_per_s:
            wait = 1.0 - (now - self._recent[0])
            return _too_many(wait, {"X-RateLimit-Global": "true", "X-RateLimit-Scope": "global"},
                             is_global=True), {}
        bucket = _bucket_of(method, parts)
        headers: dict[str, str] = {}
        if bucket is not None and bucket[0] in self.route_limits:
            limit, per = self.route_limits[bucket[0]]
            state = self._buckets.setdefault(bucket, [0.0, now + per])
            if now >= state[1]:
                state[:] = [0.0, now + per]
            reset_after = state[1] - now
            headers = {"X-RateLimit-Limit": str(limit), "X-RateLimit-Bucket": f"fake-{bucket[0]}",
                       "X-RateLimit-Reset-After": f"{reset_after:.3f}",
                       "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}"}
            if state[0] >= limit:
                headers |= {"X-RateLimit-Remaining": "0", "X-RateLimit-Scope": "user"}
                return _too_many(reset_after, headers, is_global=False), {}
            state[0] += 1
            headers["X-RateLimit-Remaining"] = str(int(limit - state[0]))
        self._recent.append(now)
        return None, headers

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
                    self.interaction_channels.get(token, self.channel_id), body, files,
                    flags=body.get("flags", 0), response=True,
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
            case ("PUT" | "DELETE", ["guilds", guild, "members", user, "roles", role]):
                return self._member_role(method, int(guild), int(user), int(role))
            case ("GET", ["guilds", guild, "roles"]) if int(guild) == self.guild_id:
                return _json(self.guild_roles())
            case ("GET", ["guilds", guild, "members", user]) if int(guild) == self.guild_id:
                if user != str(self.app_id):
                    return _error(404, 10007, "Unknown Member")
                return _json({"user": self.bot, "roles": [str(self.bot_role_id)],
                              "joined_at": iso_now(), "deaf": False, "mute": False, "flags": 0})
        return _error(404, 0, f"fake Discord has no route {method} /{'/'.join(parts)}")

    @property
    def bot_role_id(self) -> int:
        """The bot's managed role, which Discord creates when the bot joins."""
        return self.guild_id + 1

    def guild_roles(self) -> list[dict[str, Any]]:
        """GET /guilds/{g}/roles as Discord answers it: @everyone (the guild's id), the bot's
        role at ``bot_top_position`` (Manage Roles while ``bot_manage_roles``), the tests' roles."""
        def role(role_id: int, name: str, position: int, permissions: int) -> dict[str, Any]:
            return {"id": str(role_id), "name": name, "position": position,
                    "permissions": str(permissions), "color": 0, "hoist": False, "managed": False,
                    "mentionable": False, "flags": 0}
        return [role(self.guild_id, "@everyone", 0, MEMBER_PERMISSIONS),
                role(self.bot_role_id, "torchdrill", self.bot_top_position,
                     MEMBER_PERMISSIONS | (MANAGE_ROLES if self.bot_manage_roles else 0)),
                *(role(int(r["id"]), r["name"], r["position"], 0) for r in self.roles.values())]

    def add_role(self, name: str, position: int) -> int:
        """A role of the guild; ``position`` above ``bot_top_position`` is out of the bot's reach."""
        role_id = self.snowflake()
        self.roles[role_id] = {"id": str(role_id), "name": name, "position": position}
        return role_id

    def _member_role(self, method: str, guild: int, user: int, role: int) -> web.Response:
        """PUT/DELETE /guilds/{g}/members/{u}/roles/{r}: 204, idempotent, as Discord answers."""
        if guild != self.guild_id or role not in self.roles:
            return _error(404, 10011, "Unknown Role")
        if not self.bot_manage_roles or self.roles[role]["position"] >= self.bot_top_position:
            return _error(403, 50013, "Missing Permissions")
        held = self.member_roles.setdefault(user, set())
        if method == "PUT":
            held.add(role)
        else:
            held.discard(role)
        return web.Response(status=204)

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
            channel = self.interaction_channels.get(token, self.channel_id)
            message = self._new_message(channel, data, files, flags=flags, response=True)
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
        response: bool = False,
    ) -> dict[str, Any]:
        """``response``: an interaction's response or follow-up, which Discord accepts in any
        channel the member used the app in; the bot's own posts need one of its channels."""
        if not response and channel_id not in (*self.channels, *self.threads, *self.dm_channels.values()):
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


def _bucket_of(method: str, parts: list[str]) -> tuple[str, str] | None:
    """The rate-limit bucket of a bot route and its major parameter (the channel)."""
    match (method, parts):
        case ("POST", ["channels", channel, "messages"]):
            return "message-create", channel
        case ("PATCH", ["channels", channel, "messages", _]):
            return "message-edit", channel
        case ("DELETE", ["channels", channel, "messages", _]):
            return "message-delete", channel
        case ("GET", ["channels", channel, "messages"]):
            return "history", channel
        case ("POST", ["channels", channel, "messages", _, "threads"]):
            return "thread-create", channel
    return None


def _too_many(retry_after: float, headers: dict[str, str], *, is_global: bool) -> web.Response:
    """Discord's 429 (discord.py trusts one only when it came through Discord's proxy: Via)."""
    return web.Response(
        body=json.dumps({"message": "You are being rate limited.", "retry_after": round(retry_after, 3),
                         "global": is_global}).encode(),
        status=429,
        headers={"Content-Type": "application/json", "Via": "1.1 google",
                 "Retry-After": str(max(1, round(retry_after))), **headers},
    )


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
