"""How long the answers are on a phone: prints, per variant, how many lines a roll, `!card`,
`!status`, `!fairness`, the game-over message, `!rules <variant>` and `!help <variant>` take
in the console channel (every embed line counts, as on a phone). An answer only its asker sees
is shown in brackets, `(26)`: it takes nobody else's screen.

    python -m tests.bench.phone_lines [--rolls 300] [--turns 8]

Each variant is a fresh game in the console (order=join, four players for painted rounds=6 as
the issue measured, two elsewhere). "roll" is the first roll of the first turn with the
README's faces 2 2 6 1 2; "worst first roll" and "worst reroll" are the longest answers over
`--rolls` random first rolls and second rolls on a fresh card. `!fairness` and "game over"
come after `--turns` turns each (roll twice, score the first open box), the game ended by a
moderator (its game-over message has the same lines as at a natural end). The figures are
lines as printed (one per newline), not as a narrow screen wraps them.
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
from bot.replies import Reply
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


def lines(replies: list[Reply] | None) -> int:
    return sum(len(render_reply(r).splitlines()) for r in replies or [])


def shown(replies: list[Reply] | None) -> str:
    """Lines everyone sees, or `(N)` when the whole answer is for its asker only."""
    public = [r for r in replies or [] if not r.private and r.secret_for is None]
    return str(lines(public)) if public else f"({lines(replies)})"


async def play_turns(console: Console, desk: Desk, turns: int) -> None:
    """Seat after seat rolls twice and scores the first open box, `turns` turns in all."""
    for _ in range(turns):
        game = await desk.service.game_here(console.where.channel_id)
        if game is None or game.state.is_over or game.state.current_player is None:
            return
        who = game.name(game.state.current_player)
        await console.post(f"{who}: !roll")
        await console.post(f"{who}: !roll 1 2 3")
        game = await desk.service.require_game_here(console.where.channel_id)
        box = game.state.placements()[0]  # type: ignore[union-attr]
        column = f" {box.column}" if game.state.rules.columns > 1 else ""
        await console.post(f"{who}: !score {box.box}{column}")


async def measure(rolls: int, turns: int) -> list[tuple[str, dict[str, int | str]]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(Path(tmp) / "lines.sqlite3")
        faces = Faces(random.Random(15))
        config = Config()
        desk = Desk(GameService(db, faces), config)
        console = Console(desk, config)
        for label, new, players in VARIANTS:
            await console.post("Mod: !mod end measuring")
            await console.post(f"{NAMES[0]}: !new {new} order=join")
            for name in NAMES[1:players]:
                await console.post(f"{name}: !join")
            await console.post(f"{NAMES[0]}: !start")
            figures: dict[str, int | str] = {}
            if "card" not in new:
                faces.queue = list(README_ROLL)
                figures["roll"] = lines(await console.post(f"{NAMES[0]}: !roll"))
            figures["!card"] = shown(await console.post(f"{NAMES[0]}: !card"))
            figures["!status"] = shown(await console.post(f"{NAMES[0]}: !status"))
            variant = new.split()[0]
            figures["!rules v"] = shown(await console.post(f"{NAMES[0]}: !rules {variant}"))
            figures["!help v"] = shown(await console.post(f"{NAMES[0]}: !help {variant}"))
            if "card" not in new:
                await play_turns(console, desk, turns * players)
                figures["!fairness"] = shown(await console.post(f"{NAMES[0]}: !fairness"))
            figures["game over"] = shown(await console.post("Mod: !mod end measuring"))
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
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    results = asyncio.run(measure(args.rolls, args.turns))
    keys = ["roll", "worst first roll", "worst reroll", "!card", "!status"]
    keys += ["!fairness", "game over", "!rules v", "!help v"]
    widths = {k: max(8, len(k) + 2) for k in keys}
    print(f"{'variant':29}" + "".join(f"{k:>{widths[k]}}" for k in keys))
    for label, figures in results:
        cells = "".join(f"{figures.get(k, '-')!s:>{widths[k]}}" for k in keys)
        print(f"{label:29}{cells}")


if __name__ == "__main__":
    main()
