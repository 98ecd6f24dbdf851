"""Shards on PostgreSQL: which process owns which servers' games, and proof of it in every write.

Discord splits a bot's servers into `count` shards by `(guild_id >> 22) % count` (direct
messages arrive on shard 0). A process runs a range of shards and owns the games of their
servers. Ownership is a lease row per shard in `shard_leases`: who holds it (`holder`), since
which takeover (`epoch`, one more at every new holder) and until when (`expires_at`, the
database's clock, so the processes' clocks never matter). The holder renews it every
`heartbeat` seconds for `expiry` seconds; a holder that misses its expiry has lost the shard.

Fencing: every write transaction of a shard's connection first runs `FENCE` (`ShardScope.fence`,
from `Database.transaction`), which reads the lease row `FOR SHARE` and requires this holder,
this epoch and an unexpired lease. A takeover updates that row, so it waits for the writes in
flight to commit, and every write after it finds another epoch and is refused
(`ShardMovedError`, and the process stops): a stale process can never write, even while it
still believes it holds the lease. `fence()` and `holds()` are the same check on a raw asyncpg
connection (the lease tests and the shard bench's write path).

Queues: each process reads only its shards' reminders and messages (`ShardScope`), and claims
them (`FOR UPDATE SKIP LOCKED`: storage/outbox.py, storage/deadlines.py), so two readers of one
queue (a stale holder beside the new one, two senders of one process) never take the same
work: a reminder fires once, and a message is posted once by its nonce. A lease taken tells
`on_take` (the shard's caches are dropped), and a shard's connection made again after a loss
checks its lease (`ShardScope.recheck`). Work one shard's process must do for another's games (a
direct message's `tz` reaches shard 0, a forget names a person of any server) goes to the
owner through `shard_work`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from storage.backends import base
from storage.backends.errors import StorageError
from storage.backends.pg_schema import MIGRATION_2


class Forgetful(Protocol):
    """What a shard's connection does when its lease is taken again (storage/db.py)."""

    def forget_caches(self) -> None: ...


# A connection of its own or one lent by a pool: the statements here take either.
Conn: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"

log = logging.getLogger("rollkeeper.shards")

DIRECT = "@dm"  # what a direct message names as its server (bot/caller.py's DIRECT)

# The tables this module owns, PostgreSQL's only (storage/backends/pg_schema.py, migration 2:
# `install` makes them too, so a shard process can start on a database of any version).
SCHEMA = MIGRATION_2
# The advisory lock held while the shards' tables are made (`install`) and while a shard's
# database opens and migrates (bot/shards.py): 'rkOP'.
SCHEMA_LOCK = 0x726B4F50


class ShardPlanError(ValueError):
    """`--shard-count` and `--shards` do not describe shards this process can run."""


class FencedError(Exception):
    """A write refused because its lease (holder, epoch, expiry) is no longer the shard's."""


class ShardMovedError(StorageError):
    """What a player reads when their command's write was refused by the fence: this process
    no longer owns their server (it is stopping; the new owner answers the next command)."""


class ShardBusyError(Exception):
    """A shard is held by a live process: one line naming it and when its lease ends."""


def shard_of(guild_id: int | str | None, count: int) -> int:
    """The shard Discord sends a server's events to; direct messages go to shard 0."""
    if guild_id is None or guild_id in ("", DIRECT):
        return 0
    return (int(guild_id) >> 22) % count


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """Shards `first`..`last` (inclusive) of `count`."""

    count: int
    first: int
    last: int

    @classmethod
    def parse(cls, count: int, shards: str | None) -> ShardPlan:
        """`--shard-count N --shards A-B` (or `A`; all of them when `shards` is None)."""
        if count < 1:
            raise ShardPlanError(f"--shard-count must be 1 or more (got {count})")
        text = (shards or f"0-{count - 1}").strip()
        first_text, _, last_text = text.partition("-")
        try:
            first = int(first_text)
            last = int(last_text) if last_text else first
        except ValueError:
            raise ShardPlanError(
                f"--shards takes a range of shard numbers like 0-1 (got {text!r})"
            ) from None
        if not 0 <= first <= last < count:
            raise ShardPlanError(
                f"--shards {text} is not within shards 0-{count - 1} of --shard-count {count}"
            )
        return cls(count, first, last)

    @property
    def shards(self) -> range:
        return range(self.first, self.last + 1)

    def owns(self, guild_id: int | str | None) -> bool:
        return shard_of(guild_id, self.count) in self.shards

    def __str__(self) -> str:
        return f"{self.first}-{self.last} of {self.count}"


@dataclass(frozen=True, slots=True)
class Lease:
    """A shard held by `holder` since takeover `epoch`, until `expires_at` (database time)."""

    shard: int
    holder: str
    epoch: int
    expires_at: datetime


ID_BLOCK = 1000  # log row ids a shard's connection takes at a time (`reserve_ids`)


async def install(conn: Conn) -> None:
    """Create this module's tables where they are missing, and start the log's id blocks
    above every id the log holds. One process at a time, and never while another process's
    database opens (its migrations make some of the same objects: PostgreSQL refuses two
    `CREATE OR REPLACE FUNCTION` of one function at once, "tuple concurrently updated")."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK)
        for statement in SCHEMA:
            await conn.execute(statement)
        if await conn.fetchval("SELECT to_regclass('log')") is not None:
            await conn.execute(
                "SELECT setval('rk_log_id_blocks', GREATEST("
                "(SELECT last_value FROM rk_log_id_blocks), "
                f"(SELECT COALESCE(MAX(id), 0) FROM log) / {ID_BLOCK} + 1))"
            )


async def id_block(conn: base.Conn) -> int:
    """The first of ID_BLOCK log row ids no other connection will ever take (blocks from a
    sequence: no lock, no wait, whichever shard asks)."""
    async with conn.execute("SELECT nextval('rk_log_id_blocks')") as cursor:
        (block,) = await cursor.fetchone()
    return int(block) * ID_BLOCK


def _interval(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


async def take(conn: Conn, shard: int, holder: str, expiry: float) -> Lease | None:
    """Take a shard that nobody holds, or whose holder let its lease expire: a new epoch.
    None when a live holder has it."""
    row = await conn.fetchrow(
        "INSERT INTO shard_leases (shard, holder, epoch, expires_at) "
        "VALUES ($1, $2, 1, clock_timestamp() + $3::interval) "
        "ON CONFLICT (shard) DO UPDATE SET holder = EXCLUDED.holder, "
        "epoch = shard_leases.epoch + 1, expires_at = EXCLUDED.expires_at "
        "WHERE shard_leases.expires_at <= clock_timestamp() "
        "RETURNING epoch, expires_at",
        shard,
        holder,
        _interval(expiry),
    )
    return None if row is None else Lease(shard, holder, int(row[0]), row[1])


async def renew(conn: Conn, lease: Lease, expiry: float) -> Lease | None:
    """Extend a lease still held (same holder, same epoch, not expired); None if it is lost."""
    row = await conn.fetchrow(
        "UPDATE shard_leases SET expires_at = clock_timestamp() + $4::interval "
        "WHERE shard = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() "
        "RETURNING expires_at",
        lease.shard,
        lease.holder,
        lease.epoch,
        _interval(expiry),
    )
    return None if row is None else Lease(lease.shard, lease.holder, lease.epoch, row[0])


async def release(conn: Conn, lease: Lease) -> None:
    """Give a shard up at a clean stop: a standby may take it at once (a new epoch)."""
    await conn.execute(
        "UPDATE shard_leases SET expires_at = clock_timestamp() "
        "WHERE shard = $1 AND holder = $2 AND epoch = $3",
        lease.shard,
        lease.holder,
        lease.epoch,
    )


async def holders(conn: Conn) -> list[tuple[Lease, bool]]:
    """Every shard's lease and whether it is live now."""
    rows = await conn.fetch(
        "SELECT shard, holder, epoch, expires_at, expires_at > clock_timestamp() "
        "FROM shard_leases ORDER BY shard"
    )
    return [(Lease(int(r[0]), str(r[1]), int(r[2]), r[3]), bool(r[4])) for r in rows]


# The fence as a query: the lease row, share-locked until the transaction ends, if `lease`
# ($1 shard, $2 holder, $3 epoch) is still the shard's live lease. One statement that writes
# can carry it as a CTE (`WITH fence AS (...) UPDATE ... WHERE EXISTS (SELECT 1 FROM fence)`).
FENCE = (
    "SELECT 1 FROM shard_leases WHERE shard = $1 AND holder = $2 AND epoch = $3 "
    "AND expires_at > clock_timestamp() FOR SHARE"
)


def fence_args(lease: Lease) -> tuple[int, str, int]:
    return lease.shard, lease.holder, lease.epoch


def fenced_out(lease: Lease) -> FencedError:
    return FencedError(
        f"shard {lease.shard}: lease epoch {lease.epoch} of {lease.holder} is no longer held"
    )


async def fence(conn: Conn, lease: Lease) -> None:
    """Inside a write transaction: refuse it unless `lease` is still the shard's live lease.
    The row stays share-locked until the transaction ends, so a takeover waits for it."""
    if await conn.fetchrow(FENCE, *fence_args(lease)) is None:
        raise fenced_out(lease)


async def holds(conn: Conn, lease: Lease) -> bool:
    """Is `lease` still the shard's live lease (after a fenced statement changed nothing)?"""
    return await conn.fetchrow(FENCE, *fence_args(lease)) is not None


# ---- queues ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Work:
    """Work a shard's owner must do: `kind` names the handler, `body` its JSON arguments."""

    id: int
    shard: int
    kind: str
    body: dict[str, Any]


# ---- the keeper ------------------------------------------------------------------------------


@dataclass
class ShardKeeper:
    """A process's leases: taken at start (or, as a standby, as soon as their holders are
    gone), renewed every `heartbeat` seconds, and the first one lost reported (`lost`)."""

    pool: asyncpg.Pool[Any]
    holder: str
    plan: ShardPlan
    heartbeat: float = 2.0
    expiry: float = 6.0
    leases: dict[int, Lease] = field(default_factory=dict)
    lost: asyncio.Event = field(default_factory=asyncio.Event)
    why: str = ""
    # Told of every lease taken (a new epoch): what this process kept in memory of the
    # shard's servers may be stale (ShardScope.attach: its database's and service's caches).
    on_take: list[Callable[[Lease], None]] = field(default_factory=list)

    def _took(self, lease: Lease) -> None:
        self.leases[lease.shard] = lease
        for told in self.on_take:
            told(lease)

    async def take_all(self) -> None:
        """Take every shard of the plan now. Raises `ShardBusyError` when a live process holds
        one (the ones taken are given back)."""
        async with self.pool.acquire() as conn:
            for shard in self.plan.shards:
                lease = await take(conn, shard, self.holder, self.expiry)
                if lease is None:
                    busy = {h.shard: h for h, live in await holders(conn) if live}.get(shard)
                    await self.release_all()
                    who = f"{busy.holder} until {busy.expires_at:%H:%M:%S} UTC" if busy else "?"
                    raise ShardBusyError(
                        f"shard {shard} is held by {who}; stop that process or start this one "
                        "with --standby to take over when it is gone"
                    )
                self._took(lease)

    async def wait_for_any(self, look: float | None = None) -> list[int]:
        """As a standby: look every `look` seconds (the heartbeat) until some shard of the
        plan is free, and take every free one; the shards taken."""
        while True:
            taken = await self.take_free()
            if taken:
                return taken
            await asyncio.sleep(self.heartbeat if look is None else look)

    async def take_free(self) -> list[int]:
        """Take the plan's shards that nobody holds now (not already ours)."""
        taken = []
        async with self.pool.acquire() as conn:
            for shard in self.plan.shards:
                if shard in self.leases:
                    continue
                lease = await take(conn, shard, self.holder, self.expiry)
                if lease is not None:
                    self._took(lease)
                    taken.append(shard)
                    log.info("took shard %d (epoch %d)", shard, lease.epoch)
        return taken

    async def beat(self) -> None:
        """Renew every lease once; a lease that cannot be renewed is lost (`lost` set)."""
        async with self.pool.acquire() as conn:
            for shard, lease in list(self.leases.items()):
                renewed = await renew(conn, lease, self.expiry)
                if renewed is None:
                    self.lose(f"the lease of shard {shard} (epoch {lease.epoch}) was lost")
                    return
                self.leases[shard] = renewed

    async def run(self) -> None:
        """Heartbeat until a lease is lost (or the database cannot be reached for longer than
        the leases last, which loses them too)."""
        while not self.lost.is_set():
            try:
                async with asyncio.timeout(self.expiry):
                    await self.beat()
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                log.warning("heartbeat failed: %s", exc)
                if self._expired():
                    self.lose(f"the leases could not be renewed before they expired ({exc})")
                    return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.heartbeat):
                    await self.lost.wait()

    def _expired(self) -> bool:
        loop_now = datetime.now(tz=next(iter(self.leases.values())).expires_at.tzinfo)
        return any(lease.expires_at <= loop_now for lease in self.leases.values())

    def lose(self, why: str) -> None:
        log.error("%s: stopping", why)
        self.why = why
        self.lost.set()

    async def release_all(self) -> None:
        with contextlib.suppress(OSError, asyncpg.PostgresError):
            async with self.pool.acquire() as conn:
                for lease in self.leases.values():
                    await release(conn, lease)
        self.leases.clear()


@dataclass
class ShardScope:
    """What one shard's database connection may touch: the servers of `shard` (of the plan's
    count), every write transaction fenced by the keeper's lease for it. Set on a `Database`
    (storage/db.py) by the shard runner; SQLite and unsharded PostgreSQL have none."""

    keeper: ShardKeeper
    shard: int

    @property
    def count(self) -> int:
        return self.keeper.plan.count

    @property
    def everything_else(self) -> bool:
        """Shard 0 also does what belongs to no server: direct messages, the free-roll days
        of channels of no server, retention, followers' batches."""
        return self.shard == 0

    def attach(self, db: Forgetful) -> None:
        """`db` is this shard's connection: when the shard's lease is taken again (a new
        epoch: another process may have held it meanwhile) its caches are dropped."""

        def taken(lease: Lease) -> None:
            if lease.shard == self.shard:
                db.forget_caches()

        self.keeper.on_take.append(taken)

    async def recheck(self, raw: Conn) -> None:
        """After the shard's connection was made again: is the lease still this process's?
        If it was lost while the database was away, the keeper is told (the process stops,
        exit 5); the fence refuses every write meanwhile."""
        lease = self.keeper.leases.get(self.shard)
        if lease is None or self.keeper.lost.is_set():
            return
        if not await holds(raw, lease):
            self.keeper.lose(
                f"the lease of shard {self.shard} (epoch {lease.epoch}) was lost while the "
                "database was out of reach"
            )

    def guilds(self, column: str) -> str:
        """A condition: the server named by `column` is on this shard (plain integers, so it
        fits in any statement whatever its placeholders)."""
        return f"rk_shard({column}, {int(self.count)}) = {int(self.shard)}"

    def channels(self, column: str) -> str:
        """A condition: the channel named by `column` has its newest game on this shard (a
        channel without a game, or no channel (a direct message), is shard 0's)."""
        newest = (
            f"(SELECT rk_shard(sg.guild_id, {int(self.count)}) FROM games sg "
            f"WHERE sg.channel_id = {column} ORDER BY sg.id DESC LIMIT 1)"
        )
        return f"COALESCE({newest}, 0) = {int(self.shard)}"

    async def fence(self, conn: base.Conn) -> None:
        """Inside a write transaction: refuse it unless this process still holds the shard
        (and, when it does not, tell the keeper: the process stops)."""
        lease = self.keeper.leases.get(self.shard)
        if lease is not None and not self.keeper.lost.is_set():
            async with conn.execute(FENCE, fence_args(lease)) as cursor:
                if await cursor.fetchone() is not None:
                    return
            self.keeper.lose(f"a write found the lease of shard {self.shard} gone")
        raise ShardMovedError(
            "Nothing was recorded: this server is moving to another of the bot's processes. "
            "Send that again in a moment."
        )


# ---- work for other shards, through the backend's connection ---------------------------------

PREFS_CHANGED = "prefs"  # a player's settings changed: move their reminders on your shard


async def post_prefs_work(
    conn: base.Conn, scope: ShardScope, user_id: str, shift: timedelta
) -> None:
    """Inside the transaction that stored a player's settings: tell every other shard to read
    them again and move the reminders of the player's turns there (`refresh_prefs`). Every
    shard, not only those where the player has the turn: one where they sit waiting for it,
    or only looked at their settings once, remembers them too (the deadline of their next
    turn, the board that says they are away)."""
    await _post_to_others(
        conn, scope, PREFS_CHANGED, {"user": user_id, "shift": shift.total_seconds()}
    )


FORGET = "forget"  # a player was forgotten: erase what your servers' games hold of them


async def post_forget_work(
    conn: base.Conn, scope: ShardScope, user_id: str, names: Sequence[str]
) -> None:
    """Inside the transaction that forgot a player: every other shard erases their seats,
    reminders and messages in its servers' games (privacy.erase_elsewhere)."""
    await _post_to_others(conn, scope, FORGET, {"user": user_id, "names": list(names)})


async def _post_to_others(
    conn: base.Conn, scope: ShardScope, kind: str, body: dict[str, Any]
) -> None:
    """Work of `kind` for every shard but this one, in the caller's transaction."""
    text = json.dumps(body, sort_keys=True)
    await conn.executemany(
        "INSERT INTO shard_work (shard, kind, body) VALUES (?, ?, CAST(? AS JSONB))",
        [(shard, kind, text) for shard in range(scope.count) if shard != scope.shard],
    )


async def owed_to(conn: base.Conn, scope: ShardScope, limit: int = 20) -> list[Work]:
    """The work other shards left for this one, oldest first."""
    async with conn.execute(
        "SELECT id, shard, kind, CAST(body AS TEXT) FROM shard_work "
        "WHERE shard = ? AND done_at IS NULL ORDER BY id LIMIT ?",
        (scope.shard, limit),
    ) as cursor:
        rows = await cursor.fetchall()
    return [Work(int(r[0]), int(r[1]), str(r[2]), json.loads(r[3])) for r in rows]


async def mark_done(conn: base.Conn, scope: ShardScope, done: Sequence[Work]) -> None:
    """Inside a fenced transaction: the work is done (by this holder, at this epoch)."""
    lease = scope.keeper.leases[scope.shard]
    await conn.executemany(
        "UPDATE shard_work SET done_at = clock_timestamp(), done_by = ?, done_epoch = ? "
        "WHERE id = ? AND done_at IS NULL",
        [(lease.holder, lease.epoch, w.id) for w in done],
    )
