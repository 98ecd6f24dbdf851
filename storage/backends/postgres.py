"""PostgreSQL through asyncpg, named by a URI (`postgresql://USER@HOST/DB`, or
`postgresql:///DB?host=SOCKETDIR` for a Unix socket).

One connection per process, as on SQLite: statements from several coroutines take turns on it
(a lock), so a write transaction and the reads beside it behave as they do on SQLite. The SQL
is the project's one dialect (SQLite's, see base.py), translated once per statement and kept
prepared: `?` and `?N` and `:name` become `$N`, and the few SQLite idioms the storage code uses
become PostgreSQL's (`GLOB 'g*'`, `instr`, `COLLATE NOCASE`, `json_each`, `CAST(x AS BLOB)`).
Parameters are given the type PostgreSQL deduced for them (a Discord id may come as an int for
a text column), and results come back as tuples of plain values.

A lost connection (the server restarted, an administrator ended the session, the network
dropped) refuses the statement in flight and any transaction it was part of, says so in one
line of the bot's log, and is made again at the next statement (or by the backoff loop that
starts at once: 0.25 s doubling to 5 s): same settings, the writer guard taken again, the
prepared statements prepared anew, and whoever asked (`after_reconnect`: the shard's lease
check, the caches) told before any statement runs on it.

One writer per database: a session advisory lock, held as long as the connection lives (the
server lets go of it when the process dies, however it dies). Every append to a chain is also
checked by the log's primary key (chain, seq): a second writer's row fails, never forks a
chain. Durable commits: `synchronous_commit` is on unless durability is `normal`.

The seal key is not beside a file here: it is `seal_key_file` from the config, or
$ROLLKEEPER_SEAL_KEY, or else `<database name>.key` in the current folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import decimal
import logging
import os
import re
import socket
import threading
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Generator,
    Iterable,
    Iterator,
)
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg

from storage.backends.base import Backend, CursorCtx, Params, Reader
from storage.backends.errors import (
    DatabaseFileError,
    Durability,
    OutcomeUnknownError,
    ServerError,
    StorageError,
)
from storage.backends.pg_schema import MIGRATIONS

T = TypeVar("T")

log = logging.getLogger("rollkeeper.storage")

EXIT_BAD_URI = 2  # the URI itself is wrong (as any unusable input)
EXIT_NO_SERVER = 3  # no server answers there
EXIT_REFUSED = 4  # the server refused the login or has no such database
# The parameters a URI may carry (those asyncpg reads; it would send any other to the server).
URI_PARAMETERS = (
    "host", "port", "dbname", "database", "user", "password", "passfile", "service",
    "sslmode", "sslcert", "sslkey", "sslrootcert", "sslcrl", "sslpassword", "sslnegotiation",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "target_session_attrs",
    "krbsrvname", "gsslib",
)  # fmt: skip

CONNECT_SECONDS = 5
PREPARED_KEPT = 500  # statements kept prepared per connection (a few dozen in use)
WRITER_LOCK = 0x726B5752  # 'rkWR': the one writer's advisory lock, per database
FIRST_RECONNECT_WAIT = 0.25  # seconds before the backoff loop's second try at a lost connection
MAX_RECONNECT_WAIT = 5.0  # the longest wait between its tries
LOST_STATES = ("57P01", "57P02", "57P03")  # administrator or crash shutdown, cannot connect now

_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bGLOB '(\w*)\*'"), r"LIKE '\1%'"),
    (re.compile(r"\bCAST\((\w+) AS BLOB\)"), r"convert_to(\1, 'UTF8')"),
    (re.compile(r"\binstr\("), "strpos("),
    (re.compile(r"([\w.]+) = (\?\d*|:\w+) COLLATE NOCASE"), r"lower(\1) = lower(\2)"),
    (re.compile(r"\bjson_each\(([\w.]+)\)"), r"jsonb_each_text(\1::jsonb)"),
]
_PLACEHOLDER = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|::|\?(\d*)|:([A-Za-z_]\w*)")


def translate(sql: str) -> tuple[str, list[str] | None]:
    """SQLite's statement in PostgreSQL's words, and the names of its `:name` parameters in
    `$N` order (None when it takes them by position)."""
    for pattern, replacement in _REWRITES:
        sql = pattern.sub(replacement, sql)
    names: list[str] = []
    counter = 0

    def place(match: re.Match[str]) -> str:
        nonlocal counter
        text = match.group(0)
        if text.startswith(("'", '"')) or text == "::":
            return text
        if match.group(2) is not None:
            name = match.group(2)
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"
        number = int(match.group(1)) if match.group(1) else counter + 1
        counter = max(counter, number)
        return f"${number}"

    return _PLACEHOLDER.sub(place, sql), (names or None)


def _to_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _to_int(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) else value


def _to_bytes(value: Any) -> Any:
    return value.encode() if isinstance(value, str) else value


_COERCE: dict[str, Callable[[Any], Any]] = {
    "text": _to_text,
    "varchar": _to_text,
    "bpchar": _to_text,
    "name": _to_text,
    "int8": _to_int,
    "int4": _to_int,
    "int2": _to_int,
    "float8": _to_float,
    "float4": _to_float,
    "numeric": _to_float,
    "bytea": _to_bytes,
}


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


_READ = re.compile(r"\s*SELECT\b", re.IGNORECASE)  # a statement that only reads (its prefix)


class _Prepared:
    """One translated statement, prepared on the connection, with its parameters' coercions."""

    def __init__(self, stmt: Any, names: list[str] | None) -> None:
        self.stmt = stmt
        self.names = names
        self.coerce = [_COERCE.get(t.name) for t in stmt.get_parameters()]
        self.numeric = any(a.type.name == "numeric" for a in stmt.get_attributes())

    def args(self, params: Params) -> list[Any]:
        if isinstance(params, dict):
            assert self.names is not None, "named parameters for a positional statement"
            values = [params[name] for name in self.names]
        else:
            values = list(params)
        return [
            v if f is None or v is None else f(v) for f, v in zip(self.coerce, values, strict=True)
        ]

    def rows(self, records: Iterable[Any]) -> list[tuple[Any, ...]]:
        if self.numeric:
            return [tuple(_plain(v) for v in r) for r in records]
        return [tuple(r) for r in records]


class PgCursor:
    """A statement's result, fetched whole (as the SQLite code reads it: one small result)."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self._rows = rows
        self._at = 0
        self._count = rowcount

    @property
    def rowcount(self) -> int:
        return self._count

    def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Any]:
        rest = self._rows[self._at :]
        self._at = len(self._rows)
        return rest

    def fetchmany(self, size: int = 1) -> list[Any]:
        part = self._rows[self._at : self._at + size]
        self._at += len(part)
        return part

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _AsyncCursor:
    def __init__(self, cursor: PgCursor) -> None:
        self.cursor = cursor

    @property
    def rowcount(self) -> int:
        return self.cursor.rowcount

    async def fetchone(self) -> Any:
        return self.cursor.fetchone()

    async def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()

    def __aiter__(self) -> _AsyncCursor:
        return self

    async def __anext__(self) -> Any:
        row = self.cursor.fetchone()
        if row is None:
            raise StopAsyncIteration
        return row


class _Pending:
    """`await conn.execute(...)` or `async with conn.execute(...) as cursor`."""

    def __init__(self, run: Coroutine[Any, Any, PgCursor]) -> None:
        self._run = run

    async def _cursor(self) -> _AsyncCursor:
        return _AsyncCursor(await self._run)

    def __await__(self) -> Generator[Any, None, _AsyncCursor]:
        return self._cursor().__await__()

    async def __aenter__(self) -> _AsyncCursor:
        return await self._cursor()

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        return None


def _count(status: str | None) -> int:
    """`UPDATE 3` -> 3, `INSERT 0 1` -> 1, `SELECT 2` -> 2."""
    last = (status or "").rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1


class UnreachableError(ConnectionError):
    """The database cannot be reached now: its connection was lost and is not made again yet
    (the statement did not run)."""


class LostMidwayError(UnreachableError):
    """The connection was lost while a statement ran (it did not commit by itself)."""


class CommitUnknownError(UnreachableError, OutcomeUnknownError):
    """The connection was lost during a COMMIT: the server may or may not have applied it."""


def lost_connection(exc: BaseException) -> bool:
    """Is `exc` the connection's loss rather than the statement's fault? (asyncpg's
    connection errors, a closed connection, a socket's OSError, an administrator's or a crash's
    shutdown, SQLSTATE class 08.)"""
    if isinstance(exc, OSError | asyncpg.PostgresConnectionError):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        state = str(getattr(exc, "sqlstate", "") or "")
        return state.startswith("08") or state in LOST_STATES
    return isinstance(exc, asyncpg.InterfaceError) and "closed" in str(exc).lower()


Reconnect = Callable[[], Awaitable[asyncpg.Connection]]
AfterReconnect = Callable[[asyncpg.Connection], Awaitable[None]]


class PgConn:
    """asyncpg's connection behind the common surface (base.py). With `reconnect`, a lost
    connection is made again (see the module's docstring); without (the readers), it stays
    lost."""

    def __init__(
        self, raw: asyncpg.Connection, where: str = "", reconnect: Reconnect | None = None
    ) -> None:
        self.raw = raw
        self.where = where
        self._reconnect = reconnect
        self._lock = asyncio.Lock()
        self._prepared: dict[str, _Prepared] = {}
        self.after_reconnect: list[AfterReconnect] = []  # told, in order, of a new connection
        self.lost: str | None = None  # why the connection is down (None: it is up)
        self._in_transaction = False
        self._last_try = float("-inf")
        self._healing: asyncio.Task[None] | None = None

    async def _prepare(self, sql: str) -> _Prepared:
        found = self._prepared.get(sql)
        if found is None:
            text, names = translate(sql)
            found = _Prepared(await self.raw.prepare(text), names)
            if len(self._prepared) >= PREPARED_KEPT:  # the oldest goes (and is closed)
                del self._prepared[next(iter(self._prepared))]
            self._prepared[sql] = found
        return found

    def _unreachable(self) -> UnreachableError:
        return UnreachableError(f"{self.where} cannot be reached ({self.lost})")

    async def _ready(self, asked: float) -> None:
        """Inside the lock, before a statement asked for at `asked` (the loop's time): the
        connection is up, or made again now; not inside a transaction the lost connection took
        with it, and not when a try began while this statement waited for the lock (the
        statements queued behind a try share its answer)."""
        if self.lost is None:
            return
        if self._in_transaction or self._reconnect is None or self._last_try >= asked:
            raise self._unreachable()
        await self._try_again()

    async def _try_again(self) -> None:
        """Inside the lock: one try at a new connection; UnreachableError if it failed."""
        assert self._reconnect is not None
        self._last_try = asyncio.get_running_loop().time()
        try:
            raw = await self._reconnect()
        except Exception as exc:
            self.lost = _why(exc)
            raise self._unreachable() from None
        old, self.raw = self.raw, raw
        old.terminate()
        self._prepared.clear()  # prepared on the old connection: prepared again as used
        self.lost = None
        try:
            for told in self.after_reconnect:
                await told(raw)
        except Exception as exc:
            if lost_connection(exc) or raw.is_closed():
                self._lose(exc)
                raise self._unreachable() from None
            raise
        log.warning("reconnected to %s", self.where)

    def _lose(self, exc: BaseException) -> None:
        """The connection is gone: said once, and the backoff loop started."""
        if self.lost is not None:
            return
        self.lost = _why(exc)
        log.error(
            "lost the connection to %s (%s): commands are refused until it is back; reconnecting",
            self.where,
            self.lost,
        )
        if self._reconnect is not None and (self._healing is None or self._healing.done()):
            self._healing = asyncio.create_task(self._heal(), name="reconnect")

    async def _heal(self) -> None:
        """Try again after 0.25 s, then waits doubling up to MAX_RECONNECT_WAIT, until the
        connection is back (or a statement brought it back first)."""
        wait = FIRST_RECONNECT_WAIT
        while self.lost is not None:
            await asyncio.sleep(wait)
            async with self._lock:
                if self.lost is None or self._in_transaction:
                    continue
                with contextlib.suppress(UnreachableError):
                    await self._try_again()
            wait = min(wait * 2, MAX_RECONNECT_WAIT)

    async def _guarded(self, work: Callable[[], Awaitable[T]], writes: bool = False) -> T:
        """Run `work` under the lock, on a live connection; a connection lost under it is
        noted (and the error goes on to the caller). `writes`: a statement that may write,
        run outside a transaction, commits by itself: lost under it, its outcome is unknown
        (CommitUnknownError), as a COMMIT's would be."""
        asked = asyncio.get_running_loop().time()
        async with self._lock:
            alone = writes and not self._in_transaction
            if alone and self.lost is None and self.raw.is_closed():
                # A write that commits by itself, on a connection known closed: not sent, so
                # nothing recorded (only a loss while it ran leaves the outcome unknown).
                self._lose(ConnectionResetError("the server closed the connection"))
            await self._ready(asked)
            try:
                return await work()
            except Exception as exc:
                if not (lost_connection(exc) or self.raw.is_closed()):
                    raise
                self._lose(exc)
                if alone:
                    raise CommitUnknownError(
                        f"{self.where} was lost during a statement that commits by itself "
                        f"({self.lost})"
                    ) from exc
                raise LostMidwayError(f"{self.where} was lost ({self.lost})") from exc

    async def run(self, sql: str, parameters: Params = ()) -> PgCursor:
        async def work() -> PgCursor:
            prepared = await self._prepare(sql)
            records = await prepared.stmt.fetch(*prepared.args(parameters))
            return PgCursor(prepared.rows(records), _count(prepared.stmt.get_statusmsg()))

        return await self._guarded(work, writes=_READ.match(sql) is None)

    async def simple(self, sql: str) -> None:
        """A statement of PostgreSQL's own, as it is (no translation, no parameters)."""
        await self._guarded(lambda: self.raw.execute(sql))

    async def begin(self) -> None:
        async def work() -> None:
            await self.raw.execute("BEGIN")
            self._in_transaction = True

        await self._guarded(work)

    async def commit(self) -> None:
        """COMMIT; a connection lost during it leaves the outcome unknown (CommitUnknownError)."""
        try:
            await self._guarded(lambda: self.raw.execute("COMMIT"))
        except LostMidwayError as exc:
            raise CommitUnknownError(
                f"{self.where} was lost during a COMMIT ({self.lost})"
            ) from exc
        finally:
            self._in_transaction = False

    async def rollback(self) -> None:
        """ROLLBACK (nothing to do when the connection was lost: the server rolled it back)."""
        if self.lost is not None:
            self._in_transaction = False
            return
        try:
            await self._guarded(lambda: self.raw.execute("ROLLBACK"))
        finally:
            self._in_transaction = False

    def execute(self, sql: str, parameters: Params = ()) -> CursorCtx:
        return _Pending(self.run(sql, parameters))

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> None:
        async def work() -> None:
            prepared = await self._prepare(sql)
            rows = [prepared.args(p) for p in parameters]
            if rows:
                await prepared.stmt.executemany(rows)

        await self._guarded(work)

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> list[Any]:
        return (await self.run(sql, parameters)).fetchall()

    async def execute_queuing(self, sql: str, parameters: Params, queued: int) -> list[int] | None:
        """Other processes queue beside this one (shards, direct messages): the sender reads
        and claims the rows (storage/outbox.py)."""
        await self.run(sql, parameters)
        return None

    def stop_healing(self) -> None:
        if self._healing is not None:
            self._healing.cancel()


def _why(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def shown_url(url: str) -> str:
    """The URI without its password, for what an operator reads."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def key_home(url: str) -> Path:
    """The path whose `.key` sibling is the database's default seal key file: `<database
    name>.postgresql` in the current folder (so `<database name>.key`)."""
    return Path(f"{database_name(url)}.postgresql")


def database_name(url: str) -> str:
    """The database a URI names; a `ServerError` (exit 2) when it is not a usable URI."""
    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query, strict_parsing=False)
        _ = parts.port  # a port that is not a number raises here
    except ValueError as exc:
        raise ServerError(
            f"{shown_url(url)} is not a PostgreSQL URI ({exc})", EXIT_BAD_URI
        ) from None
    unknown = sorted(set(parse_qs(parts.query, keep_blank_values=True)) - set(URI_PARAMETERS))
    if unknown:  # the driver would pass a misspelt `hst=` on as a server setting, unnoticed
        raise ServerError(
            f"{shown_url(url)} is not a usable PostgreSQL URI: unknown parameter "
            f"`{unknown[0][:40]}` (it takes {', '.join(URI_PARAMETERS)})",
            EXIT_BAD_URI,
        )
    port = (query.get("port") or [""])[0]
    if port and not port.isdigit():
        raise ServerError(
            f"{shown_url(url)} is not a usable PostgreSQL URI: its port `{port}` is not a "
            "number (postgresql:///DATABASE?host=/SOCKET/FOLDER&port=5432)",
            EXIT_BAD_URI,
        )
    name = unquote(parts.path.lstrip("/")) or (query.get("dbname") or [""])[0]
    if parts.scheme.lower() not in ("postgresql", "postgres"):
        raise ServerError(
            f"{shown_url(url)} is neither a SQLite file nor a PostgreSQL URI: give a file's "
            "path, or postgresql://USER@HOST/DATABASE",
            EXIT_BAD_URI,
        )
    if not name or "/" in name:
        raise ServerError(
            f"{shown_url(url)} is not a PostgreSQL URI: write postgresql://USER@HOST/DATABASE "
            "or postgresql:///DATABASE?host=/SOCKET/FOLDER",
            EXIT_BAD_URI,
        )
    return name


def _server_problem(url: str, exc: BaseException) -> ServerError | None:
    """Why the server could not be used, in one line with its exit status (None: not a
    connection problem)."""
    shown = shown_url(url)
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return ServerError(f"the server at {shown} has no such database ({exc})", EXIT_REFUSED)
    refused = asyncpg.InvalidAuthorizationSpecificationError | asyncpg.InvalidPasswordError
    if isinstance(exc, refused):
        return ServerError(f"the server at {shown} refused the login ({exc})", EXIT_REFUSED)
    if isinstance(exc, asyncpg.InsufficientPrivilegeError):
        return ServerError(f"the server at {shown} refused access ({exc})", EXIT_REFUSED)
    if isinstance(exc, OSError | asyncio.TimeoutError | asyncpg.CannotConnectNowError):
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return ServerError(f"no PostgreSQL server answers at {shown} ({reason})", EXIT_NO_SERVER)
    if isinstance(exc, asyncpg.ClientConfigurationError | ValueError):
        return ServerError(f"{shown} is not a usable PostgreSQL URI ({exc})", EXIT_BAD_URI)
    return None


async def _connect(url: str, settings: dict[str, str]) -> asyncpg.Connection:
    database_name(url)
    try:
        return await asyncpg.connect(
            url, timeout=CONNECT_SECONDS, server_settings=settings, statement_cache_size=0
        )
    except Exception as exc:
        problem = _server_problem(url, exc)
        if problem is None:
            if isinstance(exc, asyncpg.PostgresError):
                raise ServerError(f"cannot use {shown_url(url)}: {exc}", EXIT_REFUSED) from None
            raise
        raise problem from None


async def _take_writer_lock(
    raw: asyncpg.Connection, where: str, shared: bool = False, ours: int | None = None
) -> None:
    """The one writer's lock (`shared`: the shards' share of it). A holder that was a process
    of this machine which no longer runs (killed: the server has not seen its connection close
    yet), or this backend's own lost session (server pid `ours`), is ended and waited for; a
    live one is named."""
    waited = 0.0
    take = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
    while not await raw.fetchval(f"SELECT {take}($1)", WRITER_LOCK):
        found = await raw.fetchrow(
            "SELECT a.application_name, a.pid FROM pg_locks l JOIN pg_stat_activity a "
            "USING (pid) WHERE l.locktype = 'advisory' AND l.objid = $1 AND l.granted AND "
            "l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            WRITER_LOCK,
        )
        holder = None if found is None else str(found[0])
        mine = found is not None and ours is not None and found[1] == ours
        if waited >= CONNECT_SECONDS or (holder is not None and not mine and not _gone(holder)):
            _held_by(where, holder, shared)
        if holder is not None and found is not None:
            with contextlib.suppress(asyncpg.PostgresError):
                await raw.execute("SELECT pg_terminate_backend($1)", found[1])
        await asyncio.sleep(0.05)
        waited += 0.05


def _held_by(where: str, holder: str | None, shared: bool = False) -> None:
    if shared:
        raise DatabaseFileError(
            f"{where} is in use by a rollkeeper that is not sharded "
            f"({holder or 'another process'}); stop it before starting shards"
        )
    raise DatabaseFileError(
        f"{where} is in use by another rollkeeper ({holder or 'another process'}); "
        "stop that one first (the read-only `rollkeeper audit` tools work beside it)"
    )


class PostgresBackend(Backend):
    """A PostgreSQL database: `open(url, durability, writer=True)` to play (one such process
    per database), `writer=False` to read beside it (audit tools; nothing can change)."""

    errors = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError)
    claims = True

    def __init__(
        self, raw: asyncpg.Connection, url: str, reconnect: Reconnect | None = None
    ) -> None:
        self.url = url
        self.where = shown_url(url)
        self.pg = PgConn(raw, self.where, reconnect)
        self.conn = self.pg
        self.key_home = key_home(url)

    @property
    def raw(self) -> asyncpg.Connection:
        return self.pg.raw

    @classmethod
    async def open(
        cls, url: str, durability: Durability, writer: bool, shared: bool = False
    ) -> PostgresBackend:
        """`shared`: one shard's connection (`run --shard-count`), one of several writers, each
        fenced by its shard's lease (storage/shards.py): the shards share the writer guard, and
        a writer that is not a shard's is refused while any runs (and the other way round).
        A lost connection is made again with the same settings (and, for a writer, its guard
        taken again)."""
        who = f"rollkeeper pid {os.getpid()} on {socket.gethostname()}"[:63]
        settings = {"application_name": who}
        if writer:
            settings["synchronous_commit"] = "on" if durability is Durability.FULL else "off"
        else:
            settings["default_transaction_read_only"] = "on"
        where = shown_url(url)
        raw = await _connect(url, settings)
        if writer:
            try:
                await _take_writer_lock(raw, where, shared)
            except BaseException:
                await raw.close()
                raise
        backend: PostgresBackend

        async def again() -> asyncpg.Connection:
            old = backend.raw.get_server_pid()  # its session may outlive it on the server
            fresh = await _connect(url, settings)
            if writer:
                try:
                    await _take_writer_lock(fresh, where, shared, ours=old)
                except BaseException:
                    fresh.terminate()
                    raise
            return fresh

        backend = cls(raw, url, again)
        return backend

    def after_reconnect(self, told: AfterReconnect) -> None:
        self.pg.after_reconnect.append(told)

    def unreachable(self, exc: BaseException) -> bool:
        return isinstance(exc, UnreachableRefusal) or lost_connection(exc)

    def problem(self, exc: BaseException) -> Exception | None:
        if isinstance(exc, asyncpg.PostgresError | asyncpg.InterfaceError | OSError):
            return _server_problem(self.url, exc) or DatabaseFileError(
                f"cannot use {self.where}: {exc}"
            )
        return None

    async def close(self, failed: bool = False) -> None:
        self.pg.stop_healing()
        with contextlib.suppress(OSError, asyncpg.InterfaceError, asyncpg.PostgresError):
            await asyncio.wait_for(self.raw.close(), CONNECT_SECONDS)
        self.raw.terminate()

    async def version(self) -> int:
        async with self.pg._lock:
            if await self.raw.fetchval("SELECT to_regclass('rollkeeper_schema')") is None:
                return 0
            found = await self.raw.fetchval("SELECT version FROM rollkeeper_schema")
        return int(found or 0)

    async def is_empty(self) -> bool:
        async with self.pg._lock:
            tables = await self.raw.fetchval(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
            )
        return int(tables or 0) == 0

    def latest(self) -> int:
        return len(MIGRATIONS)

    async def migrate(self, target: int) -> None:
        current = await self.version()
        async with self.pg._lock:
            for number in range(current + 1, target + 1):
                async with self.raw.transaction():
                    if number == 1:
                        await self.raw.execute(
                            "CREATE TABLE rollkeeper_schema (only_row bigint PRIMARY KEY "
                            "CHECK (only_row = 1), version bigint NOT NULL)"
                        )
                        await self.raw.execute("INSERT INTO rollkeeper_schema VALUES (1, 0)")
                    for statement in MIGRATIONS[number - 1]:
                        await self.raw.execute(statement)
                    await self.raw.execute("UPDATE rollkeeper_schema SET version = $1", number)

    async def begin(self) -> None:
        await self.pg.begin()

    async def commit(self) -> None:
        await self.pg.commit()

    async def rollback(self) -> None:
        await self.pg.rollback()

    def refusal(self, exc: BaseException) -> StorageError | None:
        return pg_refusal(exc)

    @asynccontextmanager
    async def unguarded(self, table: str) -> AsyncIterator[None]:
        """The table's append-only trigger disabled for the block (taking the table's lock
        until the transaction ends), then enabled again."""
        trigger = _UPDATE_GUARDS[table]
        await self.pg.simple(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
        yield
        await self.pg.simple(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")

    async def secure_delete(self, on: bool) -> None:
        return None  # PostgreSQL cannot overwrite freed bytes; `scrub` rewrites the tables

    async def scrub(self, rebuild: bool) -> None:
        """With `rebuild`, VACUUM FULL rewrites every table into new files (the old ones are
        emptied at once), so no erased byte stays in a table; the write-ahead log (and any
        archive of it) keeps them until the server recycles it. Without: a plain VACUUM."""
        await self.pg.simple("VACUUM FULL" if rebuild else "VACUUM log, message_rolls")
        if rebuild:
            with contextlib.suppress(asyncpg.InsufficientPrivilegeError):
                await self.pg.simple("CHECKPOINT")


# The trigger that refuses updates to each append-only table (pg_schema.py).
_UPDATE_GUARDS = {"game_actions": "game_actions_no_change", "upgraded": "upgraded_no_update"}


def _gone(holder: str) -> bool:
    """`rollkeeper pid N on HOST` names a process of this machine that no longer runs."""
    words = holder.split()
    if len(words) != 5 or words[:2] != ["rollkeeper", "pid"] or words[4] != socket.gethostname():
        return False
    try:
        os.kill(int(words[2]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    return False


def pg_refusal(exc: BaseException) -> StorageError | None:
    """The refusal a player reads for a write that failed for a storage reason (None: a bug)."""
    if isinstance(exc, asyncpg.DiskFullError | asyncpg.OutOfMemoryError):
        return StorageError(
            "Nothing was recorded: the bot's storage is full. Tell a moderator; the command "
            "will work again once there is space."
        )
    if isinstance(
        exc,
        asyncpg.SerializationError
        | asyncpg.DeadlockDetectedError
        | asyncpg.LockNotAvailableError
        | asyncpg.UniqueViolationError,
    ):
        return StorageError(
            "Nothing was recorded: another write to the same game came first. "
            "Try again in a moment."
        )
    if isinstance(exc, CommitUnknownError):
        return UnreachableRefusal(
            "The bot lost its database while recording that: it may or may not have been "
            "recorded. Look at the game before sending it again."
        )
    if lost_connection(exc) or isinstance(
        exc, asyncpg.InterfaceError | asyncpg.ReadOnlySQLTransactionError
    ):
        return UnreachableRefusal(
            "Nothing was recorded: the bot could not reach its database. Send that again in "
            "a moment; if it keeps failing, tell a moderator (the bot's log says why)."
        )
    return None


class UnreachableRefusal(StorageError):
    """A command refused because the database could not be reached: the bot's log has said
    so once already (nobody logs it again)."""


class PgReader:
    """A read-only connection for a worker thread (verify, exports, reports): its own event
    loop on a thread of its own, so it works from any thread, beside the bot's connection.
    Everything it reads is one snapshot (a repeatable-read transaction). With `settings`
    (tools and tests only): a connection that writes, each statement committed."""

    def __init__(self, url: str, settings: dict[str, str] | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            self._pg = self._call(self._open(url, settings))
        except BaseException:
            self._stop()
            raise

    async def _open(self, url: str, settings: dict[str, str] | None) -> PgConn:
        if settings is not None:
            return PgConn(await _connect(url, settings))
        raw = await _connect(url, {"default_transaction_read_only": "on"})
        await raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return PgConn(raw)

    def simple(self, sql: str) -> None:
        """A statement of PostgreSQL's own, as it is."""
        self._call(self._pg.simple(sql))

    def _call(self, work: Awaitable[T]) -> T:
        async def run() -> T:
            return await work

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def execute(self, sql: str, parameters: Params = (), /) -> PgCursor:
        return self._call(self._pg.run(sql, parameters))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call(self._pg.raw.close(timeout=CONNECT_SECONDS))
        self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


def connect_reader(url: str) -> Reader:
    return PgReader(url)
