"""`leaderboard` as the bot answers it, over a real SQLite file: the first answer (every game
reviewed: the classic table loaded from the cache, then ~one review per game) and the next
(the reviews kept in memory), and an undo and a substitute through the desk. Run it under the
suite's lock: `python -m tests.bench.leaderboard_bench --games 40`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from bot.config import Config
from bot.desk import Caller, Desk
from engine import RandomDice
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.bench import report
from tests.bench.review_desk_bench import ANN, BO, WHERE, finished_games

MOD = Who("9", "Mod")
CAT = Who("3", "Cat")


async def timed(desk: Desk, who: Who, text: str, where: Where = WHERE) -> float:
    started = time.perf_counter()
    replies = await desk.text_command(Caller(where, who, is_moderator=who is MOD), text)
    assert replies and not replies[0].refusal, replies[0].text
    return time.perf_counter() - started


async def run(games: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        db = await Database.open(Path(folder) / "bench.sqlite3")
        service = GameService(db, dice=RandomDice(random.Random(7)))
        desk = Desk(service, Config())
        await finished_games(desk, games)
        await timed(desk, MOD, "mod set leaderboard on")
        first = await timed(desk, BO, "leaderboard classic")
        again = [await timed(desk, BO, "leaderboard classic") for _ in range(5)]
        for text, who in (("new classic order=join", ANN), ("join", BO), ("start", ANN)):
            await desk.text_command(Caller(WHERE, who), text)
        await timed(desk, ANN, "roll")
        await timed(desk, ANN, "score chance")
        undo = await timed(desk, ANN, "undo")
        sub = await timed(desk, MOD, "mod sub Ann <@3>")
        await db.close()
    return {
        "games": games,
        "leaderboard_first_s": first,
        "leaderboard_again_ms": statistics.median(again) * 1000,
        "undo_ms": undo * 1000,
        "substitute_ms": sub * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--out", default="leaderboard_bench.json")
    args = parser.parse_args()
    report(asyncio.run(run(args.games)), args.out)


if __name__ == "__main__":
    main()
