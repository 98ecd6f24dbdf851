"""The roll log: every roll the bot makes, append-only and hash-chained.

Each row's `hash` is SHA-256 over its canonical content, which includes the previous row's
hash; changing, removing or inserting any row breaks the chain at that row. Corrections are
new rows that reference the row they correct (`corrects`), with a reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import aiosqlite

GENESIS = "0" * 64

# Actions, in the forum's words.
START_ROLL = "Start roll"
ROLL_NAMES = ("First roll", "Second roll", "Third roll")
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


def row_hash(values: Sequence[Any]) -> str:
    """SHA-256 (hex) of a row's canonical form: a compact JSON array of `CHAIN_COLUMNS`."""
    canonical = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def encode_results(results: Sequence[tuple[str, int, str | None]]) -> str:
    return json.dumps([list(r) for r in results], separators=(",", ":"))


async def append(conn: aiosqlite.Connection, entries: Sequence[LogEntry]) -> list[LogRow]:
    """Chain and insert `entries`. Call inside a write transaction."""
    async with conn.execute("SELECT last_id, last_hash FROM log_head") as cursor:
        head = await cursor.fetchone()
    last_id, prev = (int(head[0]), str(head[1])) if head else (0, GENESIS)
    rows = []
    for entry in entries:
        last_id += 1
        values = {**asdict(entry), "id": last_id, "prev_hash": prev}
        digest = row_hash([values[c] for c in CHAIN_COLUMNS])
        row = LogRow(**values, hash=digest)
        rows.append(row)
        prev = digest
    placeholders = ",".join("?" * len(ALL_COLUMNS))
    await conn.executemany(
        f"INSERT INTO roll_log ({','.join(ALL_COLUMNS)}) VALUES ({placeholders})",
        [[getattr(r, c) for c in ALL_COLUMNS] for r in rows],
    )
    await conn.execute(
        "UPDATE log_head SET last_id = ?, last_hash = ? WHERE only_row = 1", (last_id, prev)
    )
    return rows


def row_from_record(record: Sequence[Any]) -> LogRow:
    """A `LogRow` from a `SELECT <ALL_COLUMNS>` result."""
    values = dict(zip(ALL_COLUMNS, record, strict=True))
    return LogRow(**values)


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


async def verify_chain(conn: aiosqlite.Connection, batch: int = 20_000) -> ChainReport:
    """Walk the whole log in id order; the first row whose hash, link or id is wrong is named."""
    select = f"SELECT {','.join(ALL_COLUMNS)} FROM roll_log WHERE id > ? ORDER BY id LIMIT ?"
    expected_id, prev, count = 1, GENESIS, 0
    while True:
        async with conn.execute(select, (expected_id - 1, batch)) as cursor:
            records = await cursor.fetchall()
        if not records:
            break
        for record in records:
            row_id = record[0]
            if row_id != expected_id:
                return ChainReport(
                    count, ChainProblem(expected_id, f"is missing (the next row is {row_id})")
                )
            if record[-2] != prev:
                return ChainReport(
                    count,
                    ChainProblem(row_id, "its previous-hash does not match the row before it"),
                )
            digest = row_hash(record[:-1])
            if digest != record[-1]:
                return ChainReport(
                    count, ChainProblem(row_id, "its content does not match its hash (edited)")
                )
            prev = record[-1]
            expected_id += 1
            count += 1
    async with conn.execute("SELECT last_id, last_hash FROM log_head") as cursor:
        head = await cursor.fetchone()
    if head is not None and (int(head[0]), str(head[1])) != (expected_id - 1, prev):
        recorded = int(head[0])
        if recorded >= expected_id:
            problem = ChainProblem(expected_id, f"is missing: the log ended at row {recorded}")
        elif recorded < expected_id - 1:
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


async def query(conn: aiosqlite.Connection, q: LogQuery) -> list[LogRow]:
    """Newest first, at most `q.limit` rows (page back with `before_id`).

    Ids grow with time, so a date range becomes an id range (one seek in the time index) and
    every filter is served by an `(x, id)` index: the cost follows `limit`, not the log's size.
    """
    where: list[str] = []
    params: list[object] = []
    if q.game_id is not None:
        where.append("game_id = ?")
        params.append(q.game_id)
    if q.user is not None:
        if q.user.isdigit() and len(q.user) >= 15:  # a Discord user id (a snowflake)
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
        where.append(
            "id >= COALESCE((SELECT id FROM roll_log WHERE at >= ? ORDER BY at LIMIT 1), 1 << 62)"
        )
        params.append(q.since)
    if q.until is not None:
        where.append(
            "id < COALESCE((SELECT id FROM roll_log WHERE at >= ? ORDER BY at LIMIT 1), 1 << 62)"
        )
        params.append(q.until)
    if q.before_id is not None:
        where.append("id < ?")
        params.append(q.before_id)
    sql = f"SELECT {','.join(ALL_COLUMNS)} FROM roll_log"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(q.limit)
    async with conn.execute(sql, params) as cursor:
        return [row_from_record(r) for r in await cursor.fetchall()]


async def rows_for_game(conn: aiosqlite.Connection, game_id: int) -> AsyncIterator[LogRow]:
    """Every row of one game, oldest first, streamed."""
    sql = f"SELECT {','.join(ALL_COLUMNS)} FROM roll_log WHERE game_id = ? ORDER BY id"
    async with conn.execute(sql, (game_id,)) as cursor:
        async for record in cursor:
            yield row_from_record(record)


async def get(conn: aiosqlite.Connection, row_id: int) -> LogRow | None:
    sql = f"SELECT {','.join(ALL_COLUMNS)} FROM roll_log WHERE id = ?"
    async with conn.execute(sql, (row_id,)) as cursor:
        record = await cursor.fetchone()
    return None if record is None else row_from_record(record)
