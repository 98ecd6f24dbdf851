"""`review`, `hint` and `stats` as the bot answers them, over a real SQLite file: the first
`review` with a cold table (an empty cache: the table is built) and a warm one (the cached
file loaded in a fresh process), a review once the table is in memory, the rolls other
channels get answered during a cold build (the event loop is not held), and `stats` over many
games. Run it under the suite's lock: `python -m tests.bench.review_desk_bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.desk import Caller, Desk
from bot.desk.review import KEPT_REVIEWS, _Recent
from engine import GameState, RandomDice
from engine.autoplay import dice_next_action
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.bench import report

WHERE = Where("guild", "review")
OTHER = Where("guild", "rolls")
ANN, BO = Who("1", "Ann"), Who("2", "Bo")


async def finished_games(desk: Desk, count: int) -> None:
    service = desk.service
    for _ in range(count):
        for text, who in (("new classic order=join", ANN), ("join", BO), ("start", ANN)):
            await desk.text_command(Caller(WHERE, who), text)
        while (game := await service.game_here(WHERE.channel_id)) is not None:
            state = game.state
            assert isinstance(state, GameState)
            player = state.current_player or ""
            await service.play(WHERE, Who(player, game.name(player)), dice_next_action(state))


async def timed(desk: Desk, text: str, where: Where = WHERE) -> float:
    started = time.perf_counter()
    (reply,) = await desk.text_command(Caller(where, ANN), text)
    assert not reply.refusal, reply.text
    return time.perf_counter() - started


async def rolls_meanwhile(desk: Desk, work: asyncio.Task[float]) -> list[float]:
    """Roll (and score) in another channel, paced, for as long as `work` runs: each answer's
    time."""
    times = []
    caller = Caller(OTHER, ANN)
    await desk.text_command(caller, "new classic")
    await desk.text_command(caller, "start solo")
    while not work.done():
        for text in ("roll", "score chance"):
            started = time.perf_counter()
            await desk.text_command(caller, text)
            times.append(time.perf_counter() - started)
        await desk.text_command(caller, "status")
        await asyncio.sleep(0.05)  # a busy server: some 20 rolls a second
    return times


def peak_rss_mb() -> float:
    """This process's high-water mark of resident memory (`VmHWM`)."""
    status = Path("/proc/self/status").read_text()
    return next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM")) / 1024


async def child(db_path: str, cache: str, what: str) -> dict[str, Any]:
    """One fresh process's figures (its first review loads or builds the table)."""
    db = await Database.open(Path(db_path))
    service = GameService(db, dice=RandomDice(random.Random(1)))
    desk = Desk(service, Config())
    desk.reviews.cache = Path(cache)
    try:
        if what == "cold":
            work = asyncio.create_task(timed(desk, "review game 1"))
            rolls = await rolls_meanwhile(desk, work)
            return {"first_review_s": await work, "rolls_meanwhile": len(rolls),
                    "roll_p50_ms": 1000 * statistics.median(rolls),
                    "roll_max_ms": 1000 * max(rolls), "peak_rss_mb": peak_rss_mb()}  # fmt: skip
        first = await timed(desk, "review game 1")
        again = [await timed(desk, f"review game {n}") for n in range(2, 12)]
        hint_db = {"first_review_s": first, "review_in_memory_ms": 1000 * statistics.median(again)}
        started = time.perf_counter()
        await timed(desk, "stats")
        hint_db["stats_warm_ms"] = 1000 * (time.perf_counter() - started)
        hint_db["peak_rss_mb"] = peak_rss_mb()
        return hint_db
    finally:
        await db.close()


async def stats_cold(db_path: str, cache: str, games: int) -> dict[str, float]:
    db = await Database.open(Path(db_path))
    service = GameService(db)
    desk = Desk(service, Config())
    desk.reviews.cache = Path(cache)
    try:
        await timed(desk, "review game 1")  # the table in memory
        desk.reviews._kept = _Recent(KEPT_REVIEWS)  # no review kept: each is worked out
        started = time.perf_counter()
        await timed(desk, "stats")
        return {"stats_games": games, "stats_cold_s": time.perf_counter() - started}
    finally:
        await db.close()


async def make_db(path: Path, games: int) -> None:
    db = await Database.open(path)
    service = GameService(db, dice=RandomDice(random.Random(18)))
    await finished_games(Desk(service, Config()), games)
    await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--child", nargs=3)
    parser.add_argument("--out", default="bench-results-review-desk.json")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(*args.child))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        db_path, cache = Path(tmp) / "bench.sqlite3", Path(tmp) / "cache"
        asyncio.run(make_db(db_path, args.games))
        figures: dict[str, Any] = {}
        for what in ("cold", "warm"):
            out = subprocess.run(
                [sys.executable, "-m", "tests.bench.review_desk_bench", "--child",
                 str(db_path), str(cache), what],
                check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            figures[what] = json.loads(out.strip().splitlines()[-1])
        figures["stats"] = asyncio.run(stats_cold(str(db_path), str(cache), args.games))
    report(figures, args.out)


if __name__ == "__main__":
    main()
