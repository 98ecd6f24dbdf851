"""Fixtures for end-to-end tests: the fake Discord and the real bot connected to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.discord_bot import RollkeeperBot
from tests.conftest import FakeClock, QueueDice
from tests.e2e.fakediscord import CHANNEL, FakeDiscord, User, text_of

PLAYERS = [
    User(1_001, "Gypsy"),
    User(1_002, "Second"),
    User(1_003, "Third"),
    User(1_009, "Mod", moderator=True),
    User(1_004, "Mallory", display="[Free Nitro](https://evil.test)"),
]


@dataclass
class Table:
    """The fake server, the bot in it, and the dice the bot will roll."""

    fake: FakeDiscord
    bot: RollkeeperBot
    dice: QueueDice
    db_path: Path
    config: Config
    task: asyncio.Task[None]
    clock: FakeClock

    def check_alive(self) -> None:
        """Fail with the bot's own error if its gateway task died."""
        if self.task.done() and not self.task.cancelled() and self.task.exception():
            raise AssertionError("the bot's gateway task died") from self.task.exception()

    async def send(
        self, user: str, text: str, expect: str | None = None, channel: int = CHANNEL
    ) -> list[dict[str, Any]]:
        """Post as `user`; wait for the bot's answer (one containing `expect`, if given)."""
        start = len(self.fake.messages)
        await self.fake.say(user, text, channel)
        return await self.answers(start, expect)

    async def answers(self, start: int, expect: str | None = None) -> list[dict[str, Any]]:
        """The bot's messages from index `start`, once one matches and the bot goes quiet."""
        try:
            await self.fake.wait_for(
                lambda m: expect is None or expect in text_of(m), after=start, timeout=10
            )
        except TimeoutError:
            self.check_alive()
            got = [text_of(m)[:200] for m in self.fake.messages[start:]]
            raise AssertionError(f"no answer containing {expect!r}; got {got}") from None
        await self.fake.settle(quiet=0.03)
        return self.fake.messages[start:]

    async def restart(self) -> None:
        """Stop the bot and start a new process-like instance on the same database."""
        await stop_bot(self.bot, self.task)
        self.bot, self.task = await start_bot(
            self.fake, self.config, self.db_path, self.dice, self.clock
        )


async def start_bot(
    fake: FakeDiscord, config: Config, db_path: Path, dice: QueueDice | None, clock: FakeClock
) -> tuple[RollkeeperBot, asyncio.Task[None]]:
    """The bot on `fake`; `dice=None` draws every die from the game's committed seed, as in
    production (scripted dice make no commitment)."""
    bot = RollkeeperBot(config, db_path, dice=dice, clock=clock, guild_ready_timeout=0.05)
    await bot.login("fake-token")
    task = asyncio.create_task(bot.connect(reconnect=False))
    await asyncio.wait_for(bot.wait_until_ready(), 10)
    return bot, task


async def stop_bot(bot: RollkeeperBot, task: asyncio.Task[None]) -> None:
    await bot.close()
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):  # closing: any end is fine
        await task


@pytest.fixture
def config() -> Config:
    return Config(moderator_role="Dice Moderator")


@pytest.fixture
async def table(tmp_path: Path, dice: QueueDice, config: Config) -> AsyncIterator[Table]:
    fake = FakeDiscord(PLAYERS)
    await fake.start()
    db_path = tmp_path / "bot.sqlite3"
    clock = FakeClock()
    bot, task = await start_bot(fake, config, db_path, dice, clock)
    table = Table(fake, bot, dice, db_path, config, task, clock)
    try:
        yield table
        table.check_alive()
        await fake.settle(quiet=0.03)
        # The stricter fake refuses what Discord refuses; a test that made the bot send anything
        # Discord would refuse (too long, too fast, too late, twice) fails here.
        # (A user's closed direct messages, code 50007, are their choice, not the bot's fault.)
        refused = [r for r in fake.refused if r["code"] != 50007]
        assert not refused, f"Discord would have refused: {refused}"
    finally:
        await stop_bot(table.bot, table.task)
        await fake.stop()
