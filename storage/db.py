"""One SQLite file through aiosqlite: pragmas on every connection, ordered migrations tracked
with `PRAGMA user_version`, and one write transaction at a time.

aiosqlite runs one connection on one thread, so two coroutines' statements would interleave
inside a transaction; `transaction()` serialises writers with a lock and uses BEGIN IMMEDIATE.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum
from pathlib import Path

import aiosqlite

from storage.migrations import MIGRATIONS


class Durability(StrEnum):
    """`full`: fsync at every commit (survives power loss). `normal`: WAL without the fsync
    (survives the process being killed, may lose the last commits on power loss)."""

    FULL = "full"
    NORMAL = "normal"


class SchemaError(RuntimeError):
    """The database's schema does not match this version of rollkeeper."""


LATEST = len(MIGRATIONS)


MMAP_BYTES = 2 << 30
CACHE_KIB = 32 << 10


class Database:
    """The project's SQLite file. Open with `await Database.open(path)`."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._write_lock = asyncio.Lock()
        # The roll log's last (id, hash), known to the only writer; None until first read and
        # after any rolled-back transaction.
        self.chain_head: tuple[int, str] | None = None

    @classmethod
    async def open(
        cls,
        path: str | Path,
        durability: Durability = Durability.FULL,
        migrate: bool = True,
    ) -> Database:
        """Open (creating if needed) and bring the schema up to date.

        Raises `SchemaError` when the file is newer than this code, or (with `migrate=False`)
        older than it.
        """
        target = Path(path)
        if str(target) != ":memory:":
            target.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(target, isolation_level=None)
        try:
            for pragma in (
                "PRAGMA journal_mode=WAL",
                f"PRAGMA synchronous={durability.value.upper()}",
                "PRAGMA foreign_keys=ON",
                "PRAGMA busy_timeout=5000",
                # Reads through a memory map (up to SQLite's 2 GB cap) and a 32 MB page cache:
                # a query on a big roll log touches pages, not pread() calls. Pages mapped
                # count towards RSS only once read, and belong to the OS page cache.
                f"PRAGMA mmap_size={MMAP_BYTES}",
                f"PRAGMA cache_size=-{CACHE_KIB}",
            ):
                await conn.execute(pragma)
            db = cls(conn, target)
            await db._check_version(migrate)
        except BaseException:
            await conn.close()
            raise
        return db

    async def close(self) -> None:
        await self.conn.close()

    async def version(self) -> int:
        async with self.conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def _check_version(self, migrate: bool) -> None:
        current = await self.version()
        if current > LATEST:
            raise SchemaError(
                f"{self.path} was written by a newer rollkeeper (schema {current}; this version "
                f"knows up to {LATEST}). Upgrade rollkeeper before opening it."
            )
        if current < LATEST and not migrate:
            raise SchemaError(
                f"{self.path} has schema {current}, older than {LATEST}: start the bot once "
                "(or run `rollkeeper migrate`) to upgrade it."
            )
        await self.migrate(LATEST)

    async def migrate(self, target: int) -> None:
        """Apply migrations up to `target`, each in its own transaction with its version bump."""
        current = await self.version()
        for number in range(current + 1, target + 1):
            async with self.transaction() as conn:
                for statement in MIGRATIONS[number - 1]:
                    await conn.execute(statement)
                await conn.execute(f"PRAGMA user_version = {number}")

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[aiosqlite.Connection]:
        """The write lock without a transaction: for one self-contained statement (SQLite runs
        each statement atomically in its own transaction)."""
        async with self._write_lock:
            try:
                yield self.conn
            except BaseException:
                self.chain_head = None
                raise

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        async with self._write_lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.chain_head = None
                await self.conn.execute("ROLLBACK")
                raise
            await self.conn.execute("COMMIT")
