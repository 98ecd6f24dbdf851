"""Direct messages with the bot (issue 24, item 20): the commands that need a server's channel
(opening, joining and playing games, moderation, reviews) are not offered there, typed or
slash; the ones that are about the player themselves (time zone, quiet hours, away, their
games), the rules, help and free rolls work there as in a channel."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of

IN_DMS = {"roll", "help", "rules", "mygames", "tz", "quiet", "dm", "headsup", "away", "back"}
REFUSED = (
    "`!new` works in a server's channel, where the games are. Here in direct messages: "
    "`!roll`, `!mygames`, `!tz`, `!quiet`, `!dm`, `!headsup`, `!away`, `!back`, `!help`, "
    "`!rules`. "
    "Try `!help`."
)


async def dm_answer(table: Table, name: str, text: str) -> str:
    """`name` writes `text` to the bot in direct messages; the bot's answer there."""
    fake = table.fake
    start = len(fake.messages)
    await fake.say_dm(name, text)
    await table.idle()
    channel = str(fake.dm_channels[fake.user(name).id])
    (answer,) = [m for m in fake.messages[start:] if m["channel_id"] == channel]
    return text_of(answer)


async def test_discord_offers_only_the_direct_message_commands_there(table: Table) -> None:
    offered = {c["name"] for c in table.fake.commands if table.fake.offered_in_dms(c["name"])}
    assert offered == IN_DMS
    registered = {c["name"]: c for c in table.fake.commands}
    assert registered["new"]["contexts"] == [0] and registered["new"]["dm_permission"] is False
    assert registered["mod"]["contexts"] == [0]
    assert registered["tz"]["contexts"] == [0, 1]
    with pytest.raises(AssertionError, match="does not offer /new in direct messages"):
        await table.fake.slash_dm("Gypsy", "new", variant="classic")


async def test_a_game_command_typed_in_dms_says_where_it_works(table: Table) -> None:
    assert await dm_answer(table, "Gypsy", "!new classic") == REFUSED
    assert (await dm_answer(table, "Gypsy", "!join")).startswith(
        "`!join` works in a server's channel, where the games are."
    )
    assert (await dm_answer(table, "Mod", "!mod end tidy")).startswith(
        "`!mod end` works in a server's channel, where the games are."
    )
    # nothing was opened anywhere: the server's channel has no game
    games = await table.send("Gypsy", "!games")
    assert text_of(games[-1]) == "No games in this server yet. `!new classic` starts one."


async def test_the_player_commands_work_in_dms_typed_and_slash(table: Table) -> None:
    assert "Europe/Berlin" in await dm_answer(table, "Gypsy", "!tz Europe/Berlin")
    assert "!new" in await dm_answer(table, "Gypsy", "!help")
    assert await dm_answer(table, "Second", "!mygames") == (
        "You're not in any game. `!new <variant>` in a server's channel opens one."
    )
    table.dice.push([4, 2])
    assert "Gypsy rolled 2d6 and got D6 = 4, D6 = 2" in await dm_answer(table, "Gypsy", "!r 2d6")
    fake = table.fake
    replies = len(fake.interaction_replies)
    await fake.slash_dm("Gypsy", "tz", zone="Asia/Tokyo")
    async with asyncio.timeout(10):
        while len(fake.interaction_replies) == replies:
            await asyncio.sleep(0.01)
    await table.idle()
    assert "Asia/Tokyo" in text_of(fake.interaction_replies[replies]["data"])
