"""Storage benchmark: prints a table and writes the figures as JSON.

    python -m tests.bench.storage_bench [--rows 1000000] [--out bench-results-storage.json]

1. Roll command latency through the game service (load, apply, one committed transaction)
   with durability `full` (fsync per commit) and `normal`, and raw append throughput.
2. A roll log of --rows rows (built with executemany in big transactions): the last 50 rolls
   of a game and one player's rolls over a date range, p50/p99, cold (the file dropped from the
   OS page cache first) and warm (the file read once, as a running server's cache holds it).
3. `audit verify`'s chain walk in rows per second, cold and warm.

`--log-file PATH` keeps the log there (and reuses it when it exists with the same --rows): a
10,000,000-row log takes some 17 minutes to build on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine import RandomDice, Roll, Score, Start
from storage import rolllog
from storage.db import Database, Durability
from storage.people import pseudonym
from storage.rolllog import INSERT, LogEntry, LogQuery, chain_rows, encode_results, stored
from storage.service import GameService, Where, Who, timestamp
from tests.bench import pct, report


async def command_latency(path: Path, durability: Durability, commands: int) -> dict[str, float]:
    db = await Database.open(path, durability)
    service = GameService(db, RandomDice(random.Random(7)))
    players = [Who(f"{n:018d}", f"p{n}") for n in range(10)]
    wheres = [Where("bench", f"c{n}") for n in range(10)]
    for where, who in zip(wheres, players, strict=True):
        await service.new_game(where, who, "classic", {"order": "join"})
        await service.play(where, who, Start())
    samples = []
    done = 0
    started = time.perf_counter()
    while done < commands:
        for where, who in zip(wheres, players, strict=True):
            game = await service.require_game_here(where.channel_id)
            t0 = time.perf_counter()
            if game.state.rolls_used < 3:
                dice = None if not game.state.rolls_used else ("d1", "d2")
                outcome = await service.play(where, who, Roll(who.user_id, dice))
            else:
                box = game.state.placements()[0].box
                outcome = await service.play(where, who, Score(who.user_id, box))
            samples.append(time.perf_counter() - t0)
            done += 1
            if outcome.game.state.is_over:
                await service.new_game(where, who, "classic", {"order": "join"})
                await service.play(where, who, Start())
    elapsed = time.perf_counter() - started
    await db.close()
    return {
        "p50_ms": pct(samples, 0.50) * 1000,
        "p99_ms": pct(samples, 0.99) * 1000,
        "commands_per_s": done / elapsed,
    }


LOG_START = datetime(2025, 11, 1, tzinfo=UTC)


async def build_log(path: Path, rows: int, games: int, users: int) -> None:
    """A log of `rows` chained rows over a year from LOG_START, in 100k-row transactions."""
    db = await Database.open(path, Durability.NORMAL)
    conn = db.conn
    start = LOG_START
    step = timedelta(days=365) / rows
    async with db.transaction():
        await conn.executemany(
            "INSERT INTO games (id, guild_id, channel_id, number, preset, options, phase, "
            "snapshot, names, version, created_by, created_at, updated_at) "
            "VALUES (?, 'g', ?, ?, 'classic', '{}', 'over', '{}', '{}', 1, 'u', '', '')",
            [(g, f"c{g}", g) for g in range(1, games + 1)],
        )
    rng = random.Random(3)
    salts = {u: f"{u:032x}" for u in range(1, users + 1)}
    who = {f"{u:018d}": pseudonym(salts[u], "g", f"{u:018d}") for u in salts}
    async with db.transaction():
        await conn.executemany(
            "INSERT INTO persons (guild_id, user_id, pseudonym, salt, name) "
            "VALUES ('g', ?, ?, ?, ?)",
            [(f"{u:018d}", who[f"{u:018d}"], salts[u], f"user{u}") for u in salts],
        )
    heads: dict[str, tuple[int, str]] = {}
    row_id = 0
    while row_id < rows:
        entries = []
        for _ in range(min(100_000, rows - row_id)):
            row_id += 1
            game = rng.randint(1, games)
            user = rng.randint(1, users)
            faces = [rng.randint(1, 6) for _ in range(5)]
            entries.append(
                LogEntry(
                    at=timestamp(start + step * row_id),
                    guild_id="g",
                    channel_id=f"c{game}",
                    user_id=f"{user:018d}",
                    user_name=f"user{user}",
                    action="First roll",
                    dice="d1,d2,d3,d4,d5",
                    results=encode_results([(f"d{i + 1}", f, None) for i, f in enumerate(faces)]),
                    game_id=game,
                    game_number=game,
                    game_seq=1,
                    variant="classic",
                    turn_label=f"Yahtzee Game {game} Turn 1",
                    randomness="bench",
                )
            )
        chained = chain_rows(heads, row_id - len(entries) + 1, entries, who)
        for row in chained:
            heads[row.chain_name] = (row.seq, row.hash)
        async with db.transaction():
            await conn.executemany(INSERT, [stored(r) for r in chained])
            await rolllog.index_actors(db)  # as the bot's batches do, behind the rolls
    await db.close()


def evict(path: Path) -> bool:
    """Drop the database's pages from the OS page cache (cold: every page a read from disk);
    False where the OS cannot be asked."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for part in (path, path.with_name(path.name + "-wal")):
        if part.exists():
            fd = os.open(part, os.O_RDONLY)
            try:
                os.fsync(fd)  # only clean pages can be dropped
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    return True


def warm(path: Path) -> None:
    """Read the file once, as a long-running server's page cache would hold it."""
    with path.open("rb") as f:
        while f.read(1 << 24):
            pass


async def queries(
    path: Path, start: datetime, games: int, users: int, seed: int
) -> dict[str, float]:
    """300 of each query as `mod log` runs it (`rolllog.query`: its own read-only connection
    in a worker thread, SQLite's page cache empty each time)."""
    db = await Database.open(path)
    rng = random.Random(seed)
    by_game, by_user = [], []
    for _ in range(300):
        game = rng.randint(1, games)
        t0 = time.perf_counter()
        rows = await rolllog.query(db, LogQuery(game_id=game, limit=50))
        by_game.append(time.perf_counter() - t0)
        assert rows
        user = rng.randint(1, users)
        since = start + timedelta(days=rng.randint(0, 300))
        t0 = time.perf_counter()
        await rolllog.query(
            db,
            LogQuery(
                user=f"user{user}",
                since=timestamp(since),
                until=timestamp(since + timedelta(days=30)),
                limit=50,
            ),
        )
        by_user.append(time.perf_counter() - t0)
    await db.close()
    return {
        "game_last50_p50_ms": pct(by_game, 0.5) * 1000,
        "game_last50_p99_ms": pct(by_game, 0.99) * 1000,
        "user_range_p50_ms": pct(by_user, 0.5) * 1000,
        "user_range_p99_ms": pct(by_user, 0.99) * 1000,
    }


async def verify(path: Path) -> dict[str, float]:
    db = await Database.open(path)
    t0 = time.perf_counter()
    report = await rolllog.verify_chain(db)
    verify_s = time.perf_counter() - t0
    assert report.problem is None, report.problem
    await db.close()
    return {"rows_per_s": report.rows / verify_s, "rows": report.rows}


async def history(path: Path, start: datetime, games: int, users: int) -> dict[str, object]:
    """The queries and the chain walk twice: cold (the file dropped from the OS page cache, so
    each page is a read from disk) and warm (the file in the page cache, as on a server that
    has been running), each time with other games and players."""
    results: dict[str, object] = {}
    if evict(path):
        results["cold"] = await queries(path, start, games, users, seed=5)
        evict(path)
        results["cold_verify"] = await verify(path)
    warm(path)
    results["warm"] = await queries(path, start, games, users, seed=6)
    results["warm_verify"] = await verify(path)
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--commands", type=int, default=600)
    parser.add_argument("--out", default="bench-results-storage.json")
    parser.add_argument("--log-file", type=Path, help="keep (or reuse) the roll log here")
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for durability in Durability:
            figures = await command_latency(
                base / f"cmd-{durability}.sqlite3", durability, args.commands
            )
            results[f"roll_command_{durability}"] = figures
        games, users = max(1, args.rows // 100), max(1, args.rows // 1000)
        log = args.log_file or base / "log.sqlite3"
        if args.log_file is None or not log.exists():
            t0 = time.perf_counter()
            await build_log(log, args.rows, games, users)
            results["log_build_s"] = time.perf_counter() - t0
        results["log"] = {
            "rows": args.rows,
            "games": games,
            "users": users,
            **await history(log, LOG_START, games, users),
        }
    report(results, args.out)


if __name__ == "__main__":
    asyncio.run(main())
