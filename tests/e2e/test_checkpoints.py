"""The daily checkpoint posted in its channel, read back at start-up: when the database no
longer holds what was posted (rewritten behind the bot's back), or a checkpoint's message is
gone from the channel, the moderators are told, their role pinged."""

from __future__ import annotations

import pytest

from bot.config import Config
from storage.checkpoints import leaf_hash, tree_root
from tests.e2e.conftest import Table, start_bot, stop_bot
from tests.e2e.fakediscord import CHANNEL, MOD_ROLE, text_of
from tests.storage.forge import bodies, raw, write_chain


@pytest.fixture
def config() -> Config:
    return Config(moderator_role=str(MOD_ROLE), checkpoint_channel=str(CHANNEL))


async def restart(table: Table) -> None:
    await stop_bot(table.bot, table.task)
    table.bot, table.task = await start_bot(
        table.fake, table.config, table.db_path, table.dice, table.clock
    )
    assert table.bot.checkpoints is not None
    await table.bot.checkpoints.checked.wait()  # it compared at start-up
    await table.fake.settle(quiet=0.05)


async def posted_checkpoint(table: Table) -> dict[str, object]:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Gypsy", "!start solo", expect="your turn")
    table.dice.push([3, 3, 3, 5, 6])
    await table.send("Gypsy", "!roll", expect="rolled")
    assert table.bot.timekeeper is not None
    await table.bot.timekeeper.tick()  # (its own ticks may have made it already: once a day)
    for _ in range(200):
        await table.fake.settle(quiet=0.02)
        found = [m for m in table.fake.messages if "Daily checkpoint 1" in text_of(m)]
        if found:
            return found[0]
    raise AssertionError("the checkpoint was never posted")


def alerts(table: Table) -> list[str]:
    return [text_of(m) for m in table.fake.messages if "posted checkpoints disagree" in text_of(m)]


async def test_an_honest_restart_says_nothing(table: Table) -> None:
    await posted_checkpoint(table)
    await restart(table)
    assert alerts(table) == []


async def test_a_rewritten_log_and_a_vanished_message_are_told(table: Table) -> None:
    message = await posted_checkpoint(table)
    await stop_bot(table.bot, table.task)
    conn = raw(table.db_path)  # the checkpoint rewritten (and the server's chain re-hashed)
    server = bodies(conn, "s1000")
    point = server[-1]
    point["data"]["leaves"] = [["g1", 1, "0" * 64]]
    point["data"]["root"] = tree_root([leaf_hash(("g1", 1, "0" * 64))]).hex()
    write_chain(conn, "s1000", server)
    conn.close()
    table.bot, table.task = await start_bot(
        table.fake, table.config, table.db_path, table.dice, table.clock
    )
    assert table.bot.checkpoints is not None
    await table.bot.checkpoints.checked.wait()
    await table.fake.settle(quiet=0.05)
    (told,) = alerts(table)
    assert told.startswith(f"⚠️ <@&{MOD_ROLE}>: the roll log and its posted checkpoints disagree")
    assert "is not the one posted" in told and "the log was rewritten" in told

    await table.fake.delete(message)  # and then the checkpoint's message is deleted
    await restart(table)
    gone = alerts(table)[-1]
    assert (
        "checkpoint 1 (s1000#" in gone and "its message is gone from the checkpoint channel" in gone
    )
