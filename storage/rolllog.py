"""The roll log: every roll the bot makes, append-only and hash-chained.

Each row's `hash` is SHA-256 over its canonical content, which includes the previous row's
hash; changing, removing or inserting any row breaks the chain at that row. Corrections are
new rows that reference the row they correct (`corrects`), with a reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from storage.db import Database, connect_readonly

T = TypeVar("T")

GENESIS = "0" * 64

# Actions, in the forum's words.
START_ROLL = "Start roll"
FREE_ROLL = "Free roll"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """What is known of a roll (or a correction) before it is written."""

    at: str
    guild_id: str
    channel_id: str
    user_id: str
    user_name: str
    action: str
    dice: str
    results: str  # JSON: [[die, face, colour-or-null], ...]
    message_id: str | None = None
    jump_url: str | None = None
    game_id: int | None = None
    game_number: int | None = None
    game_seq: int | None = None
    variant: str | None = None
    turn_label: str | None = None
    randomness: str | None = None
    corrects: int | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class LogRow(LogEntry):
    """A written row: its id and its place in the chain."""

    id: int = 0
    prev_hash: str = GENESIS
    hash: str = ""

    @property
    def faces(self) -> list[tuple[str, int, str | None]]:
        return [(d, int(f), c) for d, f, c in json.loads(self.results)]


# The hashed columns, in a fixed order. Never reorder: old rows were hashed this way.
CHAIN_COLUMNS: tuple[str, ...] = (
    "id",
    "at",
    "guild_id",
    "channel_id",
    "message_id",
    "jump_url",
    "user_id",
    "user_name",
    "game_id",
    "game_number",
    "game_seq",
    "variant",
    "turn_label",
    "action",
    "dice",
    "results",
    "randomness",
    "corrects",
    "reason",
    "prev_hash",
)
ALL_COLUMNS = (*CHAIN_COLUMNS, "hash")


def canonical(values: Sequence[Any]) -> str:
    """A row's canonical content: a compact JSON array of its `CHAIN_COLUMNS`, `results` as a
    nested array. This exact text is stored as the row's `body` and hashed."""
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def row_hash(values: Sequence[Any]) -> str:
    """SHA-256 (hex) of a row's canonical content (UTF-8)."""
    return hashlib.sha256(canonical(values).encode()).hexdigest()


def _hashed(column: str, value: Any) -> Any:
    return json.loads(value) if column == "results" else value


def encode_results(results: Sequence[tuple[str, int, str | None]]) -> str:
    return json.dumps([list(r) for r in results], separators=(",", ":"))


_ENTRY_FIELDS = tuple(f.name for f in fields(LogEntry))  # all plain values: no deep copy


async def head(db: Database) -> tuple[int, str]:
    """The log's last (id, hash) as committed: remembered by the only writer, read from the
    file when not known (at start, and after a failed write). Call under the write lock (a
    read outside it may see another coroutine's uncommitted rows, or be overtaken by them)."""
    if db.chain_head is None:
        db.chain_head = await read_head(db)
    return db.chain_head


async def read_head(db: Database) -> tuple[int, str]:
    """The head as the file has it now; remembers nothing."""
    async with db.conn.execute("SELECT last_id, last_hash FROM log_head") as cursor:
        found = await cursor.fetchone()
    return (int(found[0]), str(found[1])) if found else (0, GENESIS)


async def chain(db: Database, entries: Sequence[LogEntry]) -> list[LogRow]:
    """Give `entries` their ids and hashes after the log's current head, without writing.
    Call under the database's write lock, and stage the new head (`db.staged_head`) once they
    are written: it becomes the head when the write commits, and is dropped if it fails."""
    return chain_after(db.staged_head or await head(db), entries)


def chain_after(after: tuple[int, str], entries: Sequence[LogEntry]) -> list[LogRow]:
    """`entries` as the rows that would follow the row `after` (its id and hash)."""
    last_id, prev = after
    rows = []
    for entry in entries:
        last_id += 1
        values: dict[str, Any] = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
        values.update(id=last_id, prev_hash=prev)
        body = canonical([_hashed(c, values[c]) for c in CHAIN_COLUMNS])
        prev = hashlib.sha256(body.encode()).hexdigest()
        rows.append(LogRow(**values, hash=prev))
    return rows


def body_of(row: LogRow) -> str:
    """The stored (and hashed) body of a chained row."""
    return canonical([_hashed(c, getattr(row, c)) for c in CHAIN_COLUMNS])


async def append(db: Database, entries: Sequence[LogEntry]) -> list[LogRow]:
    """Chain and insert `entries`. Call inside `db.transaction()`; the `log_head` row follows by
    trigger, and the head moves for the next append once the transaction commits."""
    rows = await chain(db, entries)
    await db.conn.executemany(
        "INSERT INTO roll_log (id, body, hash) VALUES (?, ?, ?)",
        [(r.id, body_of(r), r.hash) for r in rows],
    )
    if rows:
        db.staged_head = (rows[-1].id, rows[-1].hash)
    return rows


ROW_SELECT = "SELECT body, hash FROM roll_log"
_GAME_ROWS = f"{ROW_SELECT} WHERE game_id = ? ORDER BY id"


# Where each of LogRow's fields (but `hash`) sits in a body, and one reusable compact encoder:
# a log page of 50 rows is read in half the time of a dict and keywords per row.
_BODY_ORDER = tuple(CHAIN_COLUMNS.index(f.name) for f in fields(LogRow) if f.name != "hash")
_RESULTS_AT = CHAIN_COLUMNS.index("results")
_compact = json.JSONEncoder(separators=(",", ":")).encode


def row_from_record(record: Sequence[Any]) -> LogRow:
    """A `LogRow` from a `ROW_SELECT` result: the stored body parsed once (cheaper than
    reading twenty generated columns), `results` back in its JSON text form."""
    values = json.loads(record[0])
    if len(values) != len(CHAIN_COLUMNS):
        raise ValueError(f"a roll log body has {len(values)} values, not {len(CHAIN_COLUMNS)}")
    values[_RESULTS_AT] = _compact(values[_RESULTS_AT])
    args = [values[i] for i in _BODY_ORDER]
    args.append(record[1])  # hash
    return LogRow(*args)


@dataclass(frozen=True, slots=True)
class ChainProblem:
    row: int
    reason: str

    def __str__(self) -> str:
        return f"roll log row {self.row}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ChainReport:
    rows: int
    problem: ChainProblem | None


PARALLEL_FROM = 200_000  # rows; below this one thread is quicker than starting processes


async def verify_chain(db: Database) -> ChainReport:
    """Walk the whole log in id order; the first row whose hash, link or id is wrong is named.

    The walk reads its own connections (WAL lets it read while the bot writes) off the event
    loop; SQLite builds each row's canonical text, Python only hashes it, and a large log is
    split by id range across the machine's cores.
    """
    return await asyncio.to_thread(verify_chain_file, str(db.path))


def _reader(path: str | Path) -> sqlite3.Connection:
    return connect_readonly(path)


def _verify_range(path: str, first: int, stop: int, prev: str) -> tuple[int, ChainProblem | None]:
    """Check rows `first` <= id < `stop`, the row before `first` having hash `prev`.

    Each stored body must hash to the row's `hash`, start with the row's id and end with the
    previous row's hash; bytes are compared as stored, nothing is re-encoded.
    """
    reader = _reader(path)
    try:
        walk = reader.execute(
            "SELECT id, CAST(body AS BLOB), CAST(hash AS BLOB) FROM roll_log "
            "WHERE id >= ? AND id < ? ORDER BY id",
            (first, stop),
        )
        expected, count = first, 0
        before = prev.encode()
        sha256 = hashlib.sha256
        while records := walk.fetchmany(50_000):
            for row_id, body, digest in records:
                if row_id != expected:
                    return count, ChainProblem(expected, f"is missing (the next row is {row_id})")
                if sha256(body).hexdigest().encode() != digest:
                    return count, ChainProblem(
                        expected, "its content does not match its hash (edited)"
                    )
                if body[-66:-2] != before or not body.startswith(b"[%d," % expected):
                    return count, ChainProblem(
                        expected,
                        f"its previous-hash does not match row {expected - 1}'s hash "
                        "(one of the two was rewritten)",
                    )
                before = digest
                expected += 1
                count += 1
    finally:
        reader.close()
    if expected != stop:
        return count, ChainProblem(expected, "is missing")
    return count, None


def verify_chain_file(path: str) -> ChainReport:
    reader = _reader(path)
    try:
        last = reader.execute("SELECT max(id) FROM roll_log").fetchone()[0] or 0
        head = reader.execute("SELECT last_id, last_hash FROM log_head").fetchone()
        middle = last // 2 + 1
        before_middle = reader.execute(
            "SELECT hash FROM roll_log WHERE id = ?", (middle - 1,)
        ).fetchone()
        last_hash = reader.execute("SELECT hash FROM roll_log WHERE id = ?", (last,)).fetchone()
    finally:
        reader.close()
    if last >= PARALLEL_FROM and before_middle is not None:
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            halves = [
                pool.submit(_verify_range, path, 1, middle, GENESIS),
                pool.submit(_verify_range, path, middle, last + 1, before_middle[0]),
            ]
            results = [h.result() for h in halves]
    else:
        results = [_verify_range(path, 1, last + 1, GENESIS)]
    count = 0
    for checked, problem in results:
        count += checked
        if problem is not None:
            return ChainReport(count, problem)
    end_hash = last_hash[0] if last_hash else GENESIS
    if head is not None and (int(head[0]), str(head[1])) != (last, end_hash):
        recorded = int(head[0])
        if recorded > last:
            problem = ChainProblem(last + 1, f"is missing: the log ended at row {recorded}")
        elif recorded < last:
            problem = ChainProblem(
                recorded + 1, "was added behind the bot's back (after the log's recorded end)"
            )
        else:
            problem = ChainProblem(recorded, "its hash differs from the log's recorded end")
        return ChainReport(count, problem)
    return ChainReport(count, None)


@dataclass(frozen=True, slots=True)
class LogQuery:
    """Filters for `audit log`; all optional, combined with AND."""

    game_id: int | None = None
    user: str | None = None
    channel_id: str | None = None
    guild_id: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 50
    before_id: int | None = None


# The first row id stamped at or after a time (one past the last row if none): a bisection
# over the ids, which are consecutive from 1 (`audit verify` checks it) and grow with time, so
# some 2 log2(rows) primary-key reads and no time index to keep up at every roll. A row is
# stamped just before it waits for the write lock, so two rows written within milliseconds of
# each other may be stamped out of order: a range's bound can fall on either side of such a
# pair (as it could with the time index, which found the first row by time, then used ids).
_FIRST_AT = """(
    WITH RECURSIVE span(lo, hi) AS (
        SELECT 1, (SELECT COALESCE(MAX(id), 0) + 1 FROM roll_log)
        UNION ALL
        SELECT
            CASE WHEN (SELECT at FROM roll_log WHERE id = (lo + hi) / 2) >= ?
                 THEN lo ELSE (lo + hi) / 2 + 1 END,
            CASE WHEN (SELECT at FROM roll_log WHERE id = (lo + hi) / 2) >= ?
                 THEN (lo + hi) / 2 ELSE hi END
        FROM span WHERE lo < hi
    )
    SELECT lo FROM span WHERE lo >= hi
)"""


def _query_sql(q: LogQuery) -> tuple[str, list[object]]:
    """Newest first, at most `q.limit` rows (page back with `before_id`).

    Ids grow with time, so a date range becomes an id range (a bisection of the ids) and
    every filter is served by an `(x, id)` index: the cost follows `limit`, not the log's size.
    """
    where: list[str] = []
    params: list[object] = []
    if q.game_id is not None:
        where.append("game_id = ?")
        params.append(q.game_id)
    if q.user is not None:
        if (
            q.user.isascii() and q.user.isdigit() and len(q.user) >= 15
        ):  # a Discord user id (a snowflake)
            where.append("user_id = ?")
        else:
            where.append("user_name = ? COLLATE NOCASE")
        params.append(q.user)
    if q.channel_id is not None:
        where.append("channel_id = ?")
        params.append(q.channel_id)
    if q.guild_id is not None:
        where.append("guild_id = ?")
        params.append(q.guild_id)
    if q.since is not None:
        where.append(f"id >= {_FIRST_AT}")
        params.extend([q.since, q.since])
    if q.until is not None:
        where.append(f"id < {_FIRST_AT}")
        params.extend([q.until, q.until])
    if q.before_id is not None:
        where.append("id < ?")
        params.append(q.before_id)
    sql = ROW_SELECT
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(q.limit)
    return sql, params


async def query(db: Database, q: LogQuery) -> list[LogRow]:
    """The rows `q` selects, newest first (see `_query_sql`), read beside the games (see
    `in_thread`): what `mod log` and `audit log` show."""
    return await in_thread(db, lambda reader: query_sync(reader, q))


def query_sync(reader: sqlite3.Connection, q: LogQuery) -> list[LogRow]:
    return list(iter_query(reader, q))


def iter_query(reader: sqlite3.Connection, q: LogQuery) -> Iterator[LogRow]:
    """`query_sync`, one row at a time: a count over 200,000 rows keeps none of them alive
    (and gives the collector nothing big to walk)."""
    sql, params = _query_sql(q)
    return (row_from_record(r) for r in reader.execute(sql, params))


def rows_for_game_sync(reader: sqlite3.Connection, game_id: int) -> list[LogRow]:
    """Every row of one game, oldest first."""
    return [row_from_record(r) for r in reader.execute(_GAME_ROWS, (game_id,))]


async def in_thread(db: Database, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run a read in a worker thread on its own read-only connection: neither the bot's
    connection (which every roll commits through) nor the event loop waits for it. WAL shows
    the reader every commit made before it starts. A moderator's report over 200,000 rows held
    every game up for seconds when it ran on the bot's connection."""

    def run() -> T:
        reader = _reader(db.path)
        try:
            return work(reader)
        finally:
            reader.close()

    return await asyncio.to_thread(run)


async def rows_for_game(conn: aiosqlite.Connection, game_id: int) -> AsyncIterator[LogRow]:
    """Every row of one game, oldest first, streamed."""
    async with conn.execute(_GAME_ROWS, (game_id,)) as cursor:
        async for record in cursor:
            yield row_from_record(record)


async def get(conn: aiosqlite.Connection, row_id: int) -> LogRow | None:
    sql = f"{ROW_SELECT} WHERE id = ?"
    async with conn.execute(sql, (row_id,)) as cursor:
        record = await cursor.fetchone()
    return None if record is None else row_from_record(record)
