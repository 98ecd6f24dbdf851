"""Stopping the bot: the command in flight finishes and is answered before the gateway and
the database close; what arrives after the stop began is told to come back."""

from __future__ import annotations

import asyncio
import sqlite3

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of


async def test_a_stop_waits_for_the_command_in_flight(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Gypsy", "!start solo", expect="your turn")
    holder = sqlite3.connect(table.db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the file: the roll must wait
    start = len(table.fake.messages)
    table.dice.push([3, 3, 3, 5, 6])
    await table.fake.say("Gypsy", "!roll")
    for _ in range(3000):  # until the bot is handling it (it waits on the file; a busy machine)
        if table.bot._in_flight:
            break
        await asyncio.sleep(0.01)
    assert table.bot._in_flight, "the roll never reached the bot"
    stopping = asyncio.create_task(table.bot.close())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not stopping.done()  # waiting for the roll, not cutting it off
    holder.execute("ROLLBACK")
    holder.close()
    await asyncio.wait_for(stopping, 15)
    answers = [text_of(m) for m in table.fake.messages[start:]]
    assert any("Gypsy rolled d1,d2,d3,d4,d5 and got" in a for a in answers), answers
    assert table.bot.db is None  # and then the database was closed


async def test_commands_that_arrive_while_stopping_are_told_to_come_back_and_it_stays(
    table: Table,
) -> None:
    """Two commands from one person queued behind the one in flight when the stop begins: each
    is told "back in a moment", once, and the answers stay (nothing removes them); the roll
    in flight is applied and its message posted."""
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Gypsy", "!start solo", expect="your turn")
    holder = sqlite3.connect(table.db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the roll in flight waits on the file
    start = len(table.fake.messages)
    table.dice.push([3, 3, 3, 5, 6])
    await table.fake.say("Gypsy", "!roll")
    for _ in range(500):
        if table.bot._in_flight:
            break
        await asyncio.sleep(0.01)
    await table.fake.say("Gypsy", "!roll 1", pace=0.5)
    await table.fake.say("Gypsy", "!card", pace=0.5)
    for _ in range(500):  # both queued behind the roll
        if len(table.bot._in_flight) >= 3:
            break
        await asyncio.sleep(0.01)
    stopping = asyncio.create_task(table.bot.close())
    for _ in range(20):
        await asyncio.sleep(0)
    holder.execute("ROLLBACK")
    holder.close()
    await asyncio.wait_for(stopping, 15)
    answers = [m for m in table.fake.messages[start:] if "back in a moment" in text_of(m)]
    assert len(answers) == 2
    assert not any(m.get("_deleted") is not None for m in answers)
    rolled = [m for m in table.fake.messages[start:] if "Gypsy rolled" in text_of(m)]
    assert len(rolled) == 1
