"""A small fake Discord on 127.0.0.1: REST over aiohttp and a gateway websocket, enough for the
real, unmodified discord.py client to log in, receive messages and interactions, and answer.

Tests speak as users (`say`, `click`, `choose`, `slash`, `edit`, `delete`, `bulk_delete`) and
read what the bot posted (`messages`, `wait_for`). Every bot output is a plain dict as Discord
stores it.

It refuses what Discord refuses, with Discord's status and code, and records every refusal in
`refused` (the e2e fixture fails a test that caused one): content over 2,000 characters, embeds
and components over their limits and empty messages (400, code 50035 / 50006), an interaction
answered after 3 seconds or twice (404 code 10062, 400 code 40060), more than 5 messages in 5
seconds to one channel (429 with retry_after), a reply to a message that is gone unless
`fail_if_not_exists` is false, and slash commands Discord would not register.

Shards: `guilds` names several servers (each with its channels). A connection's IDENTIFY
carries `[shard_id, shard_count]` ([0, 1] when absent) and gets READY and GUILD_CREATE for the
servers of its shard only, `(guild_id >> 22) % shard_count`, then only their events; direct
messages go to shard 0. Discord's closes are kept (and recorded in `refused`): 4005 for IDENTIFY
twice on one connection, 4010 for a shard outside the count, a count other live sessions do not
run or a shard another live connection has, 4011 when the servers outnumber
`guilds_per_shard` per shard. A message's nonce with `enforce_nonce` posts it once.

Time is the fake's own (`now`, in seconds), not the wall clock, so nothing here depends on how
fast the machine is: each user action moves it on by `pace` seconds (5 by default: people take
their time, and a fresh rate-limit window per action), or by what the test passes (`pace=0.1`
for a double tap or a flood), and `advance()` moves it explicitly. The interaction deadline and
the rate-limit window are measured in that time, so a bot that answers late is one that answered
after the test moved time on, never one that happened to run on a slow CPU. A 429 tells the bot
to wait retry_after seconds; the fake's clock moves on by that wait and reports it scaled down
(`RETRY_SCALE`) so discord.py sleeps milliseconds instead of seconds.

Discord under load (`Load`, opt-in): the fake's time then flows with the wall clock, scaled
(`time_scale` real seconds per fake second), so what the bot waits on is time passing for
everyone: REST answers that take `latencies` fake seconds each (cycled), a 429 on the channel
limit that the bot must sit out (its retry_after, scaled, and no jump of the clock), a storm of
`storm` answers 429 on message sends (route or global, each with `Retry-After`), and sends held
unanswered (`hold_sends`, as when the bot is killed mid-send). `ack_times` records how long
each interaction waited for its first answer, in fake seconds.
"""

from __future__ import annotations

import asyncio
import base64
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
EPHEMERAL = 1 << 6
LOADING = 1 << 7  # a deferred response's "thinking..." message

CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_LIMITS = {"title": 256, "description": 4096, "footer": 2048, "author": 256}
FIELDS_MAX, FIELD_NAME_MAX, FIELD_VALUE_MAX, EMBED_TOTAL_MAX = 25, 256, 1024, 6000
ROWS_MAX, BUTTONS_PER_ROW, SELECT_OPTIONS_MAX = 5, 5, 25
INTERACTION_DEADLINE = 3.0  # seconds to answer an interaction (or defer it)
TOKEN_LIFETIME = 15 * 60.0  # seconds a deferred interaction may be followed up
RATE_COUNT, RATE_WINDOW = 5, 5.0  # messages per channel per window (and edits, their own)
PINS_MAX = 50  # pinned messages per channel
DEFAULT_PACE = 5.0  # seconds the fake's clock moves before each user action
RETRY_SCALE = 0.001  # real seconds discord.py sleeps per fake second of retry_after


@dataclass
class User:
    """A member: `moderator` holds the moderator role; `manages_messages` holds a role with the
    Manage Messages permission (by default, whoever is a moderator)."""

    id: int
    name: str
    moderator: bool = False
    display: str | None = None  # the display name others see, when not `name`
    manages_messages: bool | None = None

    @property
    def manager(self) -> bool:
        return self.moderator if self.manages_messages is None else self.manages_messages

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name.lower(),
            "global_name": self.display or self.name,
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


class Refusal(Exception):
    """What Discord answers instead of doing what was asked."""

    def __init__(self, status: int, code: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, **self.extra}


def _invalid(path: str, problem: str) -> Refusal:
    """Discord's 50035 Invalid Form Body, naming the field."""
    error = {"code": "INVALID_FORM_BODY", "message": problem}
    return Refusal(400, 50035, "Invalid Form Body", errors={path: {"_errors": [error]}})


def check_message(
    body: dict[str, Any],
    files: list[dict[str, Any]],
    *,
    edit: bool = False,
    embed_total: int = EMBED_TOTAL_MAX,
) -> None:
    """Discord's limits on a message: content, embeds and components."""
    content = body.get("content") or ""
    if len(content) > CONTENT_MAX:
        raise _invalid("content", f"Must be {CONTENT_MAX} or fewer in length ({len(content)}).")
    embeds = body.get("embeds") or []
    if len(embeds) > EMBEDS_MAX:
        raise _invalid("embeds", f"Must be {EMBEDS_MAX} or fewer in length.")
    total = 0
    for index, embed in enumerate(embeds):
        parts = {
            "title": embed.get("title") or "",
            "description": embed.get("description") or "",
            "footer": (embed.get("footer") or {}).get("text") or "",
            "author": (embed.get("author") or {}).get("name") or "",
        }
        for key, text in parts.items():
            if len(text) > EMBED_LIMITS[key]:
                raise _invalid(f"embeds.{index}.{key}", f"Must be {EMBED_LIMITS[key]} or fewer.")
        fields = embed.get("fields") or []
        if len(fields) > FIELDS_MAX:
            raise _invalid(f"embeds.{index}.fields", f"Must be {FIELDS_MAX} or fewer in length.")
        for number, field_ in enumerate(fields):
            name, value = field_.get("name") or "", field_.get("value") or ""
            if not name or len(name) > FIELD_NAME_MAX:
                raise _invalid(f"embeds.{index}.fields.{number}.name", "Must be 1-256 long.")
            if not value or len(value) > FIELD_VALUE_MAX:
                raise _invalid(f"embeds.{index}.fields.{number}.value", "Must be 1-1024 long.")
            total += len(name) + len(value)
        total += sum(len(t) for t in parts.values())
    if total > embed_total:
        raise _invalid("embeds", f"Embed size exceeds maximum size of {embed_total}.")
    check_components(body.get("components") or [])
    if not edit and not (content or embeds or files or body.get("components")):
        raise Refusal(400, 50006, "Cannot send an empty message")
    nonce = body.get("nonce")
    if nonce is not None and len(str(nonce)) > 25:
        raise _invalid("nonce", "Must be 25 or fewer in length.")


def check_components(rows: list[dict[str, Any]]) -> None:
    if len(rows) > ROWS_MAX:
        raise _invalid("components", f"Must be {ROWS_MAX} or fewer in length.")
    seen: set[str] = set()
    for r, row in enumerate(rows):
        items = row.get("components") or []
        if row.get("type") != 1 or not items:
            raise _invalid(f"components.{r}", "An action row holds one to five components.")
        selects = [c for c in items if c.get("type") == 3]
        if len(items) > BUTTONS_PER_ROW or (selects and len(items) > 1):
            raise _invalid(f"components.{r}", "Five buttons, or one select menu, per row.")
        for c, item in enumerate(items):
            where = f"components.{r}.components.{c}"
            custom_id = item.get("custom_id")
            if custom_id is not None:
                if not custom_id or len(custom_id) > 100 or custom_id in seen:
                    raise _invalid(f"{where}.custom_id", "Must be 1-100 long and unique.")
                seen.add(custom_id)
            if len(item.get("label") or "") > 80:
                raise _invalid(f"{where}.label", "Must be 80 or fewer in length.")
            if item.get("type") == 3:
                options = item.get("options") or []
                if not 1 <= len(options) <= SELECT_OPTIONS_MAX:
                    raise _invalid(f"{where}.options", "Must be between 1 and 25 in length.")
                if len(item.get("placeholder") or "") > 150:
                    raise _invalid(f"{where}.placeholder", "Must be 150 or fewer in length.")
                for o, option in enumerate(options):
                    for key in ("label", "value", "description"):
                        if len(option.get(key) or "") > 100:
                            raise _invalid(f"{where}.options.{o}.{key}", "Must be 100 or fewer.")
                    if not option.get("label") or not option.get("value"):
                        raise _invalid(f"{where}.options.{o}", "Label and value are required.")


def check_commands(commands: list[dict[str, Any]]) -> None:
    """What Discord checks when slash commands are registered."""
    if len(commands) > 100:
        raise _invalid("commands", "Must be 100 or fewer in length.")

    def check_options(options: list[dict[str, Any]], where: str) -> None:
        if len(options) > 25:
            raise _invalid(f"{where}.options", "Must be 25 or fewer in length.")
        for number, option in enumerate(options):
            at = f"{where}.options.{number}"
            if not 1 <= len(option.get("name") or "") <= 32:
                raise _invalid(f"{at}.name", "Must be between 1 and 32 in length.")
            if not 1 <= len(option.get("description") or "") <= 100:
                raise _invalid(f"{at}.description", "Must be between 1 and 100 in length.")
            choices = option.get("choices") or []
            if len(choices) > 25:
                raise _invalid(f"{at}.choices", "Must be 25 or fewer in length.")
            if any(len(c.get("name") or "") > 100 for c in choices):
                raise _invalid(f"{at}.choices", "Choice names must be 100 or fewer in length.")
            check_options(option.get("options") or [], at)

    for number, command in enumerate(commands):
        at = str(number)
        if not 1 <= len(command.get("name") or "") <= 32:
            raise _invalid(f"{at}.name", "Must be between 1 and 32 in length.")
        if not 1 <= len(command.get("description") or "") <= 100:
            raise _invalid(f"{at}.description", "Must be between 1 and 100 in length.")
        check_options(command.get("options") or [], at)


@dataclass
class Load:
    """Discord as it behaves under load (see the module's docstring). `time_scale`: real
    seconds per fake second (0.1: the 3-second deadline is 0.3 s of wall clock)."""

    time_scale: float = 0.1
    latencies: tuple[float, ...] = ()  # fake seconds each REST answer takes, cycled
    storm: int = 0  # the next message sends answered 429
    storm_wait: float = 1.0  # fake seconds each storm 429 asks to wait
    storm_global: bool = False  # the storm's 429s are global ones


@dataclass
class FakeDiscord:
    users: list[User]
    channels: list[int] = field(default_factory=lambda: [CHANNEL, OTHER_CHANNEL])
    messages: list[dict[str, Any]] = field(default_factory=list)
    interaction_replies: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    pace: float = DEFAULT_PACE
    load: Load | None = None
    # More servers than the one: each server's id and its channels (`GUILD` with `channels`
    # when not given). Server ids decide their shard: (id >> 22) % shard_count.
    guilds: dict[int, list[int]] | None = None
    guilds_per_shard: int = 2500  # past this, Discord closes with 4011 (sharding required)
    bot_manages: bool = False  # the bot holds Manage Messages (it may pin, delete others')

    @property
    def now(self) -> float:
        """The fake's clock, in seconds (under `load`, it flows with the wall clock)."""
        return self._now + self._flowed()

    @now.setter
    def now(self, value: float) -> None:
        self._now = value - self._flowed()

    def _flowed(self) -> float:
        if self.load is None:
            return 0.0
        return (time.perf_counter() - self._started) / self.load.time_scale

    def __post_init__(self) -> None:
        self._now = 0.0
        self._started = time.perf_counter()
        self._latency = itertools.cycle(self.load.latencies if self.load else ())
        self.ack_times: list[float] = []  # fake seconds from each interaction to its answer
        self.held: list[dict[str, Any]] = []  # sends held unanswered (`hold_sends`)
        self.hold_sends = False
        self.forbid_sends = 0  # the next sends refused for good (403 Missing Permissions)
        self._release = asyncio.Event()
        self._take_held = False
        self.storm_429s = 0  # 429s the storm answered
        self.storm_ended = 0.0  # wall clock of the storm's last 429
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
        self.user_messages: dict[str, dict[str, Any]] = {}  # what users posted, by id
        self.deleted: set[str] = set()  # ids of deleted messages (the bot's or users')
        self.calls: list[str] = []  # every REST call the bot made: "POST /channels/2000/messages"
        self.refused: list[dict[str, Any]] = []  # every refusal: route, status, code, message
        self._sent: dict[int, list[float]] = {}  # channel -> times of accepted messages
        self._edited: dict[int, list[float]] = {}  # channel -> times of accepted edits
        self.pins: dict[int, list[str]] = {}  # channel -> pinned message ids, oldest first
        self.hold_edits = False  # edits wait unanswered until `release_edits` (coalescing)
        self._edits_released = asyncio.Event()
        self._apply_held = True
        self.edits_held = 0
        self.embed_total_max = (
            EMBED_TOTAL_MAX  # a test may make Discord stricter than the bot knows
        )
        if self.guilds is None:
            self.guilds = {GUILD: self.channels}
        self._guild_of = {c: g for g, channels in self.guilds.items() for c in channels}
        self.sessions: dict[web.WebSocketResponse, tuple[int, int]] = {}  # socket -> shard
        self.identified: list[tuple[int, int]] = []  # every accepted IDENTIFY's shard, in order
        self.sequences: dict[web.WebSocketResponse, int] = {}  # the last seq each socket got
        self._nonces: dict[tuple[int, str], dict[str, Any]] = {}  # (channel, nonce) -> message
        self.repeated: list[str] = []  # nonces of sends Discord dropped as repeats

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(middlewares=[self._refusals])
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
        app.router.add_delete(api + "/channels/{channel}/messages/{message}", self._delete_message)
        for pins in (
            "/channels/{channel}/messages/pins/{message}",
            "/channels/{channel}/pins/{message}",
        ):
            app.router.add_put(api + pins, self._pin)
            app.router.add_delete(api + pins, self._unpin)
        app.router.add_get(api + "/channels/{channel}", self._get_channel)
        app.router.add_get(api + "/channels/{channel}/messages", self._history)
        app.router.add_put(api + "/applications/{app}/commands", self._put_commands)
        app.router.add_post(api + "/interactions/{id}/{token}/callback", self._callback)
        app.router.add_post(api + "/webhooks/{app}/{token}", self._followup)
        app.router.add_patch(
            api + "/webhooks/{app}/{token}/messages/{message}", self._edit_followup
        )
        app.router.add_delete(
            api + "/webhooks/{app}/{token}/messages/{message}", self._delete_followup
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

    def release(self, take: bool) -> None:
        """Answer the held sends: `take` posts them (Discord took them; the bot never heard),
        else they are lost."""
        self.hold_sends = False
        self._take_held = take
        self._release.set()

    async def held_send(self, timeout: float = 20, saying: str = "") -> dict[str, Any]:
        """The first send held (see `hold_sends`) whose text has `saying`, once it arrives
        (a live board posted meanwhile is held too)."""

        def first() -> dict[str, Any] | None:
            return next((b for b in self.held if saying in text_of(b)), None)

        async def found() -> dict[str, Any]:
            async with self._changed:
                while (body := first()) is None:
                    await self._changed.wait()
                return body

        return await asyncio.wait_for(found(), timeout)

    async def ready(self) -> None:
        await asyncio.wait_for(self._identified.wait(), 10)

    def advance(self, seconds: float) -> None:
        """Move the fake's clock on (time passing with nobody doing anything)."""
        self.now += seconds

    def _step(self, pace: float | None) -> None:
        self.now += self.pace if pace is None else pace

    @web.middleware
    async def _refusals(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Counts the bot's REST calls and turns a Refusal into Discord's error response."""
        route = f"{request.method} {request.path.removeprefix('/api/v10')}"
        if request.path.startswith("/api/"):
            self.calls.append(route)
        try:
            response: web.StreamResponse = await handler(request)
        except Refusal as refusal:
            self.refused.append(
                {"route": route, "status": refusal.status, "at": self.now, **refusal.body()}
            )
            headers = {}
            if refusal.status == 429:
                headers = {"Via": "1.1 fake", "Retry-After": str(refusal.extra["retry_after"])}
                if refusal.extra.get("global"):
                    headers["X-RateLimit-Global"] = "true"
            response = self._json(refusal.body(), status=refusal.status, headers=headers)
        if self.load is not None and request.path.startswith("/api/"):
            latency = next(self._latency, 0.0)
            await asyncio.sleep(latency * self.load.time_scale)  # the answer takes its time
        return response

    # ---- payload helpers ---------------------------------------------------------------------

    def snowflake(self) -> int:
        return next(self._ids)

    @staticmethod
    def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        # discord.py parses JSON only for exactly this content type (no charset).
        return web.Response(
            body=json.dumps(data).encode(),
            status=status,
            headers={"Content-Type": "application/json", **(headers or {})},
        )

    def guild_of(self, channel_id: int | str) -> int:
        """The server a channel belongs to."""
        return self._guild_of.get(int(channel_id), GUILD)

    def _channel(self, channel_id: int) -> dict[str, Any]:
        return {
            "id": str(channel_id),
            "type": 0,
            "name": f"dice-{channel_id}",
            "guild_id": str(self.guild_of(channel_id)),
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        }

    def _guild(self, guild: int = GUILD) -> dict[str, Any]:
        everyone = {
            "id": str(guild),
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
        assert self.guilds is not None
        return {
            "id": str(guild),
            "name": "Play by post" if guild == GUILD else f"Play by post {guild}",
            "owner_id": "1",
            "roles": [everyone, mod, manager],
            "channels": [self._channel(c) for c in self.guilds[guild]],
            "members": [u.member() for u in [self.bot_user, *self.users]],
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

    @property
    def bot_user(self) -> User:
        return User(BOT_ID, "rollkeeper", manages_messages=self.bot_manages)

    def _message(self, author: User, channel: int, content: str, **extra: Any) -> dict[str, Any]:
        return {
            "id": str(self.snowflake()),
            "channel_id": str(channel),
            "guild_id": str(self.guild_of(channel)),
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
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                if data["op"] == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif data["op"] == 2:
                    await self._identify(ws, data["d"])
        finally:
            self._sockets.remove(ws)
            self.sessions.pop(ws, None)
        return ws

    def _shard_problem(self, ws: web.WebSocketResponse, shard: Any) -> tuple[int, str] | None:
        """What Discord closes the connection for at IDENTIFY: (close code, reason), or None."""
        if ws in self.sessions:
            return 4005, "Already authenticated: IDENTIFY sent twice on one connection"
        valid = isinstance(shard, list) and len(shard) == 2
        shard_id, count = (int(shard[0]), int(shard[1])) if valid else (-1, 0)
        if not 0 <= shard_id < count:
            return 4010, f"Invalid shard {shard}"
        live = set(self.sessions.values())
        if any(c != count for _, c in live):
            return 4010, f"Invalid shard {shard}: other sessions run {live.pop()[1]} shards"
        if (shard_id, count) in live:
            return 4010, f"Invalid shard {shard}: shard {shard_id} is already identified"
        assert self.guilds is not None
        if len(self.guilds) > self.guilds_per_shard * count:
            return 4011, f"Sharding required: {len(self.guilds)} servers on {count} shards"
        return None

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        shard = data.get("shard", [0, 1])
        problem = self._shard_problem(ws, shard)
        if problem is not None:
            code, reason = problem
            self.refused.append(
                {"route": "GATEWAY IDENTIFY", "status": code, "code": code, "message": reason}
            )
            await ws.close(code=code, message=reason.encode())
            return
        shard_id, count = int(shard[0]), int(shard[1])
        self.sessions[ws] = (shard_id, count)
        self.identified.append((shard_id, count))
        self.intents = int(data.get("intents", 0))
        assert self.guilds is not None
        mine = [g for g in self.guilds if (g >> 22) % count == shard_id]
        await self._dispatch_to(
            ws,
            "READY",
            {
                "v": 10,
                "user": BOT.payload(),
                "guilds": [{"id": str(g), "unavailable": True} for g in mine],
                "session_id": f"fake-session-{self.snowflake()}",
                "shard": [shard_id, count],
                "resume_gateway_url": str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY),
                "application": {"id": str(APP_ID), "flags": 0},
            },
        )
        for guild in mine:
            await self._dispatch_to(ws, "GUILD_CREATE", self._guild(guild))
        self._identified.set()
        async with self._changed:
            self._changed.notify_all()

    async def _dispatch_to(self, ws: web.WebSocketResponse, event: str, data: Any) -> None:
        self._seq += 1
        self.sequences[ws] = self._seq
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))

    @staticmethod
    def _routed_by(data: Any) -> int | None:
        """The server whose shard an event goes to, as Discord routes it; 0 (so shard 0) for
        a direct message; None (every connection) for an event of no server."""
        guild = data.get("guild_id") if isinstance(data, dict) else None
        if guild is None and isinstance(data, dict) and "channel_id" in data:
            return 0  # a direct message
        return None if guild is None else int(guild)

    async def dispatch(self, event: str, data: Any) -> None:
        target = self._routed_by(data)
        for ws in list(self._sockets):
            session = self.sessions.get(ws)
            if session is None:
                continue
            shard_id, count = session
            if target is None or (target >> 22) % count == shard_id:
                await self._dispatch_to(ws, event, data)

    async def shards_ready(self, shards: set[int], timeout: float = 20) -> None:
        """Wait until a live connection has identified for each of `shards`."""

        async def found() -> None:
            async with self._changed:
                while not shards <= {s for s, _ in self.sessions.values()}:
                    await self._changed.wait()

        await asyncio.wait_for(found(), timeout)

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
        check_commands(body)
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
                            "base64": base64.b64encode(data).decode(),  # pictures: the bytes
                        }
                    )
            return payload, files
        return await request.json(), []

    def _known(self, message_id: str) -> dict[str, Any] | None:
        """A message that exists (the bot's or a user's) and was not deleted."""
        if message_id in self.deleted:
            return None
        found = self.user_messages.get(message_id)
        return found or next((m for m in self.messages if m["id"] == message_id), None)

    def _reference(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """A reply's reference, checked as Discord does: a reply to a message that is gone
        fails unless `fail_if_not_exists` is false (then it is sent as a plain message)."""
        reference = body.get("message_reference")
        if not reference:
            return None
        if self._known(str(reference.get("message_id"))) is not None:
            return dict(reference)
        if reference.get("fail_if_not_exists", True) is False:
            return None
        raise _invalid("message_reference", "REPLIES_UNKNOWN_MESSAGE: Unknown message")

    def _storm(self) -> None:
        """Under `load`, the next `storm` sends are answered 429 whatever the bot does."""
        load = self.load
        if load is None or load.storm <= 0:
            return
        load.storm -= 1
        self.storm_429s += 1
        self.storm_ended = time.perf_counter()  # the last so far
        raise Refusal(
            429,
            0,
            "You are being rate limited.",
            retry_after=load.storm_wait * load.time_scale,
            waited=load.storm_wait,
            **{"global": load.storm_global},
        )

    def _rate(self, channel: int, bucket: dict[int, list[float]] | None = None) -> None:
        """5 messages per 5 seconds per channel: a 429 telling the bot how long to wait. The
        bot waits (its retry comes that much later in the fake's time; under `load`, time
        flows while it waits)."""
        times = self._sent if bucket is None else bucket
        window = [t for t in times.get(channel, []) if t > self.now - RATE_WINDOW]
        if len(window) >= RATE_COUNT:
            wait = window[0] + RATE_WINDOW - self.now
            if self.load is None:
                self.now += wait
            scale = RETRY_SCALE if self.load is None else self.load.time_scale
            raise Refusal(
                429,
                20028,
                "You are being rate limited.",
                retry_after=wait * scale,
                waited=wait,
                channel=str(channel),
                **{"global": False},
            )
        times[channel] = [*window, self.now]

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
        message["_at"] = self.now
        async with self._changed:
            self.messages.append(message)
            self._changed.notify_all()
        return message

    async def _create_message(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        channel = int(request.match_info["channel"])
        recipient = next((u for u, c in self.dm_channels.items() if c == channel), None)
        if recipient in self.closed_dms:
            raise Refusal(403, 50007, "Cannot send messages to this user")
        check_message(body, files, embed_total=self.embed_total_max)
        reference = self._reference(body)
        nonce = body.get("nonce")
        if nonce and body.get("enforce_nonce"):  # Discord drops a repeat with the same nonce
            earlier = self._nonces.get((channel, str(nonce)))
            if earlier is not None:
                self.repeated.append(str(nonce))
                return self._json(earlier)
        if self.hold_sends:  # not answered until `release`: the bot is killed waiting
            self.held.append(body)
            async with self._changed:
                self._changed.notify_all()
            await self._release.wait()
            if not self._take_held:  # it never reached Discord
                raise Refusal(503, 0, "Service unavailable")
        if self.forbid_sends > 0:  # a permission missing for a while
            self.forbid_sends -= 1
            raise Refusal(403, 50013, "Missing Permissions")
        self._storm()
        self._rate(channel)
        extra: dict[str, Any] = {"nonce": nonce}
        if reference is not None:
            extra["message_reference"] = reference
        message = await self._record(channel, body, files, **extra)
        if nonce:
            self._nonces[(channel, str(nonce))] = message
        if recipient is not None:
            message.pop("guild_id", None)
        return self._json(message)

    async def _edit_message(self, request: web.Request) -> web.Response:
        """An edit, as Discord takes it: only the bot's own message (403, code 50005), one
        that exists (404, code 10008), within the limits, 5 edits per 5 seconds per channel."""
        body, files = await self._body(request)
        check_message(body, files, edit=True, embed_total=self.embed_total_max)
        message = self._existing(request.match_info["message"])
        if message["author"]["id"] != str(BOT_ID):
            raise Refusal(403, 50005, "Cannot edit a message authored by another user")
        if self.hold_edits:  # answered at `release_edits`: more moves arrive meanwhile
            self.edits_held += 1
            await self._edits_released.wait()
            if not self._apply_held:  # it never reached Discord
                raise Refusal(503, 0, "Service unavailable")
        self._rate(int(message["channel_id"]), self._edited)
        async with self._changed:
            message.update(  # what is sent as null is cleared, as Discord stores it
                {
                    k: v if v is not None else ("" if k == "content" else [])
                    for k, v in body.items()
                    if k in ("content", "embeds", "components")
                }
            )
            message["edited_timestamp"] = TIMESTAMP
            message.setdefault("_edits", []).append(self.now)
            self._changed.notify_all()
        return self._json({k: v for k, v in message.items() if not k.startswith("_")})

    def release_edits(self, apply: bool = True) -> None:
        """Answer the held edits: `apply` makes them (else they are lost, a 503)."""
        self.hold_edits = False
        self._apply_held = apply
        self._edits_released.set()

    def _existing(self, message_id: str) -> dict[str, Any]:
        found = self._known(message_id)
        if found is None:
            raise Refusal(404, 10008, "Unknown Message")
        return found

    def _may_manage(self) -> None:
        if not self.bot_manages:
            raise Refusal(403, 50013, "Missing Permissions")

    async def _pin(self, request: web.Request) -> web.Response:
        """Pin: needs Manage Messages (403, code 50013), at most 50 per channel (400, code
        30003). Discord then posts its "pinned a message" notice in the channel."""
        self._may_manage()
        channel = int(request.match_info["channel"])
        message = self._existing(request.match_info["message"])
        pinned = self.pins.setdefault(channel, [])
        if message["id"] in pinned:
            return web.Response(status=204)
        if len(pinned) >= PINS_MAX:
            raise Refusal(400, 30003, "Maximum number of pins reached (50)")
        pinned.append(message["id"])
        message["pinned"] = True
        notice = {"content": "", "embeds": [], "components": []}
        await self._record(
            channel, notice, [], type=6, message_reference={"message_id": message["id"]}
        )
        return web.Response(status=204)

    async def _unpin(self, request: web.Request) -> web.Response:
        self._may_manage()
        channel = int(request.match_info["channel"])
        message = self._existing(request.match_info["message"])
        if message["id"] not in self.pins.get(channel, []):
            raise Refusal(404, 10008, "Unknown Message")
        self.pins[channel].remove(message["id"])
        message["pinned"] = False
        return web.Response(status=204)

    async def _history(self, request: web.Request) -> web.Response:
        """A channel's messages, newest first, as Discord reads them back (`limit` up to 100,
        `before` an id); deleted ones are gone."""
        channel = request.match_info["channel"]
        limit = min(int(request.query.get("limit", "50")), 100)
        before = int(request.query.get("before", str(2**63)))
        found = [
            {k: v for k, v in m.items() if not k.startswith("_")}
            for m in reversed(self.messages)
            if m["channel_id"] == channel
            and m["id"] not in self.deleted
            and "_deleted" not in m
            and int(m["id"]) < before
        ]
        return self._json(found[:limit])

    async def _delete_message(self, request: web.Request) -> web.Response:
        message_id = request.match_info["message"]
        message = self._existing(message_id)
        if message["author"]["id"] != str(BOT_ID):
            self._may_manage()  # another's message: only with Manage Messages
        channel = int(message["channel_id"])
        if message_id in self.pins.get(channel, []):
            self.pins[channel].remove(message_id)
        await self._mark_deleted(message_id)
        return web.Response(status=204)

    async def _mark_deleted(self, message_id: str) -> None:
        async with self._changed:
            self.deleted.add(message_id)
            for message in self.messages:
                if message["id"] == message_id:
                    message["_deleted"] = self.now
            self._changed.notify_all()

    def _live_interaction(self, interaction_id: str) -> dict[str, Any]:
        interaction = self._interactions.get(interaction_id)
        if interaction is None or self.now - interaction["_at"] > INTERACTION_DEADLINE:
            raise Refusal(404, 10062, "Unknown interaction")
        if interaction.get("_answered"):
            raise Refusal(400, 40060, "Interaction has already been acknowledged.")
        return interaction

    def _by_token(self, token: str) -> dict[str, Any]:
        interaction = next((i for i in self._interactions.values() if i["token"] == token), None)
        if interaction is None or not interaction.get("_answered"):
            raise Refusal(404, 10015, "Unknown Webhook")
        if self.now - interaction["_at"] > TOKEN_LIFETIME:
            raise Refusal(401, 50027, "Invalid Webhook Token")
        return interaction

    async def _callback(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        found = self._interactions.get(request.match_info["id"])
        if found is not None and not found.get("_answered"):
            self.ack_times.append(self.now - found["_at"])
        interaction = self._live_interaction(request.match_info["id"])
        kind = body["type"]
        data = body.get("data") or {}
        result: dict[str, Any] = {
            "interaction": {"id": request.match_info["id"], "type": interaction["type"]}
        }
        channel = int(interaction["channel_id"])
        if kind == 4:  # a new message
            check_message(data, files, embed_total=self.embed_total_max)
            message = await self._record(
                channel, data, files, interaction_id=request.match_info["id"]
            )
            interaction["_original"] = message["id"]
            result["interaction"]["response_message_id"] = message["id"]
            result["interaction"]["response_message_ephemeral"] = bool(
                data.get("flags", 0) & EPHEMERAL
            )
            result["resource"] = {"type": 4, "message": message}
        elif kind == 5:  # "thinking...": the answer follows
            flags = LOADING | (data.get("flags", 0) & EPHEMERAL)
            message = await self._record(
                channel, {"flags": flags}, [], interaction_id=request.match_info["id"]
            )
            interaction["_original"], interaction["_loading"] = message["id"], True
        elif kind == 6:  # a component's deferred update: the clicked message is the original
            interaction["_original"] = interaction["message"]["id"]
        elif kind == 7:  # update the clicked message
            check_message(data, files, edit=True, embed_total=self.embed_total_max)
            message = self.find(interaction["message"]["id"])
            async with self._changed:
                message.update(
                    {k: v for k, v in data.items() if k in ("content", "embeds", "components")}
                )
                self._changed.notify_all()
            interaction["_original"] = message["id"]
            result["resource"] = {"type": 7, "message": message}
        elif kind == 8:  # autocomplete suggestions
            choices = data.get("choices") or []
            if len(choices) > 25 or any(len(c.get("name") or "") > 100 for c in choices):
                raise _invalid("data.choices", "At most 25 choices of up to 100 characters.")
        else:
            raise _invalid("type", f"Unsupported callback type {kind}")
        interaction["_answered"] = True
        async with self._changed:
            self.interaction_replies.append({"type": kind, "data": data, "at": self.now})
            self._changed.notify_all()
        return self._json(result)

    async def _followup(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        interaction = self._by_token(request.match_info["token"])
        check_message(body, files, embed_total=self.embed_total_max)
        if interaction.get("_loading"):  # the first followup fills the "thinking" message
            message = self.find(interaction["_original"])
            async with self._changed:
                message.update(
                    {k: v for k, v in body.items() if k in ("content", "embeds", "components")}
                )
                message["attachments"] = [{"id": str(self.snowflake()), **f} for f in files]
                message["flags"] &= ~LOADING
                message["_at"] = self.now
                interaction["_loading"] = False
                self._changed.notify_all()
            return self._json(message)
        message = await self._record(int(interaction["channel_id"]), body, files)
        return self._json(message)

    def _webhook_message(self, interaction: dict[str, Any], message_id: str) -> dict[str, Any]:
        wanted = interaction.get("_original") if message_id == "@original" else message_id
        if wanted is None or wanted in self.deleted:
            raise Refusal(404, 10008, "Unknown Message")
        return self.find(wanted)

    async def _edit_followup(self, request: web.Request) -> web.Response:
        body, files = await self._body(request)
        interaction = self._by_token(request.match_info["token"])
        check_message(body, files, edit=True, embed_total=self.embed_total_max)
        message = self._webhook_message(interaction, request.match_info["message"])
        async with self._changed:
            message.update(
                {k: v for k, v in body.items() if k in ("content", "embeds", "components")}
            )
            if files:
                message["attachments"] = [{"id": str(self.snowflake()), **f} for f in files]
            if message["flags"] & LOADING:
                message["flags"] &= ~LOADING
                interaction["_loading"] = False
            message["_at"] = self.now
            self._changed.notify_all()
        return self._json(message)

    async def _delete_followup(self, request: web.Request) -> web.Response:
        interaction = self._by_token(request.match_info["token"])
        message = self._webhook_message(interaction, request.match_info["message"])
        interaction["_loading"] = False
        await self._mark_deleted(message["id"])
        return web.Response(status=204)

    # ---- acting as users ---------------------------------------------------------------------

    def user(self, name: str) -> User:
        return next(u for u in self.users if u.name == name)

    def find(self, message_id: str) -> dict[str, Any]:
        return next(m for m in self.messages if m["id"] == str(message_id))

    async def say(
        self, name: str, content: str, channel: int = CHANNEL, pace: float | None = None
    ) -> dict[str, Any]:
        self._step(pace)
        author = self.user(name)
        mentions = [BOT.payload()] if f"<@{BOT_ID}>" in content else []
        message = self._message(author, channel, content, member=author.member(), mentions=mentions)
        self.user_messages[message["id"]] = message
        delivered = dict(message)
        if not self.intents & MESSAGE_CONTENT and not mentions:
            delivered["content"] = ""  # what Discord sends a bot without the intent
        await self.dispatch("MESSAGE_CREATE", delivered)
        return message

    async def say_dm(self, name: str, content: str, pace: float | None = None) -> dict[str, Any]:
        """`name` writes to the bot in their direct messages (no server, no member)."""
        self._step(pace)
        author = self.user(name)
        channel = int(self._dm_channel(author)["id"])
        message = self._message(author, channel, content)
        message.pop("guild_id")
        self.user_messages[message["id"]] = message
        await self.dispatch("MESSAGE_CREATE", dict(message))
        return message

    def offered_in_dms(self, command: str) -> bool:
        """Whether Discord offers a registered command in a direct message with the bot: its
        `contexts` include BOT_DM (1), or, without `contexts`, `dm_permission` is not false."""
        found = next(c for c in self.commands if c["name"] == command.partition(" ")[0])
        contexts = found.get("contexts")
        if contexts is not None:
            return 1 in contexts
        return found.get("dm_permission") is not False

    async def edit(self, message: dict[str, Any], content: str, pace: float | None = None) -> None:
        """The author edits their message (the update carries the whole message)."""
        self._step(pace)
        message.update(content=content, edited_timestamp=TIMESTAMP)
        await self.dispatch("MESSAGE_UPDATE", dict(message))

    async def update(
        self, message: dict[str, Any], pace: float | None = None, **changes: Any
    ) -> None:
        """A change that is not an edit of the text: a pin, a link preview's embed."""
        self._step(pace)
        message.update(changes)
        await self.dispatch("MESSAGE_UPDATE", dict(message))

    async def delete(self, message: dict[str, Any], pace: float | None = None) -> None:
        self._step(pace)
        self.deleted.add(message["id"])
        await self.dispatch(
            "MESSAGE_DELETE",
            {
                "id": message["id"],
                "channel_id": message["channel_id"],
                "guild_id": str(self.guild_of(message["channel_id"])),
            },
        )

    async def bulk_delete(self, messages: list[dict[str, Any]], pace: float | None = None) -> None:
        """A moderator's purge (or a ban that removes history): one event for many messages."""
        self._step(pace)
        self.deleted.update(m["id"] for m in messages)
        await self.dispatch(
            "MESSAGE_DELETE_BULK",
            {
                "ids": [m["id"] for m in messages],
                "channel_id": messages[0]["channel_id"],
                "guild_id": str(self.guild_of(messages[0]["channel_id"])),
            },
        )

    async def _interact(
        self,
        name: str,
        kind: int,
        data: dict[str, Any],
        message: dict[str, Any] | None = None,
        channel: int = CHANNEL,
        pace: float | None = None,
        dm: bool = False,
    ) -> str:
        self._step(pace)
        user = self.user(name)
        interaction_id = str(self.snowflake())
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": str(APP_ID),
            "type": kind,
            "data": data,
            "guild_id": str(self.guild_of(channel)),
            "channel_id": str(channel),
            "channel": self._channel(channel),
            "member": user.member(),
            "token": f"token-{interaction_id}",
            "version": 1,
            "app_permissions": str(BASIC),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(self.guild_of(channel))},
            "context": 0,
            "attachment_size_limit": 8_000_000,
        }
        if dm:  # in the user's direct messages with the bot: no server, the user, not a member
            for key in ("guild_id", "member", "guild_locale"):
                payload.pop(key)
            payload["data"].pop("guild_id", None)
            payload.update(
                channel=self._dm_channel(user),
                channel_id=self._dm_channel(user)["id"],
                user=user.payload(),
                context=1,
                authorizing_integration_owners={"0": "0"},
            )
        if message is not None:
            # Discord sends the message as it is now (after every edit), not as the tapper saw it.
            current = self.find(message["id"])
            payload["message"] = {k: v for k, v in current.items() if not k.startswith("_")}
        self._interactions[interaction_id] = {**payload, "_at": self.now}
        await self.dispatch("INTERACTION_CREATE", payload)
        return interaction_id

    async def click(
        self, name: str, message: dict[str, Any], custom_id: str, pace: float | None = None
    ) -> str:
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._interact(name, 3, data, message, pace=pace)

    async def choose(
        self,
        name: str,
        message: dict[str, Any],
        custom_id: str,
        value: str,
        pace: float | None = None,
    ) -> str:
        data = {"custom_id": custom_id, "component_type": 3, "values": [value]}
        return await self._interact(name, 3, data, message, pace=pace)

    def _command_data(
        self, command: str, options: dict[str, Any], channel: int = CHANNEL
    ) -> dict[str, Any]:
        registered = {c["name"]: c for c in self.commands}
        group, _, sub = command.partition(" ")
        opts = [
            {
                "name": k,
                "type": 5 if isinstance(v, bool) else 4 if isinstance(v, int) else 3,
                "value": v,
            }
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
            "guild_id": str(self.guild_of(channel)),
        }
        if resolved:
            data["resolved"] = resolved
        return data

    async def slash(
        self,
        name: str,
        command: str,
        channel: int = CHANNEL,
        pace: float | None = None,
        **options: Any,
    ) -> str:
        """A slash command; `mod_void=...` style names are `/mod void`."""
        data = self._command_data(command, options, channel)
        return await self._interact(name, 2, data, channel=channel, pace=pace)

    async def slash_dm(self, name: str, command: str, **options: Any) -> str:
        """A slash command in `name`'s direct messages with the bot, as Discord allows it: a
        command it does not offer there cannot be sent at all."""
        if not self.offered_in_dms(command):
            raise AssertionError(f"Discord does not offer /{command} in direct messages")
        data = self._command_data(command, options)
        return await self._interact(name, 2, data, dm=True)

    async def autocomplete(
        self, name: str, command: str, option: str, typed: str, **others: Any
    ) -> list[dict[str, Any]]:
        """What the bot suggests while `name` types `typed` into `option` of `command`."""
        data = self._command_data(command, {**others, option: typed})
        options = data["options"]
        if options and options[0]["type"] == 1:
            options = options[0]["options"]
        for o in options:
            if o["name"] == option:
                o["focused"] = True
        start = len(self.interaction_replies)
        await self._interact(name, 4, data, pace=0)

        async def answered() -> list[dict[str, Any]]:
            async with self._changed:
                while True:
                    for reply in self.interaction_replies[start:]:
                        if reply["type"] == 8:
                            return list(reply["data"].get("choices") or [])
                    await self._changed.wait()

        return await asyncio.wait_for(answered(), 10)

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
            current = (
                len(self.calls)
                + len(self.messages)
                + sum(len(json.dumps(m.get("components"))) for m in self.messages[-3:])
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
