"""`rollkeeper run --shard-count N --shards A-B [--standby]`: one process running Discord shards
A to B, one discord.py client per shard, each owning the games of its servers, on PostgreSQL.

The process takes its shards' leases first (storage/shards.py): a shard a live process holds
stops the start (exit status 6) unless `--standby`, which waits until a holder is gone and
takes its shards (and keeps watching for more). A heartbeat renews the leases; when one is lost
(another process took it after this one stalled, the database stayed out of reach until it
expired, or a shard's connection made again after a loss found it gone) every client closes at
once and the process exits with status 5: its writes would be refused by the fence anyway. A
connection lost for less than the lease lasts is made again by itself (storage/backends/
postgres.py): the commands that met it were refused, the next ones work. A stop (SIGTERM,
Ctrl-C) lets the commands in flight finish, gives the leases back so a standby takes them at
once, and exits 0.

Whatever a holder applied but did not post is in the outbox: the new holder's sender posts it
with the same nonces, so Discord keeps one copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import discord

from bot.config import Config
from bot.discord_bot import EXIT_UNREACHABLE, RollkeeperBot
from storage import shards
from storage.backends.postgres import shown_url
from storage.db import Database
from storage.shards import ShardBusyError, ShardKeeper, ShardPlan, ShardScope

log = logging.getLogger("rollkeeper.shards")

EXIT_LEASE_LOST = 5  # a shard's lease was lost: another process owns it now
EXIT_SHARD_BUSY = 6  # a shard is held by a live process (start with --standby to wait)


class ShardStartError(Exception):
    """The shards cannot be run with what was given: one line for the operator."""


def holder_name() -> str:
    """This process, as the lease rows name it: host, pid and a token (a restarted process
    with the same pid is another holder)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


async def open_pool(url: str, size: int = 4) -> asyncpg.Pool[Any]:
    """A pool to the shards' database; what goes wrong is one line (ShardStartError)."""
    where = shown_url(url)
    try:
        pool = await asyncpg.create_pool(url, min_size=1, max_size=size, timeout=10)
    except asyncpg.InvalidCatalogNameError:
        raise ShardStartError(f"there is no such database at {where}: create it first") from None
    except (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError) as exc:
        raise ShardStartError(f"PostgreSQL refused the login at {where}: {exc}") from None
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        raise ShardStartError(f"cannot reach PostgreSQL at {where}: {exc}") from None
    async with pool.acquire() as conn:
        await shards.install(conn)
    return pool


# A shard's client, made for the shard under its lease: ready to `start(token)`.
BotFactory = Callable[[ShardKeeper, int], Awaitable[RollkeeperBot]]


@dataclass
class ShardRunner:
    """The clients of the shards this process holds, started as their leases are taken."""

    keeper: ShardKeeper
    token: str
    make_bot: BotFactory
    bots: dict[int, tuple[RollkeeperBot, asyncio.Task[None]]] = field(default_factory=dict)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    async def start_held(self) -> None:
        for shard in sorted(self.keeper.leases):
            if shard not in self.bots:
                bot = await self.make_bot(self.keeper, shard)
                task = asyncio.create_task(bot.start(self.token), name=f"shard {shard}")
                self.bots[shard] = (bot, task)
                log.info("running shard %d of %d", shard, self.keeper.plan.count)

    async def watch(self) -> None:
        """Take the plan's shards whose holders are gone, and run them."""
        while not self.stopping.is_set() and not self.keeper.lost.is_set():
            with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                if await self.keeper.take_free():
                    await self.start_held()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.keeper.heartbeat):
                    await self.stopping.wait()

    async def run(self) -> int:
        """Serve until stopped (0), a lease is lost (EXIT_LEASE_LOST) or a client ends."""
        await self.start_held()
        beating = asyncio.create_task(self.keeper.run(), name="heartbeat")
        watching = asyncio.create_task(self.watch(), name="standby watch")
        stop = asyncio.create_task(self.stopping.wait())
        while True:
            clients = [task for _, task in self.bots.values()]
            done, _ = await asyncio.wait(
                {beating, stop, *clients}, timeout=self.keeper.heartbeat,
                return_when=asyncio.FIRST_COMPLETED,
            )  # fmt: skip
            if done:
                break
        lost = self.keeper.lost.is_set()
        ended = [(n, t) for n, (_, t) in self.bots.items() if t.done() and not t.cancelled()]
        await self.close(drain=not lost)
        for task in (beating, watching, stop):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if lost:
            print(
                f"rollkeeper: {self.keeper.why}; stopping (exit {EXIT_LEASE_LOST})", file=sys.stderr
            )
            return EXIT_LEASE_LOST
        await self.keeper.release_all()
        if ended and not self.stopping.is_set():
            shard, task = ended[0]
            return client_ended(shard, task.exception())
        return 0

    async def close(self, drain: bool) -> None:
        """Close every client: with `drain`, the commands in flight finish first (a clean
        stop); without, at once (a lost lease: their writes would be refused)."""
        for bot, _ in self.bots.values():
            if not drain:
                bot.closing = True  # commands that arrive now are not handled
        await asyncio.gather(
            *(bot.close() for bot, _ in self.bots.values()), return_exceptions=True
        )
        for _, task in self.bots.values():
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def client_ended(shard: int, exc: BaseException | None) -> int:
    """A shard's client stopped by itself: one line, and the exit status `run` gives."""
    if isinstance(exc, discord.LoginFailure):
        print("rollkeeper: Discord refused the token (check DISCORD_TOKEN)", file=sys.stderr)
        return 2
    why = f"{type(exc).__name__}: {exc}" if exc is not None else "it closed"
    print(f"rollkeeper: shard {shard} lost Discord ({why})", file=sys.stderr)
    return EXIT_UNREACHABLE


async def serve_shards(
    config: Config, token: str, url: str, plan: ShardPlan, standby: bool, make_bot: BotFactory
) -> int:
    """Take the leases (or wait for them, as a standby), then run the shards' clients."""
    pool = await open_pool(url, size=2 + 2 * (plan.last - plan.first + 1))
    discord.utils.setup_logging(level=logging.INFO)
    keeper = ShardKeeper(pool, holder_name(), plan, config.shards.heartbeat, config.shards.expiry)
    loop = asyncio.get_running_loop()
    runner = ShardRunner(keeper, token, make_bot)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runner.stopping.set)
    try:
        if standby:
            print(f"rollkeeper: standby for shards {plan}, as {keeper.holder}", file=sys.stderr)
            waiting = asyncio.create_task(keeper.wait_for_any())
            stop = asyncio.create_task(runner.stopping.wait())
            await asyncio.wait({waiting, stop}, return_when=asyncio.FIRST_COMPLETED)
            for task in (waiting, stop):
                task.cancel()
            if runner.stopping.is_set():
                await keeper.release_all()
                return 0
        else:
            await keeper.take_all()
        print(
            f"rollkeeper: holding shards {sorted(keeper.leases)} of {plan.count}", file=sys.stderr
        )
        return await runner.run()
    except ShardBusyError as exc:
        print(f"rollkeeper: {exc}", file=sys.stderr)
        return EXIT_SHARD_BUSY
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await keeper.release_all()  # only leases still ours (holder and epoch) are let go
        await pool.close()


def shard_bot_factory(config: Config, url: str) -> BotFactory:
    """The bot for one shard: its own connection to `url` (no one-writer guard: the lease is
    the guard), every write transaction fenced by the shard's lease, reminders and messages of
    its own servers only (storage/shards.py's ShardScope)."""

    async def make(keeper: ShardKeeper, shard: int) -> RollkeeperBot:
        scope = ShardScope(keeper, shard)
        async with keeper.pool.acquire() as conn:  # one process at a time brings the schema up
            await conn.execute("SELECT pg_advisory_lock($1)", shards.SCHEMA_LOCK)
            try:
                db = await Database.open(
                    url, config.durability, key_file=config.seal_key_file, scope=scope
                )
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", shards.SCHEMA_LOCK)
        bot = RollkeeperBot(
            config,
            url,
            shard_id=shard,
            shard_count=keeper.plan.count,
            sync_commands=shard == 0,  # the slash commands are the application's: set once
        )
        bot.db = db
        return bot

    return make
