"""A stream of game commands against a database, for the SIGKILL test.

Prints `ACK <log id> <hash>` for every log row and `DONE <channel> <version>` for every
command, each only after its transaction committed. Restarted on the same file, it carries on
with the games where they are.
"""

from __future__ import annotations

import asyncio
import random
import sys

from engine import Phase, Roll, Score, Start
from storage.db import Database
from storage.service import GameService, Where, Who

CHANNELS = 4


async def main(path: str) -> None:
    db = await Database.open(path)
    service = GameService(db)  # production dice: committed seeds, HMAC draws
    choose = random.Random()

    async def step(channel: int) -> None:
        where = Where("guild", f"chan-{channel}", message_id=None)
        who = Who(f"{channel:018d}", f"player{channel}")
        game = await service.game_here(where.channel_id)
        if game is None:
            outcome = await service.new_game(where, who, "classic", {"order": "join"})
            report(outcome.rows, where.channel_id, outcome.game.version)
            outcome = await service.play(where, who, Start())
        elif game.state.phase is Phase.LOBBY:
            outcome = await service.play(where, who, Start())
        else:
            state = game.state
            if state.rolls_used == 0 or (state.rolls_used < 3 and choose.random() < 0.5):
                names = (
                    None
                    if state.rolls_used == 0
                    else tuple(choose.sample(state.rules.dice.names, choose.randint(1, 5)))
                )
                outcome = await service.play(where, who, Roll(who.user_id, names))
            else:
                placement = choose.choice(state.placements())
                outcome = await service.play(where, who, Score(who.user_id, placement.box))
        report(outcome.rows, where.channel_id, outcome.game.version)

    while True:
        await asyncio.gather(*(step(c) for c in range(CHANNELS)))


def report(rows: tuple[object, ...], channel: str, version: int) -> None:
    lines = [f"ACK {r.id} {r.hash}" for r in rows]  # type: ignore[attr-defined]
    lines.append(f"DONE {channel} {version}")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
