"""`rollkeeper db copy --from FILE --to URI`: a SQLite database into an existing, empty
PostgreSQL database, and proof that the two hold the same log.

The source must verify first (`audit verify`); the target must hold no table at all, or
rollkeeper's schema with no game and no log row. Every table is copied in one transaction (a
failure leaves the target as empty as it was), then the target is verified on its own and
compared with the source: the same chains ending at the same (seq, hash), the same rows in
the same order as `audit log` shows them, and the same export of every game. The seal key
is the source's: it is copied to where the target looks for it by default (unless the
environment holds it, or a key file is already there with the same id).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from storage import rolllog
from storage.audit import VerifyReport, export_log, verify_file
from storage.backends.base import Reader
from storage.backends.errors import DatabaseFileError, Durability
from storage.backends.postgres import PostgresBackend
from storage.backends.sqlite import connect_readonly as sqlite_reader
from storage.db import Database, connect_readonly, key_home
from storage.rolllog import LogQuery
from storage.seal import SealKeyError, default_key_file, find_key, read_key_file, write_key_file

BATCH = 2_000
# Parents before children (foreign keys); `log` before `games`, so the trigger that moves a
# game's recorded end finds no game yet and the copied ends stand as they were.
FIRST = ("log", "games")
IDENTITY = ("games", "reminders", "outbox")


class CopyRefused(DatabaseFileError):
    """The copy was not made: the source does not verify (`status` 1), or the target is not
    empty (2, as any unusable input)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class CopyReport:
    source: VerifyReport
    target: VerifyReport
    rows: dict[str, int]  # rows copied per table
    differences: list[str]  # where the copy disagrees with the source (empty: none)
    key_note: str


async def copy_database(source: Path, url: str, key_file: Path | None = None) -> CopyReport:
    """Copy `source` (a SQLite file) into the empty database at `url`, verify both, compare."""
    checked = await asyncio.to_thread(verify_file, source)
    if checked.problem is not None:
        raise CopyRefused(
            f"{source} does not verify ({checked.problem}): nothing was copied "
            "(`rollkeeper audit verify` says more)",
            status=1,
        )
    db = await Database.open(source, migrate=False)  # the schema must be this release's
    await db.close()
    target = await PostgresBackend.open(url, Durability.FULL, writer=True)
    try:
        await _require_empty(target)
        await target.migrate(target.latest())
        rows = await _copy_tables(source, target)
    finally:
        await target.close()
    note = _copy_key(source, url, key_file)
    copied = await asyncio.to_thread(verify_file, url)
    differences = await asyncio.to_thread(_compare, source, url)
    if copied.problem is None and (copied.rows, copied.games) != (checked.rows, checked.games):
        differences.append(
            f"verify counts {copied.rows} rows and {copied.games} games in the copy, "
            f"{checked.rows} and {checked.games} in the source"
        )
    return CopyReport(checked, copied, rows, differences, note)


async def _require_empty(target: PostgresBackend) -> None:
    if await target.is_empty():
        return
    if await target.version() > 0:
        games = await target.pg.execute_fetchall("SELECT count(*) FROM games")
        rows = await target.pg.execute_fetchall("SELECT count(*) FROM log")
        if int(games[0][0]) == 0 and int(rows[0][0]) == 0:
            return
        raise CopyRefused(
            f"{target.where} already holds rollkeeper data ({_count(games[0][0], 'game')}, "
            f"{_count(rows[0][0], 'log row')}): copy into a new, empty database"
        )
    raise CopyRefused(
        f"{target.where} is not empty (it has tables of its own): copy into a new, empty "
        "database (createdb NAME)"
    )


async def _copy_tables(source: Path, target: PostgresBackend) -> dict[str, int]:
    """Every table's rows, in one transaction; identity counters moved past the copied ids."""
    reader = sqlite_reader(source)
    counts: dict[str, int] = {}
    try:
        tables = [
            str(t)
            for (t,) in reader.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        ordered = [t for t in FIRST if t in tables] + [t for t in tables if t not in FIRST]
        await target.begin()
        try:
            await target.pg.simple("DELETE FROM log_head")  # made by the migration
            for table in ordered:
                counts[table] = await _copy_table(reader, target, table)
            for table in IDENTITY:
                await target.pg.simple(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
                )
            await target.commit()
        except BaseException:
            await target.rollback()
            raise
    finally:
        reader.close()
    return counts


async def _copy_table(reader: Reader, target: PostgresBackend, table: str) -> int:
    """One table: the columns the target stores (its generated ones are worked out again)."""
    found = await target.pg.execute_fetchall(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    )
    columns = ", ".join(str(c[0]) for c in found)
    insert = f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(found))})"
    if table == "chains":  # the log's trigger made them as it went: the source's stand
        insert += " ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash"
        insert += ", guild_id = excluded.guild_id, at = excluded.at"
    if table == "log_actors":  # the log's trigger indexed each row as it was copied
        insert += " ON CONFLICT DO NOTHING"
    if table == "log_indexed":  # its one row, made by the migration
        insert += " ON CONFLICT (only_row) DO UPDATE SET upto = excluded.upto"
    cursor = reader.execute(f"SELECT {columns} FROM {table}")
    count = 0
    while batch := cursor.fetchmany(BATCH):
        await target.pg.executemany(insert, batch)
        count += len(batch)
    return count


def _copy_key(source: Path, url: str, key_file: Path | None) -> str:
    """The source's seal key where the target will look for it (`key_file`, else the
    default for the URI), never over a different key."""
    try:
        key = find_key(source)
    except SealKeyError as exc:
        return f"The seal key was not copied: {exc}."
    if key is None:
        return "The source's seal key was not found: the copy's open games need it to roll."
    if key.origin.startswith("$"):
        return f"The seal key comes from {key.origin}: keep it set for the copy."
    place = (key_file or default_key_file(key_home(url))).absolute()
    there = read_key_file(place)
    if there is not None and there.key_id != key.key_id:
        return (
            f"The seal key was NOT copied: {place} holds another key ({there.key_id}). "
            f"Name {key.origin} as seal_key_file in the config for the copy."
        )
    if there is None:
        write_key_file(place, key)
    return f"Seal key {key.key_id} in {place} (owner-only): name it as seal_key_file if moved."


def _compare(source: Path, url: str) -> list[str]:
    """Where the two disagree: chain ends, the log's rows, each game's export."""
    old, new = connect_readonly(source), connect_readonly(url)
    try:
        differences: list[str] = []
        ends = (
            "SELECT l.chain, l.seq, l.hash FROM log l JOIN (SELECT chain AS c, max(seq) AS s "
            "FROM log GROUP BY chain) AS e ON l.chain = e.c AND l.seq = e.s ORDER BY l.chain"
        )
        if old.execute(ends).fetchall() != new.execute(ends).fetchall():
            differences.append("the chains end at different rows or hashes")
        everything = LogQuery(limit=1_000_000_000)
        if rolllog.query_sync(old, everything) != rolllog.query_sync(new, everything):
            differences.append("the log's rows differ (as `audit log` shows them)")
        games = [int(g) for (g,) in old.execute("SELECT id FROM games ORDER BY id")]
    finally:
        old.close()
        new.close()
    differences += asyncio.run(_compare_exports(source, url, games))
    return differences


async def _compare_exports(source: Path, url: str, games: list[int]) -> list[str]:
    differences = []
    old = await Database.open(source, migrate=False)
    new = await Database.open(url, migrate=False)
    try:
        for game in games:
            if await export_log(old.conn, game) != await export_log(new.conn, game):
                differences.append(f"game {game} exports differently")
    finally:
        await old.close()
        await new.close()
    return differences


def _count(number: object, noun: str) -> str:
    """`1 game`, `3 games`."""
    return f"{number} {noun}{'' if str(number) == '1' else 's'}"
