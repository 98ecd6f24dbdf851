"""Fixtures for end-to-end tests: the fake Discord and the real bot connected to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
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
    User(1_010, "Manager", manages_messages=True),  # Manage Messages, not the role
    User(1_011, "RoleMod", moderator=True, manages_messages=False),  # the role alone
]
_HANDLED = (discord.InteractionType.application_command, discord.InteractionType.component)


class TrackedBot(RollkeeperBot):
    """The real bot, counting the events it is still handling, so tests wait until it is done
    (an event) instead of until it has been quiet for a while (a clock)."""

    def __init__(self, config: Config, *args: Any, **kwargs: Any) -> None:
        if "board_seconds" not in config.model_fields_set:  # tests play at machine speed
            config = config.model_copy(update={"board_seconds": 0})
        super().__init__(config, *args, **kwargs)
        self.handling = 0
        self.changed = asyncio.Event()

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        if event in ("message", "raw_message_edit", "raw_message_delete") or (
            event == "interaction" and args[0].type in _HANDLED
        ):
            self.handling += 1
        super().dispatch(event, *args, **kwargs)
        self.changed.set()

    def sent(self) -> None:
        self.changed.set()

    def _handled(self) -> None:
        self.handling -= 1
        self.changed.set()

    async def on_message(self, message: discord.Message) -> None:
        try:
            await super().on_message(message)
        finally:
            self._handled()

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        try:
            await super().on_raw_message_edit(payload)
        finally:
            self._handled()

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        try:
            await super().on_raw_message_delete(payload)
        finally:
            self._handled()

    async def handle_interaction(
        self, interaction: discord.Interaction[Any], work: Any, **how: Any
    ) -> None:
        try:
            await super().handle_interaction(interaction, work, **how)
        finally:
            self._handled()


@dataclass
class Table:
    """The fake server, the bot in it, and the dice the bot will roll."""

    fake: FakeDiscord
    bot: TrackedBot
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
        await self.idle()
        return self.fake.messages[start:]

    async def idle(self, timeout: float = 10) -> None:
        """Wait until the bot has received every event the fake sent, finished handling each
        and posted what its outbox holds (its replies are then all in `fake.messages`)."""

        async def done() -> None:
            while True:
                self.bot.changed.clear()
                ws = self.bot.ws
                received = ws is not None and ws.sequence == self.fake._seq
                sender = self.bot.sender
                posting = sender is not None and sender.busy()
                boards = self.bot.boards
                drawing = boards is not None and boards.busy()
                if received and self.bot.handling == 0 and not posting and not drawing:
                    return
                await self.bot.changed.wait()

        try:
            await asyncio.wait_for(done(), timeout)
        except TimeoutError:
            self.check_alive()
            raise AssertionError(f"the bot is still handling {self.bot.handling} events") from None

    async def restart(self) -> None:
        """Stop the bot and start a new process-like instance on the same database."""
        await stop_bot(self.bot, self.task)
        self.bot, self.task = await start_bot(
            self.fake, self.config, self.db_path, self.dice, self.clock
        )


async def start_bot(
    fake: FakeDiscord, config: Config, db_path: Path, dice: QueueDice | None, clock: FakeClock
) -> tuple[TrackedBot, asyncio.Task[None]]:
    """The bot on `fake`; `dice=None` draws every die from the game's committed seed, as in
    production (scripted dice make no commitment)."""
    bot = TrackedBot(config, db_path, dice=dice, clock=clock, guild_ready_timeout=0.05)
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


def _edit_held(refusal: dict[str, Any]) -> bool:
    """An edit of a message held back by the per-channel limit (waited out, then made)."""
    route = str(refusal.get("route", ""))
    return refusal.get("status") == 429 and route.startswith("PATCH /channels/")


@pytest.fixture
async def table(db_path: Path, dice: QueueDice, config: Config) -> AsyncIterator[Table]:
    """The bot on the fake Discord, over the test's database (on PostgreSQL too in a test
    marked `backends`)."""
    fake = FakeDiscord(PLAYERS)
    await fake.start()
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
        # A live board's edit held back (429 on an edit) is waited out by discord.py and then
        # made with the latest state (tests/e2e/test_boards.py pins that). Real Discord names
        # each bucket's remaining calls in its answers' headers, and discord.py waits before
        # the sixth edit in five seconds; the fake sends no such headers, so that same wait
        # shows here as one 429. Any other refusal fails the test.
        refused = [r for r in fake.refused if r["code"] != 50007 and not _edit_held(r)]
        assert not refused, f"Discord would have refused: {refused}"
    finally:
        await stop_bot(table.bot, table.task)
        await fake.stop()
