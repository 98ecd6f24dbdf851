"""What every backend gives the rest of storage: one connection surface (`Conn`), one
synchronous reader surface (`Reader`), and the `Backend` that opens, migrates, runs
transactions, guards the one writer and says what went wrong.

The SQL is written once, SQLite's way (`?` placeholders, `INSERT ... ON CONFLICT`, `RETURNING`):
SQLite runs it as written, PostgreSQL translates it once per statement (storage/backends/
postgres.py). A row is a tuple-like sequence of plain values (str, int, float, bytes, None) on
both.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from storage.backends.errors import StorageError

Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """The result of one statement: its rows, and how many rows it changed."""

    @property
    def rowcount(self) -> int: ...

    async def fetchone(self) -> Any: ...

    async def fetchall(self) -> Iterable[Any]: ...

    def __aiter__(self) -> AsyncIterator[Any]: ...


class CursorCtx(Protocol):
    """`await conn.execute(...)` or `async with conn.execute(...) as cursor`."""

    def __await__(self) -> Generator[Any, None, Cursor]: ...

    async def __aenter__(self) -> Cursor: ...

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Any: ...


class Conn(Protocol):
    """One connection to the database, as every storage module uses it."""

    def execute(self, sql: str, parameters: Params = ()) -> CursorCtx: ...

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> Any: ...

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> Iterable[Any]: ...

    async def execute_queuing(self, sql: str, parameters: Params, queued: int) -> list[int] | None:
        """Run one statement that commits by itself and queues `queued` outbox messages; their
        ids, oldest first, when the backend can tell them at once (else None: the sender reads
        them from the outbox)."""
        ...


class SyncCursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Reader(Protocol):
    """A read-only connection for a worker thread (verify, exports, reports), with sqlite3's
    surface: `reader.execute(sql, params).fetchall()`."""

    def execute(self, sql: str, parameters: Params = ..., /) -> SyncCursor: ...

    def close(self) -> None: ...


class Backend(abc.ABC):
    """One open database. `where` names it for an operator (a file, or a URI without its
    password); `key_home` is the path whose `.key` sibling is the default seal key file."""

    conn: Conn
    where: str
    key_home: Path
    errors: tuple[type[BaseException], ...]  # the driver's errors, for `refusal`
    # Several processes (or senders) may read one queue: the outbox's rows are claimed
    # (`FOR UPDATE SKIP LOCKED`, storage/outbox.py). SQLite's one process reads it plainly.
    claims: bool = False
    # The outbox's index of messages not yet sent lags behind the writes: the newest (`fresh`,
    # past `log_indexed.outbox_upto`) are found by reading the table's tail (SQLite, migration 18).
    outbox_tail: bool = False
    # A roll within a turn writes no game row: the game's snapshot is written by the action that
    # ends the turn, and the rolls since are read back from its chain (SQLite, migration 19).
    defers_rolls: bool = False
    # A row's old bytes stay in the free space of the pages its table split (SQLite): erasing a
    # text rewrites the table that held it (storage/privacy.py, retention). PostgreSQL's old
    # row versions go with VACUUM, and a rewrite there would race the other shards' writes.
    pages_keep_old_rows: bool = False

    @abc.abstractmethod
    def problem(self, exc: BaseException) -> Exception | None:
        """What an error met while opening means to the operator, one line (None: not the
        driver's error)."""

    @abc.abstractmethod
    async def version(self) -> int:
        """The schema version the database is at (0: new)."""

    @abc.abstractmethod
    async def is_empty(self) -> bool:
        """No table at all (a new, empty database)."""

    @abc.abstractmethod
    def latest(self) -> int:
        """The newest schema version this backend knows."""

    @abc.abstractmethod
    async def migrate(self, target: int) -> None:
        """Apply this backend's migrations up to `target`, each in its own transaction."""

    @abc.abstractmethod
    async def begin(self) -> None: ...

    @abc.abstractmethod
    async def commit(self) -> None: ...

    @abc.abstractmethod
    async def rollback(self) -> None: ...

    @abc.abstractmethod
    async def close(self, failed: bool = False) -> None:
        """Close, and let go of the writer guard."""

    @abc.abstractmethod
    def refusal(self, exc: BaseException) -> StorageError | None:
        """The player's refusal for a write that failed for a storage reason (None: a bug)."""

    def unreachable(self, exc: BaseException) -> bool:
        """`exc` (or the refusal made of it) is the database being out of reach, which the
        backend has already said in the bot's log, once: whoever meets it says no more."""
        return False

    def after_reconnect(self, told: Callable[[Any], Awaitable[None]]) -> None:
        """`told(connection)` runs after a lost connection is made again, before any statement
        runs on it (a backend that never reconnects never calls it)."""
        return None

    @abc.abstractmethod
    def unguarded(self, table: str) -> AbstractAsyncContextManager[None]:
        """Inside a write transaction: `table`'s append-only guard against updates lifted for
        the block, then put back exactly as it was (an upgrade rewriting old rows)."""

    @abc.abstractmethod
    async def secure_delete(self, on: bool) -> None:
        """Erased bytes are overwritten from now on (`on`), or no longer."""

    @abc.abstractmethod
    async def scrub(self, rebuild: bool) -> None:
        """After an erasure: old copies of erased bytes gone from the journal (and, with
        `rebuild`, from free space as well)."""

    @asynccontextmanager
    async def erasing(self, rebuild: bool) -> AsyncIterator[None]:
        """One write transaction that erases (the caller holds the writer's lock): its bytes
        overwritten (`secure_delete`), committed or rolled back, then `scrub`bed; erasing is
        off again afterwards, whatever happened. (Database.erasing: the same with its lock.)"""
        await self.secure_delete(True)
        try:
            await self.begin()
            try:
                yield
                await self.commit()
            except BaseException:
                with contextlib.suppress(*self.errors):
                    await self.rollback()
                raise
            await self.scrub(rebuild)
        finally:
            await self.secure_delete(False)
