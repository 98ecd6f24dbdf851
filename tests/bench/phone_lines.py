"""How long the first-hour answers are on a phone: prints, per variant, how many lines a roll,
`!card` and `!status` take in the console channel (every embed line counts, as on a phone).

    python -m tests.bench.phone_lines [--rolls 300]

Each variant is a fresh game in the console (order=join, four players for painted rounds=6 as
the issue measured, two elsewhere). "roll" is the first roll of the first turn with the
README's faces 2 2 6 1 2; "worst first roll" and "worst reroll" are the longest answers over
`--rolls` random first rolls and second rolls on a fresh card. The figures are lines as printed
(one per newline), not as a narrow screen wraps them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from pathlib import Path

from bot.config import Config
from bot.console import Console, render_reply
from bot.desk import Desk
from engine import make_rules
from storage.db import Database
from storage.service import GameService

VARIANTS = [
    ("classic", "classic", 2),
    ("triple", "triple", 2),
    ("painted rounds=6 (4 players)", "painted rounds=6", 4),
    ("painted-pyz", "painted-pyz", 2),
    ("card", "card", 2),
]
NAMES = ["Gypsy", "Second", "Third", "Fourth"]
README_ROLL = [2, 2, 6, 1, 2]


class Faces:
    """Faces scripted per command; random ones once the script runs out."""

    def __init__(self, rng: random.Random) -> None:
        self.queue: list[int] = []
        self.rng = rng

    def roll_die(self, sides: int) -> int:
        return self.queue.pop(0) if self.queue else self.rng.randint(1, sides)


def lines(replies: list[object] | None) -> int:
    return sum(len(render_reply(r).splitlines()) for r in replies or [])  # type: ignore[arg-type]


async def measure(rolls: int) -> list[tuple[str, dict[str, int]]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(Path(tmp) / "lines.sqlite3")
        faces = Faces(random.Random(15))
        config = Config()
        console = Console(Desk(GameService(db, faces), config), config)
        for label, new, players in VARIANTS:
            await console.post("Mod: !mod end measuring")
            await console.post(f"{NAMES[0]}: !new {new} order=join")
            for name in NAMES[1:players]:
                await console.post(f"{name}: !join")
            await console.post(f"{NAMES[0]}: !start")
            figures: dict[str, int] = {}
            if "card" not in new:
                faces.queue = list(README_ROLL)
                figures["roll"] = lines(await console.post(f"{NAMES[0]}: !roll"))
            figures["!card"] = lines(await console.post(f"{NAMES[0]}: !card"))
            figures["!status"] = lines(await console.post(f"{NAMES[0]}: !status"))
            if "card" not in new:
                worst_first = worst_second = 0
                for _ in range(rolls):
                    await console.post("Mod: !mod end measuring")
                    await console.post(f"{NAMES[0]}: !new {new} order=join")
                    await console.post(f"{NAMES[1]}: !join")
                    await console.post(f"{NAMES[0]}: !start")
                    worst_first = max(worst_first, lines(await console.post(f"{NAMES[0]}: !roll")))
                    first_two = ",".join(make_rules(new.split()[0]).dice.names[:2])
                    second = await console.post(f"{NAMES[0]}: !roll {first_two}")
                    worst_second = max(worst_second, lines(second))
                figures["worst first roll"] = worst_first
                figures["worst reroll"] = worst_second
            results.append((label, figures))
        await db.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=300)
    args = parser.parse_args()
    results = asyncio.run(measure(args.rolls))
    keys = ["roll", "worst first roll", "worst reroll", "!card", "!status"]
    print(f"{'variant':30} " + " ".join(f"{k:>16}" for k in keys))
    for label, figures in results:
        cells = " ".join(f"{figures.get(k, '-')!s:>16}" for k in keys)
        print(f"{label:30} {cells}")


if __name__ == "__main__":
    main()
