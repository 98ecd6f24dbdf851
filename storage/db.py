"""One SQLite file through aiosqlite: pragmas on every connection, ordered migrations tracked
with `PRAGMA user_version`, one write transaction at a time, one writing process per file.

aiosqlite runs one connection on one thread, so two coroutines' statements would interleave
inside a transaction; `transaction()` serialises writers with a lock and uses BEGIN IMMEDIATE.

What goes wrong with a file is said in one line: `DatabaseFileError` when the file cannot be
used at all (missing, not a database, damaged, newer, locked, unreadable, in use by another
bot), `StorageError` (a refusal the player reads) when one write cannot be made now (the disk
is full, the file is busy). A failed write changes nothing, in the file or in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO

import aiosqlite

from engine.errors import Refusal
from storage.migrations import MIGRATIONS
from storage.seal import ENV_KEY, SealKey, SealKeyError, create_key, default_key_file, find_key

log = logging.getLogger("rollkeeper.storage")


class Durability(StrEnum):
    """`full`: fsync at every commit (survives power loss). `normal`: WAL without the fsync
    (survives the process being killed, may lose the last commits on power loss)."""

    FULL = "full"
    NORMAL = "normal"


class DatabaseFileError(Exception):
    """The database file cannot be used: the message is one line for the operator."""


class SchemaError(DatabaseFileError):
    """The database's schema does not match this version of rollkeeper."""


class StorageError(Refusal):
    """A write that could not be made now (disk full, file busy): nothing was recorded, the
    bot carries on, and the same command works once the cause is gone."""


LATEST = len(MIGRATIONS)


MMAP_BYTES = 2 << 30
CACHE_KIB = 32 << 10
BUSY_MS = 5000


def _primary(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def file_problem(path: Path | str, exc: sqlite3.Error | OSError) -> str:
    """What is wrong with a database file, in one line an operator can act on."""
    if isinstance(exc, OSError):
        return f"cannot use {path}: {exc.strerror or exc}"
    code = _primary(exc)
    if code == sqlite3.SQLITE_NOTADB:
        return f"{path} is not a SQLite database (or it is encrypted)"
    if code == sqlite3.SQLITE_CORRUPT:
        return f"{path} is damaged ({exc}); restore it from a backup"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return f"{path} is locked by another program; close it and try again"
    if code == sqlite3.SQLITE_READONLY:
        return f"{path} is read-only: the bot needs to write to it (check its permissions)"
    if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return f"cannot open {path} (check that it exists and its permissions)"
    if code == sqlite3.SQLITE_FULL:
        return f"the disk holding {path} is full"
    if code == sqlite3.SQLITE_IOERR:
        return f"cannot read or write {path}: the disk reported an error ({exc})"
    return f"cannot use {path}: {exc}"


def storage_refusal(exc: sqlite3.Error) -> StorageError | None:
    """The refusal a player reads for a write that failed for a storage reason (None: a bug)."""
    code = _primary(exc)
    if code == sqlite3.SQLITE_FULL:
        return StorageError(
            "Nothing was recorded: the bot's storage is full. Tell a moderator; the command "
            "will work again once there is space."
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StorageError(
            "Nothing was recorded: the database is busy (another program is holding it). "
            "Try again in a moment."
        )
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StorageError(
            "Nothing was recorded: the bot's database file is damaged. Tell a moderator; "
            "the bot's log says which file."
        )
    if code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
        return StorageError(
            "Nothing was recorded: the bot could not write to its storage. Tell a moderator; "
            "the bot's log says why."
        )
    return None


def connect_readonly(path: Path | str) -> sqlite3.Connection:
    """A read-only connection that never writes to the file, even on a read-only disk: a WAL
    file whose `-shm` cannot be created is opened as immutable (no writer may be running)."""
    target = Path(path).resolve()
    if not target.is_file():
        raise DatabaseFileError(f"there is no database at {path}")
    try:
        return _probe(
            sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True, timeout=BUSY_MS / 1000)
        )
    except sqlite3.OperationalError as exc:
        if _primary(exc) != sqlite3.SQLITE_CANTOPEN:
            raise DatabaseFileError(file_problem(path, exc)) from None
    except sqlite3.DatabaseError as exc:
        raise DatabaseFileError(file_problem(path, exc)) from None
    try:
        return _probe(sqlite3.connect(f"{target.as_uri()}?immutable=1", uri=True))
    except sqlite3.DatabaseError as exc:
        raise DatabaseFileError(file_problem(path, exc)) from None


def _probe(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Read the schema once: a file that is not a database (or cannot be read) fails here."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _check_place(target: Path) -> None:
    """The database's path must name a file in a folder that exists: a folder, or a folder
    that is not there (a typing slip, most likely), is refused rather than made."""
    if target.is_dir():
        raise DatabaseFileError(
            f"{target} is a folder: give the database file's path "
            f"(e.g. {target / 'rollkeeper.sqlite3'})"
        )
    parent = target.parent
    if not parent.is_dir():
        raise DatabaseFileError(
            f"there is no folder {parent} for {target}: create it first, or give another path"
        )


def lock_path(path: Path) -> Path:
    """The writer's lock file: beside the database's real file (symlinks resolved), so every
    name for the file finds the same lock."""
    real = path.resolve()
    return real.with_name(real.name + ".lock")


class _WriterLock:
    """One writing process per database: an OS lock on `<real file>.lock` (which says who holds
    it) and one on the database file itself, so a symlink, a hard link or any other path to the
    same file (device and inode) finds it taken. The OS releases both when the process ends,
    however it ends. (On Linux, `flock` does not touch the POSIX locks SQLite takes.)"""

    def __init__(self, handle: IO[str], path: Path, created: bool, inode: int) -> None:
        self.handle = handle
        self.path = path
        self.created = created
        self.inode = inode  # a descriptor of the database file, holding its flock

    @classmethod
    def take(cls, path: Path) -> _WriterLock:
        target = lock_path(path)
        created = not target.exists()
        try:
            handle = target.open("a+", encoding="utf-8")
        except PermissionError:
            raise DatabaseFileError(
                f"{path} is read-only (the bot writes to it and to {target.name} beside it); "
                "the read-only `rollkeeper audit` tools work on it"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise DatabaseFileError(
                f"{path} is in use by another rollkeeper ({holder}); stop that one first "
                "(the read-only `rollkeeper audit` tools work beside it)"
            ) from None
        try:
            inode = _lock_inode(path)
        except BaseException:
            handle.close()
            raise
        handle.seek(0)
        handle.truncate()
        command = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv[:3]))
        started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        handle.write(f"pid {os.getpid()}, `{command}`, since {started}\n")
        handle.flush()
        return cls(handle, target, created, inode)

    def release(self, failed: bool = False) -> None:
        """Let go of the file. After an open that `failed`, a lock file this run created is
        removed too (still held, so no other process can be waiting on it)."""
        with contextlib.suppress(OSError):
            self.handle.seek(0)
            self.handle.truncate()
            if failed and self.created:
                self.path.unlink()
        self.handle.close()  # closing the file releases the lock
        with contextlib.suppress(OSError):
            os.close(self.inode)


def _lock_inode(path: Path) -> int:
    """Lock the database file itself (created empty if new): its device and inode, whatever
    name reached it. Raises `DatabaseFileError` when another writer holds it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except PermissionError:
        raise DatabaseFileError(
            f"{path} is read-only (the bot writes to it); the read-only `rollkeeper audit` "
            "tools work on it"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DatabaseFileError(
            f"{path} is in use by another rollkeeper, which opened the same file under another "
            f"name (device {os.stat(path).st_dev}, inode {os.stat(path).st_ino}); stop that one "
            "first (the read-only `rollkeeper audit` tools work beside it)"
        ) from None
    return fd


class Database:
    """The project's SQLite file. `await Database.open(path)` to play (one such process per
    file), `await Database.open(path, migrate=False)` to read beside it (audit tools)."""

    def __init__(
        self,
        conn: aiosqlite.Connection,
        path: Path,
        seal: SealKey | None = None,
        writer: _WriterLock | None = None,
    ) -> None:
        self.conn = conn
        self.path = path
        self.seal = seal
        # The id of the key this file's seeds were sealed with, when that key is missing: the
        # bot runs without one (finished games need none; see storage/custody.py).
        self.lost_key: str | None = None
        self.key_place = ""  # where the key was looked for (for what the operator is told)
        self.readonly = writer is None
        self._writer = writer
        self._write_lock = asyncio.Lock()
        # Each chain's last (seq, hash) as committed, known to the only writer: read from the
        # file when not known (at start, and after any failed write). `staged_heads` is where
        # an uncommitted append left them: they become the heads only when it commits.
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

    @classmethod
    async def open(
        cls,
        path: str | Path,
        durability: Durability = Durability.FULL,
        migrate: bool = True,
        key_file: Path | None = None,
    ) -> Database:
        """Open (creating if needed) to write, bring the schema up to date and load the key
        that seals its unrevealed seeds (`key_file`, default `<file>.key`, or the environment;
        see storage/seal.py). With `migrate=False`: read-only, nothing in the file changes.

        Raises `DatabaseFileError` (or its `SchemaError`) with a one-line reason.
        """
        target = Path(path)
        if not migrate:
            return await cls._open_readonly(target)
        _check_place(target)
        try:
            writer = _WriterLock.take(target)
        except OSError as exc:
            raise DatabaseFileError(file_problem(target, exc)) from None
        try:
            # Tried on a thread of its own first, as `_open_readonly` does: aiosqlite's worker
            # thread outlives a connector that fails and complains when the program ends.
            await asyncio.to_thread(lambda: sqlite3.connect(target).close())
            conn = await aiosqlite.connect(target, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            writer.release(failed=True)
            raise DatabaseFileError(file_problem(target, exc)) from None
        db = cls(conn, target, writer=writer)
        try:
            for pragma in (
                "PRAGMA journal_mode=WAL",
                f"PRAGMA synchronous={durability.value.upper()}",
                "PRAGMA foreign_keys=ON",
                f"PRAGMA busy_timeout={BUSY_MS}",
                # Reads through a memory map (up to SQLite's 2 GB cap) and a 32 MB page cache:
                # a query on a big roll log touches pages, not pread() calls. Pages mapped
                # count towards RSS only once read, and belong to the OS page cache.
                f"PRAGMA mmap_size={MMAP_BYTES}",
                f"PRAGMA cache_size=-{CACHE_KIB}",
            ):
                await conn.execute(pragma)
            await db._check_version(migrate=True)
            await db._load_seal(key_file)
        except BaseException as exc:
            await db.close(failed=True)
            if isinstance(exc, sqlite3.Error):
                raise DatabaseFileError(file_problem(target, exc)) from None
            if isinstance(exc, SealKeyError):
                raise DatabaseFileError(str(exc)) from None
            raise
        return db

    @classmethod
    async def _open_readonly(cls, target: Path) -> Database:
        def connect() -> sqlite3.Connection:
            conn = connect_readonly(target)
            conn.isolation_level = None
            return conn

        # The file is tried first on a thread of its own: aiosqlite's worker thread outlives a
        # connector that fails, and would complain when the program ends.
        try:
            await asyncio.to_thread(lambda: connect_readonly(target).close())
            conn = await aiosqlite.Connection(connect, iter_chunk_size=64)
        except (sqlite3.Error, OSError) as exc:
            raise DatabaseFileError(file_problem(target, exc)) from None
        db = cls(conn, target)
        try:
            await conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            await conn.execute("PRAGMA query_only=ON")
            await db._check_version(migrate=False)
        except BaseException as exc:
            await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise DatabaseFileError(file_problem(target, exc)) from None
            raise
        return db

    async def close(self, failed: bool = False) -> None:
        try:
            await self.conn.close()
        finally:
            if self._writer is not None:
                self._writer.release(failed)
                self._writer = None

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
            async with self.conn.execute("SELECT count(*) FROM sqlite_master") as cursor:
                row = await cursor.fetchone()
            if current == 0 and row is not None and int(row[0]) == 0:
                raise SchemaError(f"{self.path} is empty: it is not a rollkeeper database yet")
            raise SchemaError(
                f"{self.path} has schema {current}, older than {LATEST}: start the bot on it "
                "once (`rollkeeper run --db FILE`) to upgrade it."
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
            raise SealKeyError(found.mismatch(self.path, recorded))
        self.seal = found

    async def _seal_plaintext(self) -> None:
        """A file from before sealing has its plaintext seeds sealed now (their old pages
        overwritten), and records its key."""
        assert self.seal is not None
        await self.conn.execute("PRAGMA secure_delete=ON")
        async with self.transaction() as conn:
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
        await self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await self.conn.execute("PRAGMA secure_delete=OFF")

    def _failed(self) -> None:
        self.heads.clear()
        self.staged_heads.clear()
        self.pseudonyms.clear()
        self.names.clear()

    def _committed(self) -> None:
        self.heads.update(self.staged_heads)
        self.staged_heads.clear()

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """A storage failure becomes the player's refusal (and one line in the bot's log)."""
        try:
            yield
        except sqlite3.Error as exc:
            refusal = storage_refusal(exc)
            if refusal is None:
                raise
            log.error("write to %s failed: %s", self.path, exc)
            raise refusal from None

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[aiosqlite.Connection]:
        """The write lock without a transaction: for one self-contained statement (SQLite runs
        each statement atomically in its own transaction)."""
        async with self._write_lock:
            with self._translated():
                try:
                    yield self.conn
                except BaseException:
                    self._failed()
                    raise
                self._committed()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction: committed when the block ends, rolled back if it (or the
        commit itself) fails. The log's head moves only once the commit has succeeded."""
        async with self._write_lock:
            with self._translated():
                await self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.conn
                    await self.conn.execute("COMMIT")
                except BaseException:
                    self._failed()
                    # A failed COMMIT may already have rolled back (SQLITE_FULL can).
                    with contextlib.suppress(sqlite3.Error):
                        await self.conn.execute("ROLLBACK")
                    raise
                self._committed()
