"""A small fake Discord on 127.0.0.1: REST over aiohttp and a gateway websocket, enough for the
real, unmodified discord.py client to log in, receive messages and interactions, and answer.

Tests speak as users (`say`, `click`, `choose`, `slash`, `edit`, `delete`) and read what the
bot posted (`messages`, `wait_for`). Every bot output is a plain dict as Discord stores it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
import yarl
from aiohttp import WSMsgType, web

GUILD = 1_000
CHANNEL = 2_000
OTHER_CHANNEL = 2_001
BOT_ID = 10
APP_ID = 11
MOD_ROLE = 3_000
MANAGER_ROLE = 3_001  # a role that carries Manage Messages
TIMESTAMP = "2026-11-20T12:00:00.000000+00:00"
MANAGE_MESSAGES = 1 << 13
MESSAGE_CONTENT = 1 << 15  # the privileged gateway intent
BASIC = (1 << 10) | (1 << 11) | (1 << 16) | (1 << 31)  # view, send, read history, use commands


@dataclass
class User:
    """A member: `moderator` holds the moderator role; `manages_messages` holds a role with the
    Manage Messages permission (by default, whoever is a moderator)."""

    id: int
    name: str
    moderator: bool = False
    manages_messages: bool | None = None

    @property
    def manager(self) -> bool:
        return self.moderator if self.manages_messages is None else self.manages_messages

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name.lower(),
            "global_name": self.name,
            "discriminator": "0",
            "avatar": None,
            "bot": self.id == BOT_ID,
        }

    def member(self) -> dict[str, Any]:
        return {
            "user": self.payload(),
            "roles": [str(MOD_ROLE)] * self.moderator + [str(MANAGER_ROLE)] * self.manager,
            "joined_at": TIMESTAMP,
            "deaf": False,
            "mute": False,
            "nick": None,
            "flags": 0,
            "permissions": str(BASIC | (MANAGE_MESSAGES if self.manager else 0)),
        }


BOT = User(BOT_ID, "rollkeeper")


@dataclass
class FakeDiscord:
    users: list[User]
    channels: list[int] = field(default_factory=lambda: [CHANNEL, OTHER_CHANNEL])
    messages: list[dict[str, Any]] = field(default_factory=list)
    interaction_replies: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(100_000)
        self._seq = 0
        self._sockets: list[web.WebSocketResponse] = []
        self._changed = asyncio.Condition()
        self._identified = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.base = ""
        self._saved: tuple[str, yarl.URL] | None = None
        self._interactions: dict[str, dict[str, Any]] = {}
        self.intents = 0
        self.dm_channels: dict[int, int] = {}  # user id -> their DM channel with the bot
        self.closed_dms: set[int] = set()  # users who don't accept direct messages

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        api = "/api/v10"
        app.router.add_get(api + "/users/@me", self._me)
        app.router.add_post(api + "/users/@me/channels", self._open_dm)
        app.router.add_get(api + "/users/{user}", self._get_user)
        app.router.add_get(api + "/gateway", self._gateway_url)
        app.router.add_get(api + "/oauth2/applications/@me", self._application)
        app.router.add_get(api + "/applications/@me", self._application)
        app.router.add_post(api + "/channels/{channel}/messages", self._create_message)
        app.router.add_patch(api + "/channels/{channel}/messages/{message}", self._edit_message)
        app.router.add_get(api + "/channels/{channel}", self._get_channel)
        app.router.add_put(api + "/applications/{app}/commands", self._put_commands)
        app.router.add_post(api + "/interactions/{id}/{token}/callback", self._callback)
        app.router.add_post(api + "/webhooks/{app}/{token}", self._followup)
        app.router.add_patch(
            api + "/webhooks/{app}/{token}/messages/{message}", self._edit_followup
        )
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        self._saved = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
        discord.http.Route.BASE = f"{self.base}/api/v10"
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(
            f"ws://127.0.0.1:{port}/gateway"
        )

    async def stop(self) -> None:
        for ws in self._sockets:
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._saved is not None:
            discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._saved

    async def ready(self) -> None:
        await asyncio.wait_for(self._identified.wait(), 10)

    # ---- payload helpers ---------------------------------------------------------------------

    def snowflake(self) -> int:
        return next(self._ids)

    @staticmethod
    def _json(data: Any, status: int = 200) -> web.Response:
        # discord.py parses JSON only for exactly this content type (no charset).
        return web.Response(
            body=json.dumps(data).encode(),
            status=status,
            headers={"Content-Type": "application/json"},
        )

    def _channel(self, channel_id: int) -> dict[str, Any]:
        return {
            "id": str(channel_id),
            "type": 0,
            "name": f"dice-{channel_id}",
            "guild_id": str(GUILD),
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        }

    def _guild(self) -> dict[str, Any]:
        everyone = {
            "id": str(GUILD),
            "name": "@everyone",
            "permissions": str(BASIC),
            "position": 0,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }
        mod = {
            **everyone,
            "id": str(MOD_ROLE),
            "name": "Dice Moderator",
            "position": 1,
            "permissions": str(BASIC),
        }
        manager = {
            **everyone,
            "id": str(MANAGER_ROLE),
            "name": "Message Managers",
            "position": 2,
            "permissions": str(BASIC | MANAGE_MESSAGES),
        }
        return {
            "id": str(GUILD),
            "name": "Play by post",
            "owner_id": "1",
            "roles": [everyone, mod, manager],
            "channels": [self._channel(c) for c in self.channels],
            "members": [u.member() for u in [BOT, *self.users]],
            "member_count": len(self.users) + 1,
            "large": False,
            "unavailable": False,
            "features": [],
            "emojis": [],
            "stickers": [],
            "threads": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "joined_at": TIMESTAMP,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "system_channel_flags": 0,
        }

    def _message(self, author: User, channel: int, content: str, **extra: Any) -> dict[str, Any]:
        return {
            "id": str(self.snowflake()),
            "channel_id": str(channel),
            "guild_id": str(GUILD),
            "author": author.payload(),
            "content": content,
            "timestamp": TIMESTAMP,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            **extra,
        }

    # ---- gateway -----------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45_000}}))
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            if data["op"] == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif data["op"] == 2:
                self.intents = int(data["d"].get("intents", 0))
                await self._dispatch_to(
                    ws,
                    "READY",
                    {
                        "v": 10,
                        "user": BOT.payload(),
                        "guilds": [{"id": str(GUILD), "unavailable": True}],
                        "session_id": "fake-session",
                        "shard": [0, 1],
                        "resume_gateway_url": str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY),
                        "application": {"id": str(APP_ID), "flags": 0},
                    },
                )
                await self._dispatch_to(ws, "GUILD_CREATE", self._guild())
                self._identified.set()
        self._sockets.remove(ws)
        return ws

    async def _dispatch_to(self, ws: web.WebSocketResponse, event: str, data: Any) -> None:
        self._seq += 1
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))

    async def dispatch(self, event: str, data: Any) -> None:
        for ws in list(self._sockets):
            await self._dispatch_to(ws, event, data)

    # ---- REST --------------------------------------------------------------------------------

    async def _me(self, _: web.Request) -> web.Response:
        return self._json(BOT.payload())

    async def _application(self, _: web.Request) -> web.Response:
        return self._json(
            {
                "id": str(APP_ID),
                "name": "rollkeeper",
                "icon": None,
                "description": "",
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": BOT.payload(),
                "verify_key": "0" * 64,
                "flags": 0,
                "team": None,
                "summary": "",
            }
        )

    async def _get_user(self, request: web.Request) -> web.Response:
        wanted = int(request.match_info["user"])
        user = next((u for u in self.users if u.id == wanted), None)
        if user is None:
            return self._json({"message": "Unknown User", "code": 10013}, status=404)
        return self._json(user.payload())

    def _dm_channel(self, user: User) -> dict[str, Any]:
        channel = self.dm_channels.setdefault(user.id, 9_000_000 + user.id)
        return {
            "id": str(channel),
            "type": 1,
            "recipients": [user.payload()],
            "last_message_id": None,
        }

    async def _open_dm(self, request: web.Request) -> web.Response:
        body = await request.json()
        wanted = int(body["recipient_id"])
        user = next(u for u in self.users if u.id == wanted)
        return self._json(self._dm_channel(user))

    def dms_to(self, name: str) -> list[dict[str, Any]]:
        """The direct messages the bot sent a user."""
        channel = self.dm_channels.get(self.user(name).id)
        return [m for m in self.messages if channel and m["channel_id"] == str(channel)]

    async def _gateway_url(self, _: web.Request) -> web.Response:
        return self._json({"url": str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)})

    async def _get_channel(self, request: web.Request) -> web.Response:
        return self._json(self._channel(int(request.match_info["channel"])))

    async def _put_commands(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.commands = [
            {**c, "id": str(self.snowflake()), "application_id": str(APP_ID), "version": "1"}
            for c in body
        ]
        return self._json(self.commands)

    async def _body(self, request: web.Request) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            payload: dict[str, Any] = {}
            files = []
            async for part in reader:
                if part.name == "payload_json":  # type: ignore[union-attr]
                    payload = json.loads(await part.text())  # type: ignore[union-attr]
                else:
                    data = await part.read()  # type: ignore[union-attr]
                    files.append(
                        {
                            "filename": part.filename,
                            "size": len(data),  # type: ignore[union-attr]
                            "data": data.decode("utf-8", "replace"),
                        }
                    )
            return payload, files
        return await request.json(), []

    async def _record(
        self, channel: int, body: dict[str, Any], files: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        message = self._message(
            BOT,
            channel,
            body.get("content") or "",
            embeds=body.get("embeds") or [],
            components=body.get("components") or [],
            attachments=[{"id": str(self.snowflake()), **f} for f in files],
            flags=body.get("flags") or 0,
            **extra,
        )
        message["allowed_mentions"] = body.get("allowed_mentions")
        message["_received"] = time.perf_counter()
        async with self._changed:
            self.messages.append(message)
            self._changed.notify_all()
        return message

    async def _create_message(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        channel = int(request.match_info["channel"])
        recipient = next((u for u, c in self.dm_channels.items() if c == channel), None)
        if recipient in self.closed_dms:
            return self._json(
                {"message": "Cannot send messages to this user", "code": 50007}, status=403
            )
        nonce = body.get("nonce")
        if nonce and body.get("enforce_nonce"):  # Discord drops a repeat with the same nonce
            for earlier in self.messages:
                if earlier.get("nonce") == nonce and earlier["channel_id"] == str(channel):
                    return self._json(earlier)
        message = await self._record(channel, body, files, nonce=nonce)
        if recipient is not None:
            message.pop("guild_id", None)
        return self._json(message)

    async def _edit_message(self, request: web.Request) -> web.Response:
        body, _ = await self._body(request)
        message = self.find(request.match_info["message"])
        async with self._changed:
            message.update(
                {k: v for k, v in body.items() if k in ("content", "embeds", "components")}
            )
            self._changed.notify_all()
        return self._json(message)

    async def _callback(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        interaction = self._interactions[request.match_info["id"]]
        kind = body["type"]
        data = body.get("data") or {}
        result: dict[str, Any] = {
            "interaction": {"id": request.match_info["id"], "type": interaction["type"]}
        }
        if kind == 4:  # a new message
            message = await self._record(
                int(interaction["channel_id"]), data, files, interaction_id=request.match_info["id"]
            )
            result["interaction"]["response_message_id"] = message["id"]
            result["interaction"]["response_message_ephemeral"] = bool(data.get("flags", 0) & 64)
            result["resource"] = {"type": 4, "message": message}
        elif kind == 7:  # update the clicked message
            message = self.find(interaction["message"]["id"])
            async with self._changed:
                message.update(
                    {k: v for k, v in data.items() if k in ("content", "embeds", "components")}
                )
                self._changed.notify_all()
            result["resource"] = {"type": 7, "message": message}
        self.interaction_replies.append({"type": kind, "data": data})
        return self._json(result)

    async def _followup(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        token = request.match_info["token"]
        interaction = next(i for i in self._interactions.values() if i["token"] == token)
        message = await self._record(int(interaction["channel_id"]), body, files)
        return self._json(message)

    async def _edit_followup(self, request: web.Request) -> web.Response:
        body, _ = await self._body(request)
        return self._json(self._message(BOT, CHANNEL, body.get("content") or ""))

    # ---- acting as users ---------------------------------------------------------------------

    def user(self, name: str) -> User:
        return next(u for u in self.users if u.name == name)

    def find(self, message_id: str) -> dict[str, Any]:
        return next(m for m in self.messages if m["id"] == str(message_id))

    async def say(self, name: str, content: str, channel: int = CHANNEL) -> dict[str, Any]:
        author = self.user(name)
        mentions = [BOT.payload()] if f"<@{BOT_ID}>" in content else []
        message = self._message(author, channel, content, member=author.member(), mentions=mentions)
        delivered = dict(message)
        if not self.intents & MESSAGE_CONTENT and not mentions:
            delivered["content"] = ""  # what Discord sends a bot without the intent
        await self.dispatch("MESSAGE_CREATE", delivered)
        return message

    async def edit(self, message: dict[str, Any], content: str) -> None:
        await self.dispatch(
            "MESSAGE_UPDATE", {**message, "content": content, "edited_timestamp": TIMESTAMP}
        )

    async def delete(self, message: dict[str, Any]) -> None:
        await self.dispatch(
            "MESSAGE_DELETE",
            {"id": message["id"], "channel_id": message["channel_id"], "guild_id": str(GUILD)},
        )

    async def _interact(
        self,
        name: str,
        kind: int,
        data: dict[str, Any],
        message: dict[str, Any] | None = None,
        channel: int = CHANNEL,
    ) -> None:
        user = self.user(name)
        interaction_id = str(self.snowflake())
        payload = {
            "id": interaction_id,
            "application_id": str(APP_ID),
            "type": kind,
            "data": data,
            "guild_id": str(GUILD),
            "channel_id": str(channel),
            "channel": self._channel(channel),
            "member": user.member(),
            "token": f"token-{interaction_id}",
            "version": 1,
            "app_permissions": str(BASIC),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(GUILD)},
            "context": 0,
            "attachment_size_limit": 8_000_000,
        }
        if message is not None:
            payload["message"] = message
        self._interactions[interaction_id] = payload
        await self.dispatch("INTERACTION_CREATE", payload)

    async def click(self, name: str, message: dict[str, Any], custom_id: str) -> None:
        await self._interact(name, 3, {"custom_id": custom_id, "component_type": 2}, message)

    async def choose(self, name: str, message: dict[str, Any], custom_id: str, value: str) -> None:
        await self._interact(
            name, 3, {"custom_id": custom_id, "component_type": 3, "values": [value]}, message
        )

    async def slash(self, name: str, command: str, channel: int = CHANNEL, **options: Any) -> None:
        """A slash command; `mod_void=...` style names are `/mod void`."""
        registered = {c["name"]: c for c in self.commands}
        group, _, sub = command.partition(" ")
        opts = [
            {"name": k, "type": 4 if isinstance(v, int) else 3, "value": v}
            for k, v in options.items()
            if not isinstance(v, User)
        ]
        resolved: dict[str, Any] = {}
        for k, v in options.items():
            if isinstance(v, User):
                opts.append({"name": k, "type": 6, "value": str(v.id)})
                resolved.setdefault("users", {})[str(v.id)] = v.payload()
                member = v.member()
                member.pop("user")
                resolved.setdefault("members", {})[str(v.id)] = member
        if sub:
            opts = [{"name": sub, "type": 1, "options": opts}]
        data = {
            "id": registered[group]["id"],
            "name": group,
            "type": 1,
            "options": opts,
            "guild_id": str(GUILD),
        }
        if resolved:
            data["resolved"] = resolved
        await self._interact(name, 2, data, channel=channel)

    # ---- reading what the bot did ------------------------------------------------------------

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], *, after: int = 0, timeout: float = 10
    ) -> dict[str, Any]:
        """The first bot message from index `after` on that matches."""

        async def found() -> dict[str, Any]:
            async with self._changed:
                while True:
                    for message in self.messages[after:]:
                        if predicate(message):
                            return message
                    await self._changed.wait()

        return await asyncio.wait_for(found(), timeout)

    async def settle(self, quiet: float = 0.15, timeout: float = 10) -> None:
        """Wait until the bot has been quiet for `quiet` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = -1
        while loop.time() < deadline:
            current = len(self.messages) + sum(
                len(json.dumps(m.get("components"))) for m in self.messages[-3:]
            )
            if current == seen:
                return
            seen = current
            await asyncio.sleep(quiet)
        raise TimeoutError("the bot never went quiet")


def text_of(message: dict[str, Any]) -> str:
    """Everything a user would read in a message: content, embeds and their fields."""
    parts = [message.get("content") or ""]
    for embed in message.get("embeds") or []:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        parts += [f"{f['name']}\n{f['value']}" for f in embed.get("fields") or []]
        parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(p for p in parts if p)


def custom_ids(message: dict[str, Any]) -> list[str]:
    ids = []
    for row in message.get("components") or []:
        for component in row.get("components") or []:
            if "custom_id" in component:
                ids.append(component["custom_id"])
    return ids
