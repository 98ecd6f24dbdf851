"""A server's own settings through Discord, typed and slash: where its daily checkpoint is
posted (`mod checkpoints`, the bot-wide channel by default), and the game's log head in every
roll message's footer (`mod set heads on`), a head `audit verify --head` accepts."""

from __future__ import annotations

import asyncio
import re

import pytest

from bot.config import Config
from storage.audit import parse_head, verify_file
from tests.e2e.conftest import Table, start_bot, stop_bot
from tests.e2e.fakediscord import CHANNEL, MOD_ROLE, OTHER_CHANNEL, text_of

HEAD = re.compile(r"Head (g\d+#\d+:[0-9a-f]{16})")


@pytest.fixture
def config() -> Config:
    return Config(moderator_role=str(MOD_ROLE), checkpoint_channel=str(CHANNEL))


async def checkpoint_posted(table: Table, number: int) -> dict[str, object]:
    assert table.bot.timekeeper is not None
    await table.bot.timekeeper.tick()
    for _ in range(200):
        await table.fake.settle(quiet=0.02)
        found = [m for m in table.fake.messages if f"Daily checkpoint {number}" in text_of(m)]
        if found:
            return found[0]
    raise AssertionError("the checkpoint was never posted")


async def test_a_server_posts_its_checkpoints_where_its_moderator_says(table: Table) -> None:
    (shown,) = await table.send("Mod", "!mod checkpoints")
    assert f"go to the bot's channel, <#{CHANNEL}>" in text_of(shown)
    refused = await table.send("Gypsy", f"!mod checkpoints <#{OTHER_CHANNEL}>")
    assert "Only moderators" in text_of(refused[0])
    await table.fake.slash("Mod", "mod checkpoints", where=f"<#{OTHER_CHANNEL}>")
    told = await table.fake.wait_for(lambda m: "set where this server's daily" in text_of(m))
    assert f"<#{OTHER_CHANNEL}>" in text_of(told) and told["channel_id"] == str(CHANNEL)
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Gypsy", "!start solo", expect="your turn")
    table.dice.push([3, 3, 3, 5, 6])
    await table.send("Gypsy", "!roll", expect="rolled")
    point = await checkpoint_posted(table, 1)
    assert point["channel_id"] == str(OTHER_CHANNEL)  # the server's, not the bot's
    # Read back at start-up from the server's channel: nothing to tell.
    await stop_bot(table.bot, table.task)
    table.bot, table.task = await start_bot(
        table.fake, table.config, table.db_path, table.dice, table.clock
    )
    assert table.bot.checkpoints is not None
    await table.bot.checkpoints.checked.wait()
    await table.fake.settle(quiet=0.05)
    assert not [m for m in table.fake.messages if "checkpoints disagree" in text_of(m)]
    # Typed, back to the bot's default: the next day's checkpoint goes there.
    (back,) = await table.send("Mod", "!mod checkpoints default")
    assert "the bot's default channel" in text_of(back)
    table.clock.advance(days=1)
    table.dice.push([1, 2, 3, 4, 5])
    await table.send("Gypsy", "!roll d1", expect="rolled")
    assert (await checkpoint_posted(table, 2))["channel_id"] == str(CHANNEL)
    (wrong,) = await table.send("Mod", "!mod checkpoints the-vault")
    assert "Try `!mod checkpoints here`" in text_of(wrong)
    report = await asyncio.to_thread(verify_file, table.db_path)
    assert report.ok, report.problem  # both changes are rows of the server's chain


async def test_roll_footers_show_the_head_that_audit_verify_accepts(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Gypsy", "!start solo", expect="your turn")
    table.dice.push([1, 2, 3, 4, 5])
    (plain,) = [m for m in await table.send("Gypsy", "!roll", expect="rolled")]
    assert not HEAD.search(text_of(plain))  # off by default
    (on,) = await table.send("Mod", "!mod set heads on")
    assert "set `heads` to on" in text_of(on)
    heads = []
    for faces, line in (([6, 6], "!roll d1,d2"), ([5], "!roll d3")):
        table.dice.push(faces)
        rolled = [m for m in await table.send("Gypsy", line, expect="rolled")]
        (found,) = [HEAD.search(text_of(m)) for m in rolled if HEAD.search(text_of(m))]
        assert found is not None
        heads.append(found[1])
    assert heads[0] != heads[1]  # each roll moves the head
    for head in heads:
        report = await asyncio.to_thread(verify_file, table.db_path, parse_head(head))
        assert report.ok, report.problem
    forged = heads[-1][:-1] + ("0" if heads[-1][-1] != "0" else "1")
    refused = await asyncio.to_thread(verify_file, table.db_path, parse_head(forged))
    assert refused.problem is not None and "was rewritten" in str(refused.problem)
    await table.fake.slash("Mod", "mod set", option="heads", value="off")
    await table.fake.wait_for(lambda m: "set `heads` to off" in text_of(m))
    await table.send("Gypsy", "!score chance", expect="scored")
    table.dice.push([2, 2, 2, 2, 2])
    rolled = await table.send("Gypsy", "!roll", expect="rolled")
    assert not [m for m in rolled if HEAD.search(text_of(m))]
