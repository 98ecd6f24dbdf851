"""REST calls per action: what each typed command, button press and slash command costs in
calls to Discord (the fake counts every call the real discord.py client makes).

    python -m tests.bench.rest_calls

A two-player classic game, three turns each way: typed (`!roll`, `!roll d1,d2`, `!score`),
by buttons (Roll, mark a die, Reroll, the score menu) and by slash commands (`/roll`, `/keep`,
`/score`). Prints the calls per action and what they were. Works against any version of the
bot that the e2e fixtures start (it waits for the fake to go quiet, nothing newer).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot.config import Config
from tests.conftest import FakeClock, QueueDice
from tests.e2e.conftest import PLAYERS, start_bot, stop_bot
from tests.e2e.fakediscord import FakeDiscord, custom_ids

QUIET = 0.15  # seconds without a call: the bot is done with the action


def newest(fake: FakeDiscord, prefix: str) -> dict[str, Any]:
    return next(
        m for m in reversed(fake.messages) if any(c.startswith(prefix) for c in custom_ids(m))
    )


def menu(message: dict[str, Any]) -> tuple[str, str]:
    for row in message["components"]:
        for c in row["components"]:
            if c.get("custom_id", "").startswith("rk:s:") and c.get("options"):
                return c["custom_id"], c["options"][-1]["value"]
    raise AssertionError("no score menu")


class Counting:
    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.calls: dict[str, list[int]] = {}
        self.routes: dict[str, Counter[str]] = {}

    async def count(self, name: str, act: Callable[[], Awaitable[Any]]) -> None:
        await self.fake.settle(quiet=QUIET)
        start = len(self.fake.calls)
        await act()
        await self.fake.settle(quiet=QUIET)
        made = self.fake.calls[start:]
        self.calls.setdefault(name, []).append(len(made))
        routes = self.routes.setdefault(name, Counter())
        for route in made:
            routes[" ".join(p if not p.isdigit() and "token-" not in p else "…" for p in
                            route.replace("/", " / ").split())] += 1  # fmt: skip


async def typed_turn(c: Counting, fake: FakeDiscord, dice: QueueDice, who: str, turn: int) -> None:
    dice.push([1, 2, 3, 4, 5, 6, 6])
    await c.count("typed roll", lambda: fake.say(who, "!roll"))
    await c.count("typed reroll", lambda: fake.say(who, "!roll d1,d2"))
    box = ["chance", "sixes", "fives"][turn]
    await c.count("typed score (and the next turn)", lambda: fake.say(who, f"!score {box}"))


async def button_turn(c: Counting, fake: FakeDiscord, dice: QueueDice, who: str) -> None:
    dice.push([1, 2, 3, 4, 5, 6])
    turn = newest(fake, "rk:o:")
    roll = next(x for x in custom_ids(turn) if x.startswith("rk:o:"))
    await c.count("button Roll", lambda: fake.click(who, turn, roll))
    rolled = newest(fake, "rk:t:")
    toggle = next(x for x in custom_ids(rolled) if x.startswith("rk:t:"))
    await c.count("button mark a die", lambda: fake.click(who, rolled, toggle))
    reroll = next(x for x in custom_ids(fake.find(rolled["id"])) if x.startswith("rk:r:"))
    await c.count("button Reroll", lambda: fake.click(who, rolled, reroll))
    again = newest(fake, "rk:s:")
    custom, value = menu(again)
    await c.count(
        "button score menu (and the next turn)", lambda: fake.choose(who, again, custom, value)
    )


async def slash_turn(c: Counting, fake: FakeDiscord, dice: QueueDice, who: str, turn: int) -> None:
    dice.push([1, 2, 3, 4, 5, 6])
    await c.count("slash /roll", lambda: fake.slash(who, "roll"))
    await c.count("slash /keep", lambda: fake.slash(who, "keep", dice="d2,d3,d4,d5"))
    box = ["ones", "twos", "threes"][turn]
    await c.count("slash /score (and the next turn)", lambda: fake.slash(who, "score", box=box))


async def main() -> None:
    fake = FakeDiscord(PLAYERS)
    await fake.start()
    dice = QueueDice()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(moderator_role="Dice Moderator")
        bot, task = await start_bot(fake, config, Path(tmp) / "bench.sqlite3", dice, FakeClock())
        try:
            c = Counting(fake)
            await fake.say("Gypsy", "!new classic order=join")
            await fake.settle(quiet=QUIET)
            await fake.say("Second", "!join")
            await fake.settle(quiet=QUIET)
            await c.count("typed start", lambda: fake.say("Gypsy", "!start"))
            for turn in range(3):
                await typed_turn(c, fake, dice, "Gypsy", turn)
                await button_turn(c, fake, dice, "Second")
            for turn in range(3):
                await slash_turn(c, fake, dice, "Gypsy", turn)
                await button_turn(c, fake, dice, "Second")
        finally:
            await stop_bot(bot, task)
            await fake.stop()
    print(f"{'action':40} calls per action   (what they were)")
    for name, counts in c.calls.items():
        mean = sum(counts) / len(counts)
        routes = ", ".join(f"{n / len(counts):g}× {r}" for r, n in c.routes[name].most_common())
        print(f"{name:40} {mean:5.2f}   ({routes})")
    print(f"refused by the fake: {len(fake.refused)}")


if __name__ == "__main__":
    asyncio.run(main())
