"""The rules in the bot and a game of one, through the real discord.py client: `/rules`,
`!rules`, `!help painted`, and `/start solo`."""

from __future__ import annotations

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of


async def test_rules_by_slash_command_and_typed(table: Table) -> None:
    fake = table.fake
    start = len(fake.messages)
    await fake.slash("Gypsy", "rules", variant="painted")
    (rules,) = await table.answers(start, "Painted Yahtzee: the rules")
    said = text_of(rules)
    assert "Painted house" in said and "Joker (free)" in said
    assert len(said.splitlines()) <= 25
    assert rules["flags"] & 64, "only the asker sees a variant's rules (as /help)"
    (via_help,) = await table.send("Gypsy", "!help painted", expect="the rules")
    assert "Ones to Sixes" in text_of(via_help)
    dm = str(fake.dm_channels[fake.user("Gypsy").id])
    assert via_help["channel_id"] == dm, "typed: by direct message, as `!help`"
    await table.send("Gypsy", "!new classic joker=none order=join", expect="is in")
    (here,) = await table.send("Gypsy", "!rules", expect="the rules of this game")
    assert "No joker" in text_of(here) and here["channel_id"] == dm


async def test_a_game_of_one_starts_when_asked_twice(table: Table) -> None:
    fake = table.fake
    await table.send("Gypsy", "!new pyz order=join", expect="is in")
    start = len(fake.messages)
    await fake.slash("Gypsy", "start")
    (asked,) = await table.answers(start, "only player")
    assert asked["flags"] & 64 and "`!start solo`" in text_of(asked)
    start = len(fake.messages)
    await fake.slash("Gypsy", "start", solo=True)
    await table.answers(start, "your turn")
