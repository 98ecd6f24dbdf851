"""What one roll costs on its road to the disk: WAL pages written per roll's commit, CPU time
and wall time per `!roll`, through the desk and the real storage (a real SQLite file, durable
commits, production dice from committed seeds), with no Discord in the way.

    python -m tests.bench.roll_road [--games 50] [--turns 12] [--out roll_road.json]

Pages are counted from the WAL itself (checkpoints off while measuring): each frame is one
page written by a commit. Three times: as the console plays (`roll`), and as Discord plays
(`roll_outbox`: each roll's message queued in the outbox in the same commit, and the messages
posted marked sent in one commit per 25 rolls, as the sender's quarter-second batches do at
100 rolls a second; `mark_pages_per_roll` is that commit's share), and as a typed `!roll` plays
on Discord (`roll_typed`: as `roll_outbox`, and the command's message id, link and text kept
for the watchdog, which links the message to its roll). The floor is the least a
durable roll needs: one row inserted into a table with only its primary key, in its own
transaction.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import aiosqlite

from bot.config import Config
from bot.desk import Caller, Desk
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.bench import pct, report

FRAME_HEADER = 24


def wal_frames(path: Path, page_size: int) -> int:
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size if wal.exists() else 0
    return max(0, size - 32) // (page_size + FRAME_HEADER)


MARK_EVERY = 25  # rolls between the sender's marks (`roll_outbox`)


async def rolls(
    games: int, turns: int, folder: Path, outbox: bool = False, typed: bool = False
) -> dict[str, float]:
    path = folder / f"road-{outbox}-{typed}.sqlite"
    db = await Database.open(path)
    await db.conn.execute("PRAGMA wal_autocheckpoint=0")
    page_size = int((await (await db.conn.execute("PRAGMA page_size")).fetchone())[0])  # type: ignore[index]
    service = GameService(db)
    desk = Desk(service, Config(), outbox=outbox)
    marks: list[int] = []
    players = [
        Caller(Where("g", f"c{n}"), Who(str(100_000_000_000_000_000 + n), f"P{n}"))
        for n in range(games)
    ]
    for player in players:
        await desk.text_command(player, "new classic")
        await desk.text_command(player, "start solo")
    frames: list[int] = []
    cpu: list[float] = []
    wall: list[float] = []
    messages = itertools.count(1_300_000_000_000_000_000)  # a typed command's message ids
    for _turn in range(turns):
        for player in players:
            for command in ("roll", "roll d1,d2"):
                caller = player
                if typed:  # its message's id, link and text, for the watchdog
                    n = next(messages)
                    caller = Caller(
                        replace(
                            player.where,
                            message_id=str(n),
                            jump_url=f"https://discord.com/channels/1/2/{n}",
                            content=f"!{command}",
                        ),
                        player.who,
                    )
                await db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                before = wal_frames(path, page_size)
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                (reply,) = await desk.text_command(caller, command)
                wall.append(time.perf_counter() - wall_start)
                cpu.append(time.process_time() - cpu_start)
                frames.append(wal_frames(path, page_size) - before)
                assert not reply.refusal, reply.text
                if outbox and len(frames) % MARK_EVERY == 0:
                    marks.append(await mark_sent(service, path, page_size))
            assert reply.controls is not None
            await desk.text_command(player, f"score {reply.controls.options[0].value}")
    rows = (await (await db.conn.execute("SELECT count(*) FROM log")).fetchone())[0]  # type: ignore[index]
    await db.close()
    marked = {"mark_pages_per_roll": sum(marks) / len(frames)} if outbox else {}
    return {
        "rolls": len(frames),
        "log_rows": rows,
        "wal_pages_per_roll_mean": statistics.fmean(frames),
        **marked,
        "wal_pages_per_roll_max": max(frames),
        "cpu_ms_per_roll_median": statistics.median(cpu) * 1000,
        "wall_ms_per_roll_median": statistics.median(wall) * 1000,
        "wall_ms_per_roll_p99": pct(wall, 0.99) * 1000,
    }


async def mark_sent(service: GameService, path: Path, page_size: int) -> int:
    """Mark every message queued so far sent, as the sender does in one commit: its pages."""
    await service.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = wal_frames(path, page_size)
    ids = [q.id for q in await service.outbox()]
    if ids:
        await service.posted(ids)
    service.ctx.handed.clear()
    service.ctx.owed.clear()
    return wal_frames(path, page_size) - before


async def floor(count: int, folder: Path) -> dict[str, float]:
    path = folder / "floor.sqlite"
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        for pragma in (
            "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=FULL",
            "PRAGMA wal_autocheckpoint=0",
        ):
            await conn.execute(pragma)
        await conn.execute("CREATE TABLE rolls (id INTEGER PRIMARY KEY, body TEXT)")
        page_size = int((await (await conn.execute("PRAGMA page_size")).fetchone())[0])  # type: ignore[index]
        frames, wall = [], []
        for n in range(count):
            await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            before = wal_frames(path, page_size)
            start = time.perf_counter()
            await conn.execute("BEGIN IMMEDIATE")
            await conn.execute("INSERT INTO rolls (body) VALUES (?)", (f"roll {n} " * 30,))
            await conn.execute("COMMIT")
            wall.append(time.perf_counter() - start)
            frames.append(wal_frames(path, page_size) - before)
    return {
        "wal_pages_per_roll_mean": statistics.fmean(frames),
        "wall_ms_per_roll_median": statistics.median(wall) * 1000,
        "wall_ms_per_roll_p99": pct(wall, 0.99) * 1000,
    }


async def main(games: int, turns: int, out: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        road = await rolls(games, turns, Path(folder))
        queued = await rolls(games, turns, Path(folder), outbox=True)
        typed = await rolls(games, turns, Path(folder), outbox=True, typed=True)
        bare = await floor(int(road["rolls"]), Path(folder))
    for measured in (road, queued, typed):
        measured["wall_median_vs_floor"] = (
            measured["wall_ms_per_roll_median"] / bare["wall_ms_per_roll_median"]
        )
        measured["wall_p99_vs_floor"] = (
            measured["wall_ms_per_roll_p99"] / bare["wall_ms_per_roll_p99"]
        )
    report({"roll": road, "roll_outbox": queued, "roll_typed": typed, "floor": bare}, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--out", default="roll_road.json")
    args = parser.parse_args()
    asyncio.run(main(args.games, args.turns, args.out))
