"""The database the bot plays on, whichever backend holds it (storage/backends/): a SQLite file
(the default, zero set-up) or a PostgreSQL database named by a URI. `Database` adds what is
the same on both: the schema check, the seal key, one write at a time in this process, the
chain heads and ids known to the one writer, and a failed write turned into the player's
refusal. A failed write changes nothing, in the database or in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.backends import is_url
from storage.backends.base import Backend, Conn, Reader
from storage.backends.errors import (
    DatabaseFileError,
    Durability,
    SchemaError,
    ServerError,
    StorageError,
)
from storage.backends.sqlite import (
    SqliteBackend,
    file_problem,
    lock_path,
    storage_refusal,
)
from storage.backends.sqlite import connect_readonly as _sqlite_reader
from storage.dmseal import seal_plain_direct_messages
from storage.legacycards import seal_open_card_games
from storage.migrations import MIGRATIONS
from storage.seal import ENV_KEY, SealKey, SealKeyError, create_key, default_key_file, find_key

if TYPE_CHECKING:
    from storage.shards import ShardScope

__all__ = [
    "LATEST",
    "Database",
    "DatabaseFileError",
    "Durability",
    "SchemaError",
    "ServerError",
    "StorageError",
    "connect_readonly",
    "file_problem",
    "key_home",
    "lock_path",
    "storage_refusal",
]

log = logging.getLogger("rollkeeper.storage")

LATEST = len(MIGRATIONS)


def connect_readonly(target: Path | str) -> Reader:
    """A read-only connection for a worker thread: a SQLite file's (never writing to it, even
    on a read-only disk), or a PostgreSQL database's (storage/backends/postgres.py)."""
    if is_url(str(target)):
        from storage.backends.postgres import connect_reader

        return connect_reader(str(target))
    return _sqlite_reader(target)


def key_home(target: Path | str) -> Path:
    """The path whose `.key` sibling is the database's default seal key file: the SQLite file
    itself (`game.sqlite3` -> `game.key` beside it), or for PostgreSQL `<database name>` in
    the current folder (`<database name>.key`)."""
    if is_url(str(target)):
        from storage.backends.postgres import key_home as pg_key_home

        return pg_key_home(str(target))
    return Path(target)


class Database:
    """The project's database. `await Database.open(target)` to play (one such process per
    database), `await Database.open(target, migrate=False)` to read beside it (audit tools).
    `target`: a SQLite file's path, or a `postgresql://` URI."""

    def __init__(self, backend: Backend, seal: SealKey | None = None) -> None:
        self.backend = backend
        self.conn: Conn = backend.conn
        # What names the database for an operator (a file's path, or a URI without password),
        # and what the readers open (connect_readonly).
        self.where = backend.where
        # The file (SQLite), or the path whose `.key` sibling is the default seal key file
        # (PostgreSQL: `<database name>.postgresql` in the current folder; storage/seal.py).
        self.path = backend.key_home
        self.seal = seal
        # The id of the key this database's seeds were sealed with, when that key is missing:
        # the bot runs without one (finished games need none; see storage/custody.py).
        self.lost_key: str | None = None
        self.key_place = ""  # where the key was looked for (for what the operator is told)
        self.readonly = True
        self._write_lock = asyncio.Lock()
        # Each chain's last (seq, hash) as committed, known to the only writer: read from the
        # database when not known (at start, and after any failed write). `staged_heads` is
        # where an uncommitted append left them: they become the heads only when it commits.
        self.heads: dict[str, tuple[int, str]] = {}
        self.staged_heads: dict[str, tuple[int, str]] = {}
        # The next row id to hand out (ids are reserved as rows are chained; a failed write
        # leaves a gap, never a reuse). None until first read.
        self.next_id: int | None = None
        # The first ids of rows chained outside a write transaction and not yet written or
        # dropped: who wrote them is not indexed past them (storage/rolllog.py).
        self.unwritten: set[int] = set()
        # Pseudonyms by (guild, user), as committed (storage/people.py).
        self.pseudonyms: dict[tuple[str, str], str] = {}
        self.names: dict[tuple[str, str], str] = {}  # and their display names, as stored
        # One shard's connection on PostgreSQL (`rollkeeper run --shard-count`): what it may
        # touch, and the fence every write transaction passes first (storage/shards.py).
        self.scope: ShardScope | None = None
        self.ids_end = 0  # a shard's connection: the end of its block of ids (rolllog.py)
        # Told when what this process keeps in memory may no longer be what the database holds
        # (a lost connection made again, a shard's lease taken again): the service's caches.
        self.stale: list[Callable[[], None]] = []
        # The lanes (channel, user) messages were queued for in the open write transaction
        # (storage/outbox.py `queue`): the sender is told once it commits (`on_queued`).
        self.queued_lanes: set[tuple[str | None, str | None]] = set()
        self.on_queued: Callable[[set[tuple[str | None, str | None]]], None] = lambda _: None
        backend.after_reconnect(self._reconnected)

    @classmethod
    async def open(
        cls,
        path: str | Path,
        durability: Durability = Durability.FULL,
        migrate: bool = True,
        key_file: Path | None = None,
        scope: ShardScope | None = None,
    ) -> Database:
        """Open (creating if needed) to write, bring the schema up to date and load the key
        that seals its unrevealed seeds (`key_file`, default `<file>.key`, or the environment;
        see storage/seal.py). With `migrate=False`: read-only, nothing in the database changes.

        `scope`: one shard's connection on PostgreSQL, one writer of several: its lease fences
        every write (storage/shards.py), and it shares the writer guard with the other shards.

        Raises `DatabaseFileError` (or its `SchemaError`, `ServerError`) with a one-line reason.
        """
        backend = await _open_backend(path, durability, migrate, shared=scope is not None)
        db = cls(backend)
        db.scope = scope
        if scope is not None:
            scope.attach(db)
        db.readonly = not migrate
        try:
            await db._check_version(migrate=migrate)
            if migrate:
                await db._load_seal(key_file)
                await db._seal_legacy_cards()
        except BaseException as exc:
            await db.close(failed=True)
            problem = backend.problem(exc)
            if problem is not None:
                raise problem from None
            if isinstance(exc, SealKeyError):
                raise DatabaseFileError(str(exc)) from None
            raise
        return db

    async def close(self, failed: bool = False) -> None:
        await self.backend.close(failed)

    async def version(self) -> int:
        return await self.backend.version()

    async def _check_version(self, migrate: bool) -> None:
        current = await self.version()
        latest = self.backend.latest()
        if current > latest:
            raise SchemaError(
                f"{self.where} was written by a newer rollkeeper (schema {current}; this "
                f"version knows up to {latest}). Upgrade rollkeeper before opening it."
            )
        if current < latest and not migrate:
            if current == 0 and await self.backend.is_empty():
                raise SchemaError(f"{self.where} is empty: it is not a rollkeeper database yet")
            raise SchemaError(
                f"{self.where} has schema {current}, older than {latest}: start the bot on it "
                "once (`rollkeeper run --db FILE`) to upgrade it."
            )
        await self.migrate(latest)

    async def migrate(self, target: int) -> None:
        """Apply migrations up to `target`, each in its own transaction with its version bump."""
        async with self._write_lock:
            await self.backend.migrate(target)

    async def recorded_key(self) -> str | None:
        """The id of the key this file's seeds are sealed with (None: no key yet)."""
        async with self.conn.execute("SELECT key_id FROM seal_key") as cursor:
            row = await cursor.fetchone()
        return None if row is None else str(row[0])

    async def _load_seal(self, key_file: Path | None) -> None:
        """The key must be the one this file's seeds were sealed with. A file without a key
        gets one (a new key file); a file whose key is missing opens without one, never with a
        new one (`rollkeeper seal lost` makes that decision, not a start-up)."""
        self.key_place = f"${ENV_KEY} or {key_file or default_key_file(self.path)}"
        recorded = await self.recorded_key()
        found = find_key(self.path, key_file)
        if recorded is None:
            self.seal = found or create_key(self.path, key_file)
            await self._seal_plaintext()
            return
        if found is None:
            self.lost_key = recorded  # said by whoever opened it (storage/custody.py)
            return
        if found.key_id != recorded:
            raise SealKeyError(found.mismatch(self.where, recorded))
        self.seal = found

    async def _seal_plaintext(self) -> None:
        """A file from before sealing has its plaintext seeds sealed now (their old pages
        overwritten), and records its key."""
        assert self.seal is not None
        async with self.erasing(rebuild=False) as conn:
            async with conn.execute("SELECT id, seed FROM games WHERE seed IS NOT NULL") as cur:
                games = await cur.fetchall()
            for game_id, seed in games:
                if not self.seal.is_sealed(seed):
                    await conn.execute(
                        "UPDATE games SET seed = ? WHERE id = ?",
                        (self.seal.seal(bytes.fromhex(seed)), game_id),
                    )
            async with conn.execute("SELECT channel_id, day, seed FROM channel_seeds") as cur:
                days = await cur.fetchall()
            for channel, day, seed in days:
                if not self.seal.is_sealed(seed):
                    await conn.execute(
                        "UPDATE channel_seeds SET seed = ? WHERE channel_id = ? AND day = ?",
                        (self.seal.seal(bytes.fromhex(seed)), channel, day),
                    )
            await conn.execute(
                "INSERT INTO seal_key (only_row, key_id) VALUES (1, ?)", (self.seal.key_id,)
            )

    async def _seal_legacy_cards(self) -> None:
        """The last release's open card games: their faces and snapshot sealed, once there is
        a key (storage/legacycards.py); and every direct message the outbox holds in the clear
        (storage/dmseal.py)."""
        if self.seal is None:
            return
        async with self._write_lock:
            sealed = await seal_open_card_games(self.backend, self.seal)
        if sealed:
            log.info("sealed the cards of %d actions of the last release's open games", sealed)
        async with self._write_lock:
            sealed = await seal_plain_direct_messages(self.backend, self.seal)
        if sealed:
            log.info("sealed %d direct messages the outbox held in the clear", sealed)

    def forget_caches(self) -> None:
        """Drop what this process keeps of the database's contents (chain heads, pseudonyms,
        and through `stale` the service's games, options and settings): read again as used.
        A shard's connection also takes a new block of log ids for its next write: another
        process may have chained rows with later ids meanwhile (ids order each chain)."""
        self._failed()
        if self.scope is not None:
            self.next_id, self.ids_end = None, 0
        for told in self.stale:
            told()

    async def _reconnected(self, raw: Any) -> None:
        """A lost connection was made again: a write in flight may or may not have committed,
        and a shard's lease may have moved meanwhile (checked before any statement runs)."""
        self.forget_caches()
        if self.scope is not None:
            await self.scope.recheck(raw)

    def _failed(self) -> None:
        self.heads.clear()
        self.staged_heads.clear()
        self.pseudonyms.clear()
        self.names.clear()
        self.queued_lanes.clear()

    def _committed(self) -> None:
        self.heads.update(self.staged_heads)
        self.staged_heads.clear()
        if self.queued_lanes:
            lanes, self.queued_lanes = self.queued_lanes, set()
            self.on_queued(lanes)

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """A storage failure becomes the player's refusal (and one line in the bot's log)."""
        try:
            yield
        except self.backend.errors as exc:
            refusal = self.backend.refusal(exc)
            if refusal is None:
                raise
            if not self.backend.unreachable(exc):  # else the backend has said so already
                log.error("write to %s failed: %s", self.where, exc)
            raise refusal from None

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[Conn]:
        """The write lock without a transaction: for one self-contained statement (SQLite runs
        each statement atomically in its own transaction). A shard's statement runs in a
        transaction with its fence."""
        if self.scope is not None:
            async with self.transaction() as conn:
                yield conn
            return
        async with self._write_lock:
            with self._translated():
                try:
                    yield self.conn
                except BaseException:
                    self._failed()
                    raise
                self._committed()

    @asynccontextmanager
    async def settled(self) -> AsyncIterator[Conn]:
        """The connection with no write transaction open on it, for a read that must see only
        what has committed: on SQLite a read on the one connection also sees what an open
        transaction has written, which may yet roll back (a message the sender must not post)."""
        async with self._write_lock:
            yield self.conn

    @asynccontextmanager
    async def erasing(self, rebuild: bool) -> AsyncIterator[Conn]:
        """One write transaction that erases (Backend.erasing, under this database's lock):
        its bytes overwritten, then scrubbed from the journal (`rebuild`: and free space)."""
        await self.backend.secure_delete(True)
        try:
            async with self.transaction() as conn:
                yield conn
            await self.backend.scrub(rebuild)
        finally:
            await self.backend.secure_delete(False)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """One write transaction: committed when the block ends, rolled back if it (or the
        commit itself) fails. The log's head moves only once the commit has succeeded."""
        async with self._write_lock:
            with self._translated():
                await self.backend.begin()
                try:
                    if self.scope is not None:
                        await self.scope.fence(self.conn)
                    yield self.conn
                    await self.backend.commit()
                except BaseException:
                    self._failed()
                    # A failed COMMIT may already have rolled back (SQLITE_FULL can).
                    with contextlib.suppress(*self.backend.errors):
                        await self.backend.rollback()
                    raise
                self._committed()


async def _open_backend(
    target: str | Path, durability: Durability, migrate: bool, shared: bool = False
) -> Backend:
    if is_url(str(target)):
        from storage.backends.postgres import PostgresBackend

        return await PostgresBackend.open(str(target), durability, writer=migrate, shared=shared)
    if migrate:
        return await SqliteBackend.open(Path(target), durability)
    return await SqliteBackend.open_readonly(Path(target))
