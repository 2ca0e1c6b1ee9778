"""A small local Slack: the Web API methods the adapter uses, plus a signed-request sender.

``FakeSlack`` serves ``/api/<method>`` (the bot's SLACK_API_BASE_URL), the response URLs
Slack hands out with commands and clicks, and the file-upload URLs of files_upload_v2. Every
call is recorded so tests assert on what Slack would have received. Like Slack it keeps
message ``metadata``, answers ``conversations.history`` only with a history scope, and can
be told to answer 429 (with Retry-After) or 5xx, before or after it stored a message. ``SlackSender`` plays
Slack's side of HTTP mode: it POSTs commands and interactions to the bot, signed exactly as
Slack signs them (``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}``).

Several workspaces: ``issue_code`` plays Slack's consent screen (a one-time code that
``oauth.v2.access`` exchanges for a new bot token of that team, checking the app's client id
and secret); every call records which team's token it came with, ``auth.test`` answers for the
token's team, ``users.info`` shows only the members of that team, and ``revoke`` makes a
team's tokens invalid, as uninstalling does.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from tests.support.local_server import close_local, serve_local

T = TypeVar("T")
WAIT_S = 8.0
# Slack's rate limits: chat.postMessage about one message per second per channel (short bursts
# allowed), other methods by tier, per workspace and method, in calls per minute; a call over
# its limit is refused with 429 and Retry-After (seconds).
POST_PER_CHANNEL_S = 1.0
POST_BURST = 3
TIER_PER_MINUTE = {1: 1, 2: 20, 3: 50, 4: 100}
METHOD_TIERS = {
    "conversations.history": 3, "conversations.replies": 3, "conversations.open": 3,
    "chat.update": 3, "chat.delete": 3,
    "chat.getPermalink": 4, "chat.postEphemeral": 4, "views.open": 4, "users.info": 4,
    "files.getUploadURLExternal": 4, "files.completeUploadExternal": 4, "apps.connections.open": 1,
    "views.publish": 4, "users.conversations": 3,
}
# Block Kit limits Slack enforces on a published view (api.slack.com/reference/block-kit)
VIEW_MAX_BLOCKS = 100
SECTION_TEXT_MAX, HEADER_TEXT_MAX, BUTTON_TEXT_MAX, ACTION_ID_MAX, ACTIONS_ELEMENTS_MAX = 3000, 150, 75, 255, 25


class Bucket:
    """A token bucket: ``rate`` calls per second, bursts of ``burst``."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens, self.stamp = rate, burst, burst, time.monotonic()

    def take(self) -> float:
        """0 when the call may go now (and counts it), else the seconds until it may."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


@dataclass
class Call:
    method: str  # Web API method ("chat.postMessage"), "respond" or "upload"
    data: dict[str, Any]
    path: str = ""
    status: int = 200
    ok: bool = True  # the Web API's "ok" in the answer
    team: str | None = None  # the workspace whose token made the call


@dataclass
class User:
    id: str
    name: str
    admin: bool = False
    team: str | None = None  # None: a member of every workspace (one-workspace tests)


def text_of(message: dict[str, Any]) -> str:
    """Everything readable in a message/response: fallback text and every block's text."""
    parts = [message.get("text") or ""]
    blocks = message.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    for block in blocks:
        if isinstance(block.get("text"), dict):
            parts.append(block["text"]["text"])
        for element in block.get("elements", []):
            if isinstance(element.get("text"), dict):
                parts.append(element["text"]["text"])
            elif isinstance(element.get("text"), str):
                parts.append(element["text"])
    return "\n".join(parts)


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return [e for b in blocks if b.get("type") == "actions" for e in b["elements"]]


@dataclass
class FakeSlack:
    token: str = "xoxb-fake-bot-token"
    team_id: str = "T0FAKE"
    channel_id: str = "C0DRILLS"
    channel_name: str = "drills"
    bot_user_id: str = "U0BOT"
    calls: list[Call] = field(default_factory=list)
    messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (ch, ts)
    users: dict[str, User] = field(default_factory=dict)
    not_member_of: set[str] = field(default_factory=set)  # channels the bot was not invited to
    rate_limits: dict[str, list[int]] = field(default_factory=dict)  # method -> Retry-After list
    uploads: dict[str, bytes] = field(default_factory=dict)
    app_token: str = "xapp-fake-app-token"
    socket_acks: list[dict[str, Any]] = field(default_factory=list)  # Socket Mode envelope acks
    held: dict[str, asyncio.Event] = field(default_factory=dict)  # method -> answer once set
    held_after: dict[str, asyncio.Event] = field(default_factory=dict)  # done, answer held
    failures: dict[str, list[int]] = field(default_factory=dict)  # method -> 5xx, not done
    fail_after: dict[str, list[int]] = field(default_factory=dict)  # method -> 5xx, but done
    scopes: set[str] = field(default_factory=lambda: {"channels:history", "groups:history"})
    client_id: str = "1111.2222"
    client_secret: str = "fake-client-secret"
    tokens: dict[str, str] = field(default_factory=dict)  # installed bot token -> team id
    codes: dict[str, tuple[str, str]] = field(default_factory=dict)  # code -> (team, name)
    # the platform's limits by default; tests may loosen them (None: that limit is off)
    post_per_channel_s: float | None = POST_PER_CHANNEL_S
    post_burst: int = POST_BURST
    method_tiers: dict[str, int] = field(default_factory=lambda: dict(METHOD_TIERS))
    throttled: list[tuple[str, str]] = field(default_factory=list)  # 429s answered: (method, key)
    home_views: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (team, user)
    memberships: dict[str, set[str]] = field(default_factory=dict)  # user -> channels they are in

    def __post_init__(self) -> None:
        self.hosted: dict[str, bytes] = {}  # files members shared (file_input), by id
        self.file_reads = 0
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._sockets: list[web.WebSocketResponse] = []
        self.base_url = ""
        self._buckets: dict[tuple[str, str, str], Bucket] = {}

    # ---- server --------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/respond/{n}", self._respond)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/files/{file_id}/{name}", self._file)
        self._runner, port = await serve_local(app)
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        await close_local(self._runner, self._sockets)

    def host_file(self, name: str, content: bytes) -> dict[str, Any]:
        """A file a member picked in a file_input: Slack's file object, downloadable with the
        bot token from ``url_private_download`` (files:read)."""
        file_id = f"F{next(self._ids):08d}"
        self.hosted[file_id] = content
        url = f"{self.base_url}/files/{file_id}/{name}"
        return {"id": file_id, "name": name, "size": len(content), "filetype": "yaml",
                "url_private": url, "url_private_download": url}

    async def _file(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=403, text="not authed")
        content = self.hosted.get(request.match_info["file_id"])
        if content is None:
            return web.Response(status=404)
        self.file_reads += 1
        return web.Response(body=content, content_type="application/octet-stream")

    @property
    def api_base_url(self) -> str:
        return f"{self.base_url}/api/"

    def response_url(self) -> str:
        return f"{self.base_url}/respond/{next(self._ids)}"

    async def _record(self, call: Call) -> None:
        async with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode: say hello, then collect the app's envelope acks (pings are autoponged)."""
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        async with self._changed:
            self._sockets.append(ws)
            self._changed.notify_all()
        await ws.send_json({"type": "hello", "num_connections": 1,
                            "debug_info": {"host": "fake"}, "connection_info": {"app_id": "A0FAKE"}})
        try:
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT:
                    async with self._changed:
                        self.socket_acks.append(json.loads(msg.data))
                        self._changed.notify_all()
        finally:
            self._sockets.remove(ws)
        return ws

    async def connected(self, timeout: float) -> None:
        """Wait until an app holds a Socket Mode connection: Slack drops a slash command or an
        interaction sent while the app has none, and so does `push`."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: bool(self._sockets)), timeout)

    async def push(self, kind: str, payload: dict[str, Any]) -> str:
        """Deliver a Socket Mode envelope to every connected app; returns its envelope id. With
        no app connected Slack would drop it: so a test that pushes too early fails here, in one
        line, instead of timing out later (wait with `connected` first)."""
        if not self._sockets:
            raise AssertionError(f"no app holds a Socket Mode connection: Slack would drop this {kind}")
        envelope_id = f"env-{next(self._ids)}"
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": kind != "events_api", "retry_attempt": 0}
        for ws in self._sockets:
            await ws.send_json(envelope)
        return envelope_id

    async def _respond(self, request: web.Request) -> web.Response:
        await self._record(Call("respond", await request.json(), request.path))
        return web.Response(text="ok")

    async def _upload(self, request: web.Request) -> web.Response:
        data = await request.read()
        self.uploads[request.match_info["file_id"]] = data
        await self._record(Call("upload", {"file_id": request.match_info["file_id"]}, request.path))
        return web.Response(text="OK - uploaded")

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        data: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            data.update(await request.json())
        elif request.can_read_body:
            data.update(dict(await request.post()))
        gate = self.held.get(method)
        if gate is not None:  # a slow Slack: the call waits until the test releases it
            await self._record(Call(method, data, request.path, status=0))
            await gate.wait()
        wait = self._limit(method, data, request.headers.get("Authorization", ""))
        if wait:
            await self._record(Call(method, data, request.path, status=429))
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                     headers={"Retry-After": str(max(1, int(wait + 0.999)))})
        pending = self.rate_limits.get(method)
        if pending:
            retry_after = pending.pop(0)
            await self._record(Call(method, data, request.path, status=429))
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429,
                headers={"Retry-After": str(retry_after)},
            )
        failing = self.failures.get(method)
        if failing:
            status = failing.pop(0)
            await self._record(Call(method, data, request.path, status=status, ok=False))
            return web.json_response({"ok": False, "error": "internal_error"}, status=status)
        team, error = self._authenticate(method, request.headers.get("Authorization", ""))
        if error:
            await self._record(Call(method, data, request.path, ok=False, team=team))
            return web.json_response({"ok": False, "error": error})
        handler = getattr(self, "m_" + method.replace(".", "_"), None)
        if handler is None:
            result: dict[str, Any] = {"ok": False, "error": "unknown_method"}
        else:
            data["_team"] = team
            result = handler(data)
            data.pop("_team")
        late = self.fail_after.get(method)
        status = late.pop(0) if late else 200
        after = self.held_after.get(method)
        if after is not None:  # done, but the answer is slow (the sender may die meanwhile)
            await self._record(Call(method, data, request.path, status=-1, ok=result["ok"], team=team))
            await after.wait()
        await self._record(Call(method, data, request.path, status=status, ok=result["ok"], team=team))
        if status != 200:
            return web.json_response({"ok": False, "error": "internal_error"}, status=status)
        return web.json_response(result)

    def _limit(self, method: str, data: dict[str, Any], auth: str) -> float:
        """Seconds the caller must wait (0: go): per channel for chat.postMessage, else the
        method's tier per workspace (the token stands for the workspace)."""
        if method == "chat.postMessage" and self.post_per_channel_s:
            key = (auth, method, str(data.get("channel", "")))
            bucket = self._buckets.setdefault(key, Bucket(self.post_per_channel_s, self.post_burst))
        elif method in self.method_tiers:
            per_minute = TIER_PER_MINUTE[self.method_tiers[method]]
            key = (auth, method, "")
            bucket = self._buckets.setdefault(key, Bucket(per_minute / 60.0, per_minute))
        else:
            return 0.0
        wait = bucket.take()
        if wait:
            self.throttled.append((method, key[2]))
        return wait

    def _next_ts(self) -> str:
        """Wall-clock seconds like Slack's (history's ``oldest`` compares them), unique suffix."""
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _channel_error(self, channel: str) -> dict[str, Any] | None:
        if channel in self.not_member_of:
            return {"ok": False, "error": "not_in_channel"}
        return None

    def _authenticate(self, method: str, header: str) -> tuple[str | None, str | None]:
        """(the caller's team, an error): app token, the app's id and secret, or a bot token."""
        if method == "apps.connections.open":
            return None, None if header == f"Bearer {self.app_token}" else "invalid_auth"
        if method == "oauth.v2.access":
            expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
            return None, None if header == f"Basic {expected}" else "invalid_client"
        token = header.removeprefix("Bearer ")
        if token == self.token:
            return self.team_id, None
        if token in self.tokens:
            return self.tokens[token], None
        return None, "invalid_auth"

    def issue_code(self, team: str, name: str) -> str:
        """What Slack's consent screen hands back to the redirect URL after "Allow"."""
        code = f"code-{team}-{next(self._ids)}"
        self.codes[code] = (team, name)
        return code

    def revoke(self, team: str) -> None:
        """Uninstalling: the team's bot tokens stop working."""
        for token in [t for t, owner in self.tokens.items() if owner == team]:
            del self.tokens[token]

    def token_of(self, team: str) -> str | None:
        return next((t for t, owner in self.tokens.items() if owner == team), None)

    # ---- Web API methods -----------------------------------------------------------------
    def m_oauth_v2_access(self, data: dict[str, Any]) -> dict[str, Any]:
        found = self.codes.pop(str(data.get("code")), None)  # a code works once
        if found is None:
            return {"ok": False, "error": "invalid_code"}
        team, name = found
        token = f"xoxb-{team}-{next(self._ids)}-{uuid.uuid4().hex}"
        self.tokens[token] = team
        return {"ok": True, "access_token": token, "token_type": "bot", "app_id": "A0FAKE",
                "scope": "commands,chat:write", "bot_user_id": f"U0BOT{team}",
                "team": {"id": team, "name": name}, "enterprise": None,
                "is_enterprise_install": False, "authed_user": {"id": f"U0INSTALLER{team}"}}

    def m_apps_connections_open(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": self.base_url.replace("http://", "ws://") + "/socket"}

    def m_auth_test(self, data: dict[str, Any]) -> dict[str, Any]:
        team = data.get("_team") or self.team_id
        return {"ok": True, "url": "https://fake.slack.com/", "team": "Fake", "user": "torchdrill",
                "team_id": team, "user_id": self.bot_user_id, "bot_id": f"B0BOT{team}"}

    def m_chat_postMessage(self, data: dict[str, Any]) -> dict[str, Any]:
        channel = str(data["channel"])
        if error := self._channel_error(channel):
            return error
        if channel.startswith("U"):  # a DM to a user opens an IM channel
            channel = "D" + channel[1:]
        ts = self._next_ts()
        message = {"ts": ts, "channel": channel, "text": data.get("text"),
                   "blocks": _blocks(data.get("blocks")), "thread_ts": data.get("thread_ts"),
                   "bot_id": "B0BOT", "user": self.bot_user_id}
        if data.get("metadata"):
            metadata = data["metadata"]
            message["metadata"] = json.loads(metadata) if isinstance(metadata, str) else metadata
        self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def m_conversations_history(self, data: dict[str, Any]) -> dict[str, Any]:
        """Top-level messages, newest first; metadata only with include_all_metadata."""
        channel = str(data.get("channel"))
        if not self.scopes & {"channels:history", "groups:history"}:
            return {"ok": False, "error": "missing_scope", "needed": "channels:history"}
        if error := self._channel_error(channel):
            return error
        oldest = float(data.get("oldest") or 0)
        limit = int(data.get("limit") or 100)
        with_metadata = str(data.get("include_all_metadata")).lower() in ("1", "true")
        found = sorted(
            (m for (ch, ts), m in self.messages.items()
             if ch == channel and not m.get("thread_ts") and float(ts) >= oldest),
            key=lambda m: float(m["ts"]), reverse=True,
        )
        shown = [{k: v for k, v in m.items() if k != "metadata" or with_metadata}
                 for m in found[:limit]]
        return {"ok": True, "messages": shown, "has_more": len(found) > limit,
                "response_metadata": {"next_cursor": ""}}

    def m_conversations_replies(self, data: dict[str, Any]) -> dict[str, Any]:
        """The thread of ``ts``: its parent first, then the replies, oldest first."""
        channel, root = str(data.get("channel")), str(data.get("ts"))
        if not self.scopes & {"channels:history", "groups:history"}:
            return {"ok": False, "error": "missing_scope", "needed": "channels:history"}
        if error := self._channel_error(channel):
            return error
        if (channel, root) not in self.messages:
            return {"ok": False, "error": "thread_not_found"}
        oldest = float(data.get("oldest") or 0)
        with_metadata = str(data.get("include_all_metadata")).lower() in ("1", "true")
        found = sorted(
            (m for (ch, ts), m in self.messages.items()
             if ch == channel and (ts == root or (m.get("thread_ts") == root and float(ts) >= oldest))),
            key=lambda m: float(m["ts"]),
        )
        shown = [{k: v for k, v in m.items() if k != "metadata" or with_metadata} for m in found]
        return {"ok": True, "messages": shown, "has_more": False,
                "response_metadata": {"next_cursor": ""}}

    def m_chat_getPermalink(self, data: dict[str, Any]) -> dict[str, Any]:
        key = (str(data.get("channel")), str(data.get("message_ts")))
        if key not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": key[0],
                "permalink": f"https://fake.slack.test/archives/{key[0]}/p{key[1].replace('.', '')}"}

    def m_chat_update(self, data: dict[str, Any]) -> dict[str, Any]:
        key = (str(data["channel"]), str(data["ts"]))
        if key not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        self.messages[key].update(text=data.get("text"), blocks=_blocks(data.get("blocks")))
        return {"ok": True, "channel": key[0], "ts": key[1]}

    def m_chat_postEphemeral(self, data: dict[str, Any]) -> dict[str, Any]:
        if error := self._channel_error(str(data["channel"])):
            return error
        return {"ok": True, "message_ts": self._next_ts()}

    def m_views_open(self, data: dict[str, Any]) -> dict[str, Any]:
        if not data.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        view = data["view"] if isinstance(data["view"], dict) else json.loads(data["view"])
        problems = modal_problems(view)
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        return {"ok": True, "view": {**view, "id": f"V{next(self._ids)}"}}

    def m_views_publish(self, data: dict[str, Any]) -> dict[str, Any]:
        """Like Slack: a home view for a member of the token's workspace, checked against
        Block Kit's limits; a bad one is refused with invalid_arguments and says why."""
        user = self.users.get(str(data.get("user_id")))
        if user is None or user.team not in (None, data.get("_team")):
            return {"ok": False, "error": "user_not_found"}
        view = data.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        problems = view_problems(view)
        if problems:
            return {"ok": False, "error": "invalid_arguments",
                    "response_metadata": {"messages": problems}}
        self.home_views[(str(data.get("_team")), user.id)] = view
        return {"ok": True, "view": {**view, "id": f"V{next(self._ids)}", "team_id": data.get("_team")}}

    def m_users_conversations(self, data: dict[str, Any]) -> dict[str, Any]:
        """The channels a member is in (the fake's channel unless ``memberships`` says)."""
        user = str(data.get("user") or "")
        channels = sorted(self.memberships.get(user, {self.channel_id}))
        return {"ok": True, "channels": [{"id": c, "is_channel": True} for c in channels],
                "response_metadata": {"next_cursor": ""}}

    def m_users_info(self, data: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(data.get("user")))
        if user is None or user.team not in (None, data.get("_team")):
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": {"id": user.id, "name": user.name, "is_admin": user.admin,
                                     "is_owner": False, "is_primary_owner": False}}

    def m_chat_delete(self, data: dict[str, Any]) -> dict[str, Any]:
        key = (str(data.get("channel")), str(data.get("ts")))
        if self.messages.pop(key, None) is None:
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": key[0], "ts": key[1]}

    def m_conversations_open(self, data: dict[str, Any]) -> dict[str, Any]:
        """The bot's direct-message channel with a user (Slack answers D + an id)."""
        users = str(data.get("users", ""))
        if not users or "," in users:
            return {"ok": False, "error": "invalid_users"}
        return {"ok": True, "channel": {"id": f"D{users}"}}

    def m_files_getUploadURLExternal(self, data: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ids)}"
        return {"ok": True, "file_id": file_id, "upload_url": f"{self.base_url}/upload/{file_id}"}

    def m_files_completeUploadExternal(self, data: dict[str, Any]) -> dict[str, Any]:
        files = json.loads(data["files"])
        missing = [f["id"] for f in files if f["id"] not in self.uploads]
        if missing:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}

    # ---- inspection ----------------------------------------------------------------------
    def hold(self, method: str) -> asyncio.Event:
        """Make calls of ``method`` wait until the returned event is set."""
        self.held[method] = asyncio.Event()
        return self.held[method]

    def hold_answer(self, method: str) -> asyncio.Event:
        """Make calls of ``method`` take effect at once but answer only when the event is set."""
        self.held_after[method] = asyncio.Event()
        return self.held_after[method]

    def accepted_unanswered(self, method: str) -> bool:
        return any(c.method == method and c.status == -1 for c in self.calls)

    def posts_of(self, post_id: int, channel: str | None = None) -> list[dict[str, Any]]:
        """Top-level messages of the channel whose buttons belong to post ``post_id``."""
        return [m for m in self.in_channel(channel)
                if any(b["action_id"].split(":")[2:3] == [str(post_id)] for b in buttons_of(m))]

    def waiting(self, method: str) -> bool:
        return any(c.method == method and c.status == 0 for c in self.calls)

    def sent(self, method: str, **match: Any) -> list[Call]:
        """Calls of ``method`` that Slack answered with ok: true."""
        return [
            c for c in self.calls
            if c.method == method and c.status == 200 and c.ok
            and all(str(c.data.get(k)) == str(v) for k, v in match.items())
        ]

    def in_channel(self, channel: str | None = None, thread_ts: str | None = None) -> list[dict]:
        channel = channel or self.channel_id
        return [m for (ch, _), m in self.messages.items()
                if ch == channel and m.get("thread_ts") == thread_ts]

    async def wait_until(self, probe: Callable[[], T | None], timeout: float = WAIT_S) -> T:
        """Wait until ``probe()`` returns something truthy (re-checked on every new call)."""
        async def loop() -> T:
            async with self._changed:
                while True:
                    found = probe()
                    if found:
                        return found
                    await self._changed.wait()

        return await asyncio.wait_for(loop(), timeout)

    async def wait_for(self, method: str, count: int = 1, timeout: float = WAIT_S, **match: Any) -> Call:
        """The ``count``-th successful call of ``method`` (matching ``match``)."""
        found = await self.wait_until(
            lambda: self.sent(method, **match)[count - 1:count] or None, timeout
        )
        return found[0]


MODAL_TITLE_MAX = 24  # a modal's title, submit and close labels
OPTION_TEXT_MAX = 75  # a static_select option's text and description
INPUT_MAX = 3000  # a plain_text_input's max_length


def modal_problems(view: dict[str, Any]) -> list[str]:
    """What Slack would refuse in a modal's input blocks, as its ``[ERROR] …`` messages."""
    problems = []
    for key in ("title", "submit", "close"):
        text = (view.get(key) or {}).get("text", "")
        if (key == "title" or key in view) and not 0 < len(text) <= MODAL_TITLE_MAX:
            problems.append(f"[ERROR] must be 1 to {MODAL_TITLE_MAX} characters [json-pointer:/view/{key}/text]")
    for n, block in enumerate(view.get("blocks") or []):
        element = block.get("element") or {}
        where = f"[json-pointer:/view/blocks/{n}/element"
        if element.get("type") == "static_select":
            for k, option in enumerate(element.get("options") or []):
                for part in ("text", "description"):
                    text = (option.get(part) or {}).get("text")
                    if text is not None and not 0 < len(text) <= OPTION_TEXT_MAX:
                        problems.append(f"[ERROR] must be 1 to {OPTION_TEXT_MAX} characters {where}/options/{k}/{part}]")
        if element.get("type") == "plain_text_input" and not 0 < element.get("max_length", INPUT_MAX) <= INPUT_MAX:
            problems.append(f"[ERROR] must be between 1 and {INPUT_MAX} {where}/max_length]")
    return problems


def view_problems(view: Any) -> list[str]:
    """What Slack would refuse in a home view, as its ``[ERROR] …`` messages."""
    if not isinstance(view, dict) or view.get("type") != "home":
        return ["[ERROR] must be a valid enum value [json-pointer:/view/type]"]
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        return ["[ERROR] missing required field: blocks [json-pointer:/view]"]
    problems = []
    if len(blocks) > VIEW_MAX_BLOCKS:
        problems.append(f"[ERROR] no more than {VIEW_MAX_BLOCKS} items allowed [json-pointer:/view/blocks]")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    if len(block_ids) != len(set(block_ids)):
        problems.append("[ERROR] duplicate block_id [json-pointer:/view/blocks]")
    for n, block in enumerate(blocks):
        where = f"[json-pointer:/view/blocks/{n}"
        kind = block.get("type")
        text = (block.get("text") or {}).get("text", "")
        if kind == "header" and not 0 < len(text) <= HEADER_TEXT_MAX:
            problems.append(f"[ERROR] must be 1 to {HEADER_TEXT_MAX} characters {where}/text]")
        if kind == "section" and not 0 < len(text) <= SECTION_TEXT_MAX:
            problems.append(f"[ERROR] must be 1 to {SECTION_TEXT_MAX} characters {where}/text]")
        buttons = [block["accessory"]] if block.get("accessory") else []
        if kind == "actions":
            if len(block.get("elements") or []) > ACTIONS_ELEMENTS_MAX:
                problems.append(f"[ERROR] no more than {ACTIONS_ELEMENTS_MAX} items allowed {where}/elements]")
            buttons += block.get("elements") or []
        for button in buttons:
            label = (button.get("text") or {}).get("text", "")
            if not 0 < len(label) <= BUTTON_TEXT_MAX:
                problems.append(f"[ERROR] must be 1 to {BUTTON_TEXT_MAX} characters {where}/text]")
            if len(button.get("action_id", "")) > ACTION_ID_MAX:
                problems.append(f"[ERROR] must be at most {ACTION_ID_MAX} characters {where}/action_id]")
        if kind not in ("header", "section", "actions", "divider", "context", "image"):
            problems.append(f"[ERROR] unsupported type {kind!r} {where}]")
    return problems


def _blocks(value: Any) -> list[dict[str, Any]]:
    if not value:
        return []
    return json.loads(value) if isinstance(value, str) else value


def sign(secret: str, timestamp: str, body: str | bytes) -> str:
    raw = body.encode() if isinstance(body, str) else body
    base = f"v0:{timestamp}:".encode() + raw
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class SlackSender:
    """Slack's side of HTTP mode: signed POSTs to the bot's /slack/events."""

    fake: FakeSlack
    url: str  # http://127.0.0.1:<port>/slack/events
    signing_secret: str
    team_id: str | None = None  # another workspace than the fake's own
    channel_id: str | None = None

    @property
    def team(self) -> str:
        return self.team_id or self.fake.team_id

    @property
    def channel(self) -> str:
        return self.channel_id or self.fake.channel_id

    async def post(
        self, body: str | bytes, content_type: str, *, timestamp: int | None = None,
        signature: str | None = None, signed: bool = True,
    ) -> tuple[int, str]:
        """POST ``body`` (bytes go out as they are); ``signed=False`` sends no signature."""
        raw = body.encode() if isinstance(body, str) else body
        ts = str(int(time.time()) if timestamp is None else timestamp)
        headers = {"Content-Type": content_type}
        if signed:
            headers["X-Slack-Request-Timestamp"] = ts
            headers["X-Slack-Signature"] = signature or sign(self.signing_secret, ts, raw)
        async with aiohttp.ClientSession() as session, session.post(
            self.url, data=raw, headers=headers
        ) as response:
            return response.status, await response.text()

    def command_payload(self, command: str, user: User, text: str = "",
                        channel: str | None = None) -> dict[str, str]:
        return {
            "token": "legacy-verification-token",
            "team_id": self.team,
            "team_domain": "fake",
            "channel_id": channel or self.channel,
            "channel_name": self.fake.channel_name,
            "user_id": user.id,
            "user_name": user.name,
            "command": command,
            "text": text,
            "api_app_id": "A0FAKE",
            "response_url": self.fake.response_url(),
            "trigger_id": f"trigger.{time.time_ns()}",
        }

    def command_body(self, command: str, user: User, text: str = "",
                     channel: str | None = None) -> str:
        return urlencode(self.command_payload(command, user, text, channel))

    async def command(self, command: str, user: User, text: str = "", **kw: Any) -> tuple[int, str]:
        body = self.command_body(command, user, text)
        return await self.post(body, "application/x-www-form-urlencoded", **kw)

    async def event(self, event: dict[str, Any]) -> tuple[int, str]:
        """An Events API callback from this sender's workspace (e.g. app_uninstalled)."""
        body = {"token": "legacy-verification-token", "team_id": self.team, "api_app_id": "A0FAKE",
                "type": "event_callback", "event": {"event_ts": str(time.time()), **event},
                "event_id": f"Ev{time.time_ns()}", "event_time": int(time.time())}
        return await self.post(json.dumps(body), "application/json")

    async def interact(self, payload: dict[str, Any], **kw: Any) -> tuple[int, str]:
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded", **kw)

    def _base(self, kind: str, user: User) -> dict[str, Any]:
        return {
            "type": kind,
            "token": "legacy-verification-token",
            "api_app_id": "A0FAKE",
            "team": {"id": self.team, "domain": "fake"},
            "user": {"id": user.id, "username": user.name, "name": user.name,
                     "team_id": self.team},
            "trigger_id": f"trigger.{time.time_ns()}",
        }

    async def click(self, message: dict[str, Any], action_id: str, user: User,
                    ephemeral: bool = False) -> tuple[int, str]:
        return await self.interact(self.click_payload(message, action_id, user, ephemeral))

    def click_payload(self, message: dict[str, Any], action_id: str, user: User,
                      ephemeral: bool = False) -> dict[str, Any]:
        [button] = [b for b in buttons_of(message) if b["action_id"] == action_id]
        payload = self._base("block_actions", user) | {
            "container": {"type": "message", "message_ts": message.get("ts"),
                          "channel_id": self.channel, "is_ephemeral": ephemeral},
            "channel": {"id": self.channel, "name": self.fake.channel_name},
            "message": {"type": "message", "ts": message.get("ts"), "text": message.get("text"),
                        "blocks": message.get("blocks")},
            "response_url": self.fake.response_url(),
            "actions": [{"type": "button", "action_id": action_id, "block_id": "td-actions-0",
                         "text": button["text"], "value": button.get("value"),
                         "action_ts": str(time.time())}],
        }
        return payload

    async def submit_view(self, view: dict[str, Any], values: dict[str, dict[str, Any]],
                          user: User) -> tuple[int, str]:
        return await self.interact(self.view_payload(view, values, user))

    def view_payload(self, view: dict[str, Any], values: dict[str, dict[str, Any]],
                     user: User) -> dict[str, Any]:
        """A modal's view_submission (as HTTP POSTs it, or FakeSlack.push over Socket Mode).
        Text values become plain_text_input state; a dict value is given as Slack sends it
        (e.g. ``{"type": "file_input", "files": [...]}``). Like Slack's client, it refuses what a
        member could not submit: text over an input's max_length, a pick that is not one of a
        static_select's options, a required input left empty."""
        for block in view.get("blocks") or []:
            element = block.get("element") or {}
            given = (values.get(block.get("block_id")) or {}).get(element.get("action_id"))
            if given is None:
                if block.get("type") == "input" and not block.get("optional"):
                    raise AssertionError(f"Slack would not submit the modal without {block['block_id']}")
                continue
            if (element.get("type") == "plain_text_input" and isinstance(given, str)
                    and len(given) > element.get("max_length", INPUT_MAX)):
                raise AssertionError(f"Slack caps {block['block_id']} at {element.get('max_length')} characters")
            if element.get("type") == "static_select" and isinstance(given, dict):
                offered = [o["value"] for o in element["options"]]
                if (given.get("selected_option") or {}).get("value") not in offered:
                    raise AssertionError(f"not an option of {block['block_id']}: {offered}")
        state = {block: {action: value if isinstance(value, dict)
                         else {"type": "plain_text_input", "value": value}
                         for action, value in actions.items()}
                 for block, actions in values.items()}
        return self._base("view_submission", user) | {
            "view": {**view, "id": view.get("id", "V0"), "state": {"values": state}},
        }

    async def open_home(self, user: User) -> tuple[int, str]:
        """The member opens the app's Home tab (the ``app_home_opened`` event)."""
        return await self.event({"type": "app_home_opened", "user": user.id,
                                 "channel": f"D{user.id[1:]}", "tab": "home"})

    async def click_home(self, user: User, action_id: str) -> tuple[int, str]:
        """A click on a button of the member's published Home tab (no channel: a view)."""
        view = self.fake.home_views[(self.team, user.id)]
        [button] = [e for b in view["blocks"]
                    for e in ([b["accessory"]] if b.get("accessory") else b.get("elements", []))
                    if e.get("action_id") == action_id]
        payload = self._base("block_actions", user) | {
            "container": {"type": "view", "view_id": "VHOME"},
            "view": {**view, "id": "VHOME", "team_id": self.team},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b",
                         "text": button["text"], "value": button.get("value"),
                         "action_ts": str(time.time())}],
        }
        return await self.interact(payload)

    async def message_shortcut(self, callback_id: str, message: dict[str, Any],
                               user: User) -> tuple[int, str]:
        payload = self._base("message_action", user) | {
            "callback_id": callback_id,
            "channel": {"id": self.channel, "name": self.fake.channel_name},
            "message": message,
            "response_url": self.fake.response_url(),
        }
        return await self.interact(payload)
