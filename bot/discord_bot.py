"""Discord: a thin adapter over the desk. `!` commands and @mentions, slash commands
(bot/discord_slash.py) and persistent buttons (bot/discord_buttons.py) all become desk calls,
each channel's in the order they arrived; replies travel as messages, embeds, buttons and files
(bot/discord_send.py). The watchdog (bot/discord_watchdog.py) flags edited or deleted roll
messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import aiohttp
import discord
from discord import app_commands

from bot.boards import BoardKeeper
from bot.caller import DIRECT, Caller, readable
from bot.config import Config
from bot.cooldown import Cooldown
from bot.desk import Desk
from bot.desk.commands import COMMANDS
from bot.discord_buttons import is_ours, press
from bot.discord_checkpoints import CheckpointWatch
from bot.discord_send import Transport
from bot.discord_slash import register
from bot.discord_watchdog import Watchdog
from bot.replies import Reply
from bot.sender import Sender
from bot.timekeeper import Timekeeper
from storage.custody import lost_key_notice
from storage.db import Database
from storage.service import GameService, Where, Who, utc_now

log = logging.getLogger("rollkeeper.discord")

EXIT_UNREACHABLE = 3  # Discord could not be reached: worth retrying later
DRAIN_SECONDS = 10.0  # how long a stop waits for the commands in flight
# Seconds a slash command's or button's answer may take before it is acknowledged first and
# followed up (Discord allows 3 from the press, whatever the channel's queue holds).
ACK_WITHIN = 1.0
# What a command that arrives while the bot stops is told: a message that stays (not a
# refusal that is removed), to each command, however many one person sent.
RESTARTING = Reply(text="I'm restarting: back in a moment. Nothing was done: send that again then.")


class RollkeeperBot(discord.Client):
    """The Discord client: one desk over one database."""

    def __init__(
        self,
        config: Config,
        db_path: Path | str,
        *,
        dice: Any = None,
        clock: Callable[[], datetime] = utc_now,
        sync_commands: bool = True,
        **options: Any,
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = config.message_content
        # No message cache: the watchdog reads the raw edit/delete events against the log,
        # and 1,000 cached messages would only be more for the collector to walk.
        options.setdefault("max_messages", None)
        super().__init__(
            intents=intents, allowed_mentions=discord.AllowedMentions.none(), **options
        )
        self.config = config
        self.db_path = db_path
        self.dice = dice  # None: every die derives from the committed seeds (fairdice.py)
        self.clock = clock
        self.timekeeper: Timekeeper | None = None
        self._timekeeping: asyncio.Task[None] | None = None
        self.sender: Sender | None = None
        self._sending: asyncio.Task[None] | None = None
        self.boards: BoardKeeper | None = None
        self._boarding: asyncio.Task[None] | None = None
        self.checkpoints: CheckpointWatch | None = None
        self._watching: asyncio.Task[None] | None = None
        self.ack_within = ACK_WITHIN
        self.sync_commands = sync_commands
        self.tree = app_commands.CommandTree(self)
        self.db: Database | None = None
        self._desk: Desk | None = None
        self._inboxes: weakref.WeakValueDictionary[int, Inbox] = weakref.WeakValueDictionary()
        self.cooldown = Cooldown()
        self.transport = Transport(self, config, self.cooldown, clock)
        self.watchdog: Watchdog | None = None
        self.closing = False
        self._in_flight: set[asyncio.Task[Any]] = set()
        register(self.tree, self, COMMANDS)

    def inbox(self, channel_id: int | None) -> Inbox:
        """One queue per channel: its commands are handled in the order they arrived (each
        event runs as its own task; the lock is taken before the first await, and asyncio's
        locks wake waiters first come, first served)."""
        key = channel_id or 0
        lock = self._inboxes.get(key)
        if lock is None:
            lock = Inbox()
            self._inboxes[key] = lock
        return lock

    def channel_busy(self, channel_id: str) -> bool:
        """Is a command of this channel being handled or waiting its turn?"""
        lock = self._inboxes.get(int(channel_id)) if channel_id.isdigit() else None
        return lock is not None and lock.waiting > 0

    @property
    def desk(self) -> Desk:
        assert self._desk is not None, "the bot is not set up yet"
        return self._desk

    async def open_database(self) -> None:
        """Open the database (before connecting, so a file problem is said before anything
        else happens)."""
        if self.db is None:
            self.db = await Database.open(
                self.db_path, self.config.durability, key_file=self.config.seal_key_file
            )

    async def setup_hook(self) -> None:
        await self.open_database()
        assert self.db is not None
        # Without Message Content the `!` commands never arrive: every hint names the slash
        # command instead.
        prefix = None if self.config.message_content else "/"
        service = GameService(self.db, self.dice, self.clock)
        self._desk = Desk(service, self.config, prefix, outbox=True)
        self.timekeeper = Timekeeper(
            service,
            self._desk.herald,
            self.transport,
            deliver=False,
            checkpoint_channel=self.config.checkpoint_channel,
            retention_days=self.config.retention_days,
        )
        service.follow_every = timedelta(minutes=self.config.follow_minutes)
        self.sender = Sender(service, self.transport, self.sent)
        if self.config.live_board:
            self.boards = BoardKeeper(
                self._desk.context,
                self.transport,
                self.sender,
                self.sent,
                pace=self.config.board_seconds,
                handling=self.channel_busy,
            )
        self.watchdog = Watchdog(self, service, self.config, self.transport)
        self.checkpoints = CheckpointWatch(
            self, service, self.config, self.transport, self.watchdog
        )
        if self.sync_commands:
            await self.tree.sync()

    def sent(self) -> None:
        """The sender posted (or gave up on) a message: for tests that wait on it."""

    async def on_ready(self) -> None:
        """Reminders, deadlines and owed messages run once the gateway is up (and carry on
        across reconnects); what fell due or was not posted while the bot was down goes out
        now, once."""
        if self._sending is None and self.sender is not None:
            self._sending = asyncio.create_task(self.sender.run(), name="sender")
        if self._boarding is None and self.boards is not None:
            self._boarding = asyncio.create_task(self.boards.run(), name="boards")
        if self._watching is None and self.checkpoints is not None:
            self._watching = asyncio.create_task(self.checkpoints.run(), name="checkpoints")
        if self._timekeeping is None and self.timekeeper is not None:
            self._timekeeping = asyncio.create_task(self.timekeeper.run(), name="timekeeper")
            # What exists now (modules, classes, the guild caches) lives as long as the bot:
            # kept out of the cycle collector, whose full passes over it stalled every command
            # for 50-60 ms on a 2-core machine (see the README's benchmark notes).
            gc.freeze()

    async def close(self) -> None:
        """Stop: commands in flight finish and answer first (up to DRAIN_SECONDS), then the
        timekeeper, the gateway and the database close."""
        self.closing = True
        flying = self._in_flight - {asyncio.current_task()}
        if flying:
            await asyncio.wait(flying, timeout=DRAIN_SECONDS)
        if self._watching is not None:
            self._watching.cancel()
            await asyncio.gather(self._watching, return_exceptions=True)
            self._watching = None
        if self._timekeeping is not None and self.timekeeper is not None:
            await self.timekeeper.stop(self._timekeeping)
            self._timekeeping = None
        if self._boarding is not None and self.boards is not None:
            await self.boards.stop(self._boarding)  # a board behind catches up at the next start
            self._boarding = None
        if self._sending is not None and self.sender is not None:
            await self.sender.stop(self._sending)  # what is left goes at the next start
            self._sending = None
        await self.transport.expire_now()
        await super().close()
        if self.db is not None:
            await self.db.close()
            self.db = None

    # ---- who and where -----------------------------------------------------------------------
    # ---- who and where -----------------------------------------------------------------------

    def _is_moderator(self, member: discord.abc.User, channel: Any) -> bool:
        if not isinstance(member, discord.Member):
            return False
        role = self.config.moderator_role
        if role and any(r.name == role or str(r.id) == role for r in member.roles):
            return True
        try:
            return bool(channel.permissions_for(member).manage_messages)
        except (AttributeError, TypeError):
            return False

    def caller_from_message(self, message: discord.Message) -> Caller:
        where = Where(
            str(message.guild.id) if message.guild else DIRECT,
            str(message.channel.id),
            str(message.id),
            message.jump_url,
            readable(message.content),
        )
        who = Who(str(message.author.id), readable(message.author.display_name))
        return Caller(where, who, self._is_moderator(message.author, message.channel))

    def caller_from_interaction(self, interaction: discord.Interaction[Any]) -> Caller:
        channel_id = str(interaction.channel_id)
        guild = str(interaction.guild_id) if interaction.guild_id else DIRECT
        where = Where(
            guild,
            channel_id,
            str(interaction.id),
            f"https://discord.com/channels/{guild}/{channel_id}",
        )
        user = interaction.user
        perms = interaction.permissions
        moderator = bool(perms and perms.manage_messages) or self._is_moderator(
            user, interaction.channel
        )
        return Caller(where, Who(str(user.id), readable(user.display_name)), moderator)

    # ---- messages ----------------------------------------------------------------------------

    def _command_text(self, message: discord.Message) -> str | None:
        content = message.content.strip()
        prefix = self.config.prefix
        if content.startswith(prefix):
            return content[len(prefix) :]
        if self.user is not None:
            for mention in (f"<@{self.user.id}>", f"<@!{self.user.id}>"):
                if content.startswith(mention):
                    return content[len(mention) :].strip().removeprefix(prefix)
        return None

    @contextlib.contextmanager
    def _tracked(self) -> Iterator[None]:
        """A command in flight: a stop waits for it to answer (see `close`)."""
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._in_flight.discard(task)

    async def on_message(self, message: discord.Message) -> None:
        with self._tracked(), self._answering(message.id):
            await self._on_message(message)

    @contextlib.contextmanager
    def _answering(self, about: int) -> Iterator[None]:
        """An answer Discord did not take (a storm of 429s past discord.py's five tries, the
        interaction gone): one line in the log, never a traceback. An applied action's own
        messages are not lost with it: they are the sender's (bot/sender.py)."""
        try:
            yield
        except discord.HTTPException as exc:
            log.warning("the answer to %s was not delivered: %s %s", about, exc.status, exc.text)

    async def _on_message(self, message: discord.Message) -> None:
        if message.author.bot or self._desk is None:
            return
        text = self._command_text(message)
        if text is None or not text.strip():
            return
        caller = self.caller_from_message(message)
        name, command = COMMANDS.find(text)
        answer = self.transport.answer_typed
        if command is not None and command.slow:  # reads the log: don't hold up the channel
            await answer(message, await self.desk.text_command(caller, text), name)
            return
        async with self.inbox(message.channel.id):
            if self.closing:  # stopping: the command is not handled, and says so
                await self.transport.reply_to(message, RESTARTING)
                return
            await answer(message, await self.desk.text_command(caller, text), name)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Every press of one of our buttons or menus, on any message however old, is
        answered here (the views we draw are never kept by discord.py)."""
        if interaction.type is not discord.InteractionType.component or self._desk is None:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id", ""))
        if not is_ours(custom_id):
            return
        value = str((data.get("values") or [""])[0])
        caller = self.caller_from_interaction(interaction)
        work, retire = press(self.desk, caller, custom_id, value)
        await self.handle_interaction(interaction, work, retire=retire)

    async def handle_interaction(
        self,
        interaction: discord.Interaction[Any],
        work: Awaitable[list[Reply]],
        retire: bool = False,
        slow: str | None = None,
    ) -> None:
        with self._tracked(), self._answering(interaction.id):
            await self._handle_interaction(interaction, work, retire, slow)

    async def _handle_interaction(
        self,
        interaction: discord.Interaction[Any],
        work: Awaitable[list[Reply]],
        retire: bool = False,
        slow: str | None = None,
    ) -> None:
        """Run a slash command's or a component's desk call in the channel's order; answer.
        A press that waits behind other commands of its channel, or whose answer is not ready
        within `ack_within` seconds (the database busy), is acknowledged first and followed
        up, so Discord's 3 seconds are kept whatever the queue holds. `slow` ("public" or
        "private"): a command that reads the log, acknowledged at once and answered when done,
        outside the channel's queue."""
        caller = self.caller_from_interaction(interaction)
        if slow is not None:
            await interaction.response.defer(ephemeral=slow == "private", thinking=True)
            replies = await self.desk.guard(work, caller)
            await self.transport.answer_deferred(interaction, replies, private=slow == "private")
            return
        queued_behind = self.inbox(interaction.channel_id).locked()
        job = asyncio.ensure_future(self._in_order(interaction, work, caller))
        done: set[Any] = set()
        if not queued_behind:  # nothing ahead of it: most answers are ready at once
            done, _ = await asyncio.wait({job}, timeout=self.ack_within)
        if not done:
            try:
                await self.transport.acknowledge(interaction)
            except discord.HTTPException as exc:  # too late already: the work still runs
                log.warning("could not acknowledge interaction %s: %s", interaction.id, exc)
        replies = await job
        await self.transport.answer_interaction(interaction, replies, retire=retire)

    async def _in_order(
        self, interaction: discord.Interaction[Any], work: Awaitable[list[Reply]], caller: Caller
    ) -> list[Reply]:
        async with self.inbox(interaction.channel_id):
            if self.closing:
                if hasattr(work, "close"):
                    work.close()  # the desk call never runs
                return [replace(RESTARTING, private=True)]
            return await self.desk.guard(work, caller)

    # ---- the watchdog ------------------------------------------------------------------------

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        if self.watchdog is not None:
            await self.watchdog.edited(payload)

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        if self.watchdog is not None:
            await self.watchdog.deleted(payload)

    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        if self.watchdog is not None:
            await self.watchdog.purged(payload)


class Inbox(asyncio.Lock):
    """A channel's queue of commands (`RollkeeperBot.inbox`), counting those in it: waiting
    their turn or being handled."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = 0

    async def acquire(self) -> Literal[True]:
        self.waiting += 1
        try:
            return await super().acquire()
        except BaseException:
            self.waiting -= 1
            raise

    def release(self) -> None:
        super().release()
        self.waiting -= 1


def run_discord(config: Config, token: str, db_path: Path | str) -> int:
    """Connect and serve until stopped (SIGTERM from a service manager, or Ctrl-C): the command
    in flight finishes, then the gateway and the database close, and the exit status is 0.
    The token is passed to discord.py and never logged."""
    return asyncio.run(_serve(config, token, db_path))


async def _serve(config: Config, token: str, db_path: Path | str) -> int:
    # The database first: a file problem is the one line an operator reads, before anything
    # discord.py has to say.
    db = await Database.open(db_path, config.durability, key_file=config.seal_key_file)
    notice = await lost_key_notice(db)
    if notice is not None:
        print(f"rollkeeper: {notice}", file=sys.stderr)
    discord.utils.setup_logging(level=logging.INFO)
    bot = RollkeeperBot(config, db_path)
    bot.db = db
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: stopping.append(asyncio.create_task(bot.close())))
    try:
        async with bot:
            await bot.start(token)
    except discord.LoginFailure:
        print(
            "rollkeeper: Discord refused the token (check DISCORD_TOKEN or token_file)",
            file=sys.stderr,
        )
        return 2
    except (aiohttp.ClientError, discord.GatewayNotFound, TimeoutError) as exc:
        print(f"rollkeeper: cannot reach Discord ({exc or type(exc).__name__})", file=sys.stderr)
        return EXIT_UNREACHABLE
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        for task in stopping:
            await task
    return 0
