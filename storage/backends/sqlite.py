"""SQLite through aiosqlite: one file, pragmas on every connection, ordered migrations tracked
with `PRAGMA user_version`, one writing process per file (an OS lock beside it).

aiosqlite runs one connection on one thread, so two coroutines' statements would interleave
inside a transaction; `Database.transaction()` serialises writers with a lock and this backend
begins with BEGIN IMMEDIATE.

What goes wrong with a file is said in one line: `DatabaseFileError` when the file cannot be
used at all (missing, not a database, damaged, newer, locked, unreadable, in use by another
bot), `StorageError` (a refusal the player reads) when one write cannot be made now (the disk
is full, the file is busy).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

import aiosqlite

from storage.backends.base import Backend, CursorCtx, Params
from storage.backends.errors import DatabaseFileError, Durability, StorageError
from storage.migrations import MIGRATIONS

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


class Fetched:
    """A statement's result, read whole on the database's thread (as the PostgreSQL backend
    reads it: the statements here return a few rows), with how many rows it changed."""

    __slots__ = ("_at", "_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount

    async def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    async def fetchall(self) -> list[Any]:
        rest = self._rows[self._at :]
        self._at = len(self._rows)
        return rest

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._each()

    async def _each(self) -> AsyncIterator[Any]:
        for row in await self.fetchall():
            yield row


def _run(conn: sqlite3.Connection, sql: str, parameters: Params) -> Fetched:
    """On the database's thread: the statement, its rows and its count, the cursor closed."""
    cursor = conn.execute(sql, parameters)
    try:
        return Fetched(cursor.fetchall(), cursor.rowcount)
    finally:
        cursor.close()


def _run_queuing(
    conn: sqlite3.Connection, sql: str, parameters: Params, queued: int
) -> list[int] | None:
    """On the database's thread: one statement that commits by itself, then the ids of the
    `queued` outbox rows it wrote. This process is the file's one writer and nothing runs on
    this thread between the two, so they are the newest rows (an id is one more than the
    largest). A look that fails leaves the ids unknown, never the write undone."""
    conn.execute(sql, parameters).close()
    if not queued:
        return []
    try:
        rows = conn.execute("SELECT id FROM outbox ORDER BY id DESC LIMIT ?", (queued,)).fetchall()
    except sqlite3.Error:
        return None
    return [int(r[0]) for r in reversed(rows)] if len(rows) == queued else None


class _Statement:
    """`await conn.execute(...)` or `async with conn.execute(...) as cursor`: one trip to the
    database's thread either way (aiosqlite's cursor takes three for a read: the statement,
    the fetch and the close, each a hand-over of the interpreter between two threads)."""

    __slots__ = ("_parameters", "_raw", "_sql")

    def __init__(self, raw: aiosqlite.Connection, sql: str, parameters: Params) -> None:
        self._raw = raw
        self._sql = sql
        self._parameters = parameters

    async def _go(self) -> Fetched:
        raw = self._raw
        # aiosqlite's own queue to its thread (`_execute`), as its `execute_fetchall` uses it.
        run: Callable[..., Awaitable[Fetched]] = raw._execute
        return await run(_run, raw._conn, self._sql, self._parameters)

    def __await__(self) -> Generator[Any, None, Fetched]:
        return self._go().__await__()

    async def __aenter__(self) -> Fetched:
        return await self._go()

    async def __aexit__(self, *_: object) -> None:
        return None


class SqliteConn:
    """aiosqlite's connection behind the common surface (storage/backends/base.py)."""

    def __init__(self, raw: aiosqlite.Connection) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Params = ()) -> CursorCtx:
        return cast(CursorCtx, _Statement(self.raw, sql, parameters))

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> None:
        await self.raw.executemany(sql, parameters)

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> Iterable[Any]:
        return await self.raw.execute_fetchall(sql, parameters)

    async def execute_queuing(self, sql: str, parameters: Params, queued: int) -> list[int] | None:
        raw = self.raw
        run: Callable[..., Awaitable[list[int] | None]] = raw._execute
        return await run(_run_queuing, raw._conn, sql, parameters, queued)


class SqliteBackend(Backend):
    """The project's SQLite file. `open` to play (one such process per file), `open_readonly`
    to read beside it (audit tools)."""

    errors = (sqlite3.Error,)
    outbox_tail = True
    defers_rolls = True
    pages_keep_old_rows = True

    def __init__(self, raw: aiosqlite.Connection, path: Path, writer: _WriterLock | None) -> None:
        self.raw = raw
        self.conn = SqliteConn(raw)
        self.path = path
        self.where = str(path)
        self.key_home = path
        self._writer = writer

    @classmethod
    async def open(cls, target: Path, durability: Durability) -> SqliteBackend:
        _check_place(target)
        try:
            writer = _WriterLock.take(target)
        except OSError as exc:
            raise DatabaseFileError(file_problem(target, exc)) from None
        try:
            # Tried on a thread of its own first, as `open_readonly` does: aiosqlite's worker
            # thread outlives a connector that fails and complains when the program ends.
            await asyncio.to_thread(lambda: sqlite3.connect(target).close())
            raw = await aiosqlite.connect(target, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            writer.release(failed=True)
            raise DatabaseFileError(file_problem(target, exc)) from None
        backend = cls(raw, target, writer)
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
                await raw.execute(pragma)
        except BaseException as exc:
            await backend.close(failed=True)
            if isinstance(exc, sqlite3.Error):
                raise DatabaseFileError(file_problem(target, exc)) from None
            raise
        return backend

    @classmethod
    async def open_readonly(cls, target: Path) -> SqliteBackend:
        def connect() -> sqlite3.Connection:
            conn = connect_readonly(target)
            conn.isolation_level = None
            return conn

        # The file is tried first on a thread of its own: aiosqlite's worker thread outlives a
        # connector that fails, and would complain when the program ends.
        try:
            await asyncio.to_thread(lambda: connect_readonly(target).close())
            raw = await aiosqlite.Connection(connect, iter_chunk_size=64)
        except (sqlite3.Error, OSError) as exc:
            raise DatabaseFileError(file_problem(target, exc)) from None
        backend = cls(raw, target, None)
        try:
            await raw.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            await raw.execute("PRAGMA query_only=ON")
        except BaseException as exc:
            await raw.close()
            if isinstance(exc, sqlite3.Error):
                raise DatabaseFileError(file_problem(target, exc)) from None
            raise
        return backend

    def problem(self, exc: BaseException) -> Exception | None:
        """What an error met while opening means to the operator (None: not the driver's)."""
        if isinstance(exc, sqlite3.Error):
            return DatabaseFileError(file_problem(self.path, exc))
        return None

    async def close(self, failed: bool = False) -> None:
        try:
            await self.raw.close()
        finally:
            if self._writer is not None:
                self._writer.release(failed)
                self._writer = None

    async def version(self) -> int:
        async with self.raw.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def is_empty(self) -> bool:
        async with self.raw.execute("SELECT count(*) FROM sqlite_master") as cursor:
            row = await cursor.fetchone()
        return row is not None and int(row[0]) == 0

    def latest(self) -> int:
        return len(MIGRATIONS)

    async def migrate(self, target: int) -> None:
        current = await self.version()
        for number in range(current + 1, target + 1):
            await self.begin()
            try:
                for statement in MIGRATIONS[number - 1]:
                    await self.raw.execute(statement)
                await self.raw.execute(f"PRAGMA user_version = {number}")
                await self.commit()
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    await self.rollback()
                raise

    async def begin(self) -> None:
        await self.raw.execute("BEGIN IMMEDIATE")

    async def commit(self) -> None:
        await self.raw.execute("COMMIT")

    async def rollback(self) -> None:
        await self.raw.execute("ROLLBACK")

    def refusal(self, exc: BaseException) -> StorageError | None:
        return storage_refusal(exc) if isinstance(exc, sqlite3.Error) else None

    @asynccontextmanager
    async def unguarded(self, table: str) -> AsyncIterator[None]:
        """The `<table>_no_update` trigger dropped, and created again from its own text (a
        failure before that rolls the drop back with the transaction)."""
        name = f"{table}_no_update"
        sql = "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?"
        async with self.raw.execute(sql, (name,)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise RuntimeError(f"{table} has no {name} trigger")
        await self.raw.execute(f"DROP TRIGGER {name}")
        yield
        await self.raw.execute(str(row[0]))

    async def secure_delete(self, on: bool) -> None:
        await self.raw.execute(f"PRAGMA secure_delete={'ON' if on else 'OFF'}")

    async def scrub(self, rebuild: bool) -> None:
        if rebuild:
            await self.raw.execute("VACUUM")
        await self.raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
